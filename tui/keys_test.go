package tui

import (
	"reflect"
	"testing"
)

// TestKeyActionsCoverKeyMap: every binding of a KeyMap has exactly one
// action name (Binding returns a pointer to that very field), so a field
// added without its row in keyActions cannot be rebound silently.
func TestKeyActionsCoverKeyMap(t *testing.T) {
	km := DefaultKeyMap()
	v := reflect.ValueOf(&km).Elem()
	named := map[uintptr]string{}
	for _, n := range ActionNames() {
		b := km.Binding(n)
		if b == nil {
			t.Fatalf("Binding(%q) = nil", n)
		}
		p := reflect.ValueOf(b).Pointer()
		if other, dup := named[p]; dup {
			t.Errorf("actions %q and %q name the same binding", other, n)
		}
		named[p] = n
	}
	for i := range v.NumField() {
		f := v.Field(i)
		if _, ok := named[f.Addr().Pointer()]; !ok {
			t.Errorf("KeyMap.%s has no action name", v.Type().Field(i).Name)
		}
	}
	if km.Binding("no_such_action") != nil {
		t.Error("an unknown action has a binding")
	}
}
