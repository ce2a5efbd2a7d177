package tui

import (
	"fmt"
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
)

// KeyMap is every key binding of the console. DefaultKeyMap gives the
// defaults; the config file may rebind any action by its name (see
// ActionNames and Rebind).
type KeyMap struct {
	// Navigation.
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	// Panes.
	NextPane, PrevPane                   key.Binding
	Tasks, Runs, Approvals, Jobs, Alerts key.Binding
	// Views.
	Detail, Info, Log, Filter, Sort, Back key.Binding
	// Actions (removed by --readonly).
	Approve, Deny, Cancel, Kill, Reap, Maintenance key.Binding
	// Alerts: mark the selected one read, mark every unread one read.
	Ack, AckAll key.Binding
	// Dialogs.
	Confirm, Left, Right key.Binding
	// General.
	Help, Quit key.Binding
}

// DefaultKeyMap is the console's key bindings (README "The console"). Every action may be
// rebound in the config file's [keys] table by the name given in the
// comment (tui.ActionNames lists them).
//
// There is no j/k navigation: k kills a run (README "The console"), so moving is the
// arrow keys (and ctrl+n / ctrl+p).
func DefaultKeyMap() KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return KeyMap{
		Up:          b("↑", "up", "up", "ctrl+p"),                 // up
		Down:        b("↓", "down", "down", "ctrl+n"),             // down
		PageUp:      b("pgup", "page up", "pgup"),                 // page_up
		PageDown:    b("pgdn", "page down", "pgdown"),             // page_down
		Top:         b("home/g", "top", "home", "g"),              // top
		Bottom:      b("end/G", "bottom", "end", "G"),             // bottom
		NextPane:    b("tab", "next pane", "tab"),                 // next_pane
		PrevPane:    b("shift+tab", "previous pane", "shift+tab"), // prev_pane
		Tasks:       b("1", "tasks", "1"),                         // tasks
		Runs:        b("2", "runs", "2"),                          // runs
		Approvals:   b("3", "approvals", "3"),                     // approvals
		Jobs:        b("4", "jobs", "4"),                          // jobs
		Alerts:      b("5", "alerts", "5"),                        // alerts
		Detail:      b("enter", "detail", "enter"),                // detail (jobs: the log view)
		Info:        b("i", "detail", "i"),                        // info (detail of any row, jobs too)
		Log:         b("l", "log", "l"),                           // log
		Filter:      b("/", "filter", "/"),                        // filter
		Sort:        b("s", "sort", "s"),                          // sort
		Back:        b("esc", "back", "esc"),                      // back (close, clear the filter)
		Approve:     b("a", "approve", "a"),                       // approve
		Deny:        b("d", "deny", "d"),                          // deny
		Cancel:      b("c", "cancel", "c"),                        // cancel
		Kill:        b("k", "kill run", "k"),                      // kill
		Reap:        b("r", "reap session jobs", "r"),             // reap
		Maintenance: b("m", "maintenance", "m"),                   // maintenance
		Ack:         b("x", "mark read", "x"),                     // ack (an alert)
		AckAll:      b("X", "mark all read", "X"),                 // ack_all (every unread alert, confirmed)
		Confirm:     b("enter/y", "confirm", "enter", "y"),        // confirm (in dialogs)
		Left:        b("←", "left", "left", "h"),                  // left (scope picker)
		Right:       b("→", "right", "right"),                     // right (scope picker)
		Help:        b("?", "help", "?"),                          // help
		Quit:        b("q", "quit", "q"),                          // quit (ctrl+c always quits)
	}
}

