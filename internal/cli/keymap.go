package cli

import (
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/tui"
)

// consoleKeyMap is the default key map with the config file's [keys]
// overrides applied. Errors wrap core.ErrInvalid (exit 2) and name the
// action or key.
func consoleKeyMap(overrides map[string][]string) (tui.KeyMap, error) {
	km := tui.DefaultKeyMap()
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
