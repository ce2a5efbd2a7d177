package main

import (
	"charm.land/bubbles/v2/key"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/tui"
)

// defaultKeyMap is the console's key bindings (SPEC §9). Every action may be
// rebound in the config file's [keys] table by the name given in the
// comment (tui.ActionNames lists them).
//
// There is no j/k navigation: k kills a run (SPEC §9), so moving is the
// arrow keys (and ctrl+n / ctrl+p).
func defaultKeyMap() tui.KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return tui.KeyMap{
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
		Confirm:     b("enter/y", "confirm", "enter", "y"),        // confirm (in dialogs)
		Left:        b("←", "left", "left", "h"),                  // left (scope picker)
		Right:       b("→", "right", "right"),                     // right (scope picker)
		Help:        b("?", "help", "?"),                          // help
		Quit:        b("q", "quit", "q"),                          // quit (ctrl+c always quits)
	}
}

// consoleKeyMap is the default key map with the config file's [keys]
// overrides applied. Errors wrap core.ErrInvalid (exit 2) and name the
// action or key.
func consoleKeyMap(overrides map[string][]string) (tui.KeyMap, error) {
	km := defaultKeyMap()
	if len(overrides) == 0 {
		return km, nil
	}
	if err := km.Rebind(overrides); err != nil {
		return km, core.Invalidf("%v", err)
	}
	return km, nil
}

// keyOverrides converts the config's [keys] table.
func keyOverrides(cfg *Config) map[string][]string {
	if cfg == nil || len(cfg.Keys) == 0 {
		return nil
	}
	out := make(map[string][]string, len(cfg.Keys))
	for k, v := range cfg.Keys {
		out[k] = []string(v)
	}
	return out
}
