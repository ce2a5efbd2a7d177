package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/tui"
)

func TestDefaultKeyMapIsComplete(t *testing.T) {
	km := tui.DefaultKeyMap()
	if err := km.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, a := range tui.ActionNames() {
		b := km.Binding(a)
		if len(b.Keys()) == 0 || b.Help().Key == "" || b.Help().Desc == "" {
			t.Errorf("action %s: keys %v help %+v", a, b.Keys(), b.Help())
		}
	}
	// README "The console" keys.
	for action, key := range map[string]string{"tasks": "1", "alerts": "5", "next_pane": "tab", "detail": "enter",
		"log": "l", "filter": "/", "back": "esc", "approve": "a", "deny": "d", "cancel": "c", "kill": "k",
		"reap": "r", "maintenance": "m", "ack": "x", "ack_all": "X", "help": "?", "quit": "q"} {
		if ks := km.Binding(action).Keys(); ks[0] != key {
			t.Errorf("%s bound to %v, want %s", action, ks, key)
		}
	}
}

func TestKeyOverrides(t *testing.T) {
	km, err := consoleKeyMap(map[string][]string{"quit": {"Q", "ctrl+q"}, "up": {"up", "k"}, "kill": {"K"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(km.Quit.Keys(), ","); got != "Q,ctrl+q" || km.Quit.Help().Key != "Q/ctrl+q" || km.Quit.Help().Desc != "quit" {
		t.Fatalf("quit = %v %+v", got, km.Quit.Help())
	}
	for _, c := range []struct {
		over map[string][]string
		want string
	}{
		{map[string][]string{"launch": {"l"}}, `unknown action "launch"`},
		{map[string][]string{"quit": {}}, `action "quit" has no keys`},
		{map[string][]string{"approve": {"c"}}, `"c" is bound to both`},
		{map[string][]string{"up": {"k"}}, `"k" is bound to both`}, // k is kill
	} {
		_, err := consoleKeyMap(c.over)
		if err == nil || !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q (ErrInvalid)", c.over, err, c.want)
		}
	}
}