// keyActions are the bindable actions in help order: each one's name in the
// config file's [keys] table and its binding's place in a KeyMap.
var keyActions = [...]struct {
	name string
	of   func(*KeyMap) *key.Binding
}{
	{"up", func(k *KeyMap) *key.Binding { return &k.Up }},
	{"down", func(k *KeyMap) *key.Binding { return &k.Down }},
	{"page_up", func(k *KeyMap) *key.Binding { return &k.PageUp }},
	{"page_down", func(k *KeyMap) *key.Binding { return &k.PageDown }},
	{"top", func(k *KeyMap) *key.Binding { return &k.Top }},
	{"bottom", func(k *KeyMap) *key.Binding { return &k.Bottom }},
	{"next_pane", func(k *KeyMap) *key.Binding { return &k.NextPane }},
	{"prev_pane", func(k *KeyMap) *key.Binding { return &k.PrevPane }},
	{"tasks", func(k *KeyMap) *key.Binding { return &k.Tasks }},
	{"runs", func(k *KeyMap) *key.Binding { return &k.Runs }},
	{"approvals", func(k *KeyMap) *key.Binding { return &k.Approvals }},
	{"jobs", func(k *KeyMap) *key.Binding { return &k.Jobs }},
	{"alerts", func(k *KeyMap) *key.Binding { return &k.Alerts }},
	{"detail", func(k *KeyMap) *key.Binding { return &k.Detail }},
	{"info", func(k *KeyMap) *key.Binding { return &k.Info }},
	{"log", func(k *KeyMap) *key.Binding { return &k.Log }},
	{"filter", func(k *KeyMap) *key.Binding { return &k.Filter }},
	{"sort", func(k *KeyMap) *key.Binding { return &k.Sort }},
	{"back", func(k *KeyMap) *key.Binding { return &k.Back }},
	{"approve", func(k *KeyMap) *key.Binding { return &k.Approve }},
	{"deny", func(k *KeyMap) *key.Binding { return &k.Deny }},
	{"cancel", func(k *KeyMap) *key.Binding { return &k.Cancel }},
	{"kill", func(k *KeyMap) *key.Binding { return &k.Kill }},
	{"reap", func(k *KeyMap) *key.Binding { return &k.Reap }},
	{"maintenance", func(k *KeyMap) *key.Binding { return &k.Maintenance }},
	{"ack", func(k *KeyMap) *key.Binding { return &k.Ack }},
	{"ack_all", func(k *KeyMap) *key.Binding { return &k.AckAll }},
	{"confirm", func(k *KeyMap) *key.Binding { return &k.Confirm }},
	{"left", func(k *KeyMap) *key.Binding { return &k.Left }},
	{"right", func(k *KeyMap) *key.Binding { return &k.Right }},
	{"help", func(k *KeyMap) *key.Binding { return &k.Help }},
	{"quit", func(k *KeyMap) *key.Binding { return &k.Quit }},
}

// actionNames are the names of keyActions, in the same order.
var actionNames = func() []string {
	names := make([]string, len(keyActions))
	for i, a := range keyActions {
		names[i] = a.name
	}
	return names
}()

// ActionNames lists the names of every bindable action (the config file's keys).
func ActionNames() []string { return append([]string(nil), actionNames...) }

// Binding returns the binding of the named action, or nil for an unknown name.
func (k *KeyMap) Binding(action string) *key.Binding {
	for _, a := range keyActions {
		if a.name == action {
			return a.of(k)
		}
	}
	return nil
}

// Rebind replaces the keys of the named actions (the config file's [keys]
// table: action name → keys). The help text shows the new keys and keeps the
// description. Errors name an unknown action, an empty key list, or a key
// bound to two actions that are active at the same time.
func (k *KeyMap) Rebind(overrides map[string][]string) error {
	names := make([]string, 0, len(overrides))
	for n := range overrides {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b := k.Binding(n)
		if b == nil {
			return fmt.Errorf("keys: unknown action %q (want one of: %s)", n, strings.Join(actionNames, ", "))
		}
		keys := overrides[n]
		if len(keys) == 0 {
			return fmt.Errorf("keys: action %q has no keys", n)
		}
		b.SetKeys(keys...)
		b.SetHelp(strings.Join(keys, "/"), b.Help().Desc)
	}
	return k.Validate()
}

// mainActions are the actions matched on the main screen, where one key
// must not mean two things. Dialog keys (confirm, left, right) and back
// overlap with them on purpose: a dialog takes the keys first.
var mainActions = []string{
	"up", "down", "page_up", "page_down", "top", "bottom",
	"next_pane", "prev_pane", "tasks", "runs", "approvals", "jobs", "alerts",
	"detail", "info", "log", "filter", "sort",
	"approve", "deny", "cancel", "kill", "reap", "maintenance", "ack", "ack_all",
	"help", "quit",
}

// Validate reports a key bound to two main-screen actions, or an action with
// no key at all.
func (k *KeyMap) Validate() error {
	seen := map[string]string{}
	for _, n := range actionNames {
		if len(k.Binding(n).Keys()) == 0 {
			return fmt.Errorf("keys: action %q has no keys", n)
		}
	}
	for _, n := range mainActions {
		for _, key := range k.Binding(n).Keys() {
			if other, ok := seen[key]; ok {
				return fmt.Errorf("keys: %q is bound to both %q and %q", key, other, n)
			}
			seen[key] = n
		}
	}
	return nil
}
