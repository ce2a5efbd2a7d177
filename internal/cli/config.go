package cli

// The optional configuration file (docs/contract.md "Files"): $XDG_CONFIG_HOME/clawpit/config.toml
// (else ~/.config/clawpit/config.toml; $CLAWPIT_CONFIG names another file).
// Flags override it. A malformed file is bad input (exit 2) naming the file
// and the key.
//
//	theme = "dark"                 # console theme: dark, light, high-contrast, mono
//
//	[keys]                         # console key overrides: action = key or [keys]
//	quit = ["q", "ctrl+c"]
//	approve = "a"
//
//	[sweep]                        # the sweep flags, same names and syntax (Go durations)
//	grace = "5m"
//	silent-window = "15m"
//	retention = "168h"
//	lost-retention = "24h"
//	job-retention = "24h"
//	stale-queued = "10m"
//	stale-running = "30m"
//	sweep-interval = "60s"         # console and daemon; "0s" disables periodic sweeps
//	watchdog-interval = "5s"       # console and daemon; "0s" disables the watchdog
//	notify-cmd = "notify-send clawpit \"$(jq -r .text)\""
//
//	[prices."claude-opus-4-5"]     # USD per million tokens (clawpit usage); overrides the defaults
//	input = 5
//	output = 25
//	cache-write = 10
//	cache-read = 0.5
//
//	[budget]                       # what agents may spend (What it costs); set in the registry by daemon and serve
//	session-cost = 5               # US dollars per session (its sub-agents' included)
//	run-tokens = 2000000           # tokens per sub-agent run
//	hour-cost = 20                 # US dollars per hour, every agent together
//	action = "gate"                # "alert" (default) or "gate": every further tool call waits for approval

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/clawpit/clawpit/core"
)

// Config is the parsed configuration file. The zero value (no file) means
// every default. The console reads Theme and Keys; the sweeper, console and
// daemon read Sweep.
type Config struct {
	// Theme is the console theme name ("" = default). Validated by the console.
	Theme string `toml:"theme"`
	// Keys overrides console key bindings: action name → keys. Names and key
	// syntax are the console's (tui.DefaultKeyMap); each value is one key or a list.
	Keys map[string]KeyList `toml:"keys"`
	// Sweep holds the [sweep] table: thresholds and intervals as duration
	// strings, validated by sweepSettings with the key named on error.
	Sweep SweepConfig `toml:"sweep"`
	// Prices overrides or adds model prices, USD per million tokens
	// ([prices."claude-opus-4-5"] input = 5, output = 25, cache-write = 10,
	// cache-read = 0.5); a model name prices every model it begins.
	Prices core.Prices `toml:"prices"`
	// Budget is the [budget] table (What it costs): limits per session,
	// run and hour, and the action; daemon and serve set them in the
	// registry when they start.
	Budget BudgetConfig `toml:"budget"`

	// Path is the file the config was read from; "" when there was none.
	Path string `toml:"-"`
}

// SweepConfig is the [sweep] table; empty strings mean "not set".
type SweepConfig struct {
	Grace            string `toml:"grace"`
	SilentWindow     string `toml:"silent-window"`
	Retention        string `toml:"retention"`
	LostRetention    string `toml:"lost-retention"`
	JobRetention     string `toml:"job-retention"`
	StaleQueued      string `toml:"stale-queued"`
	StaleRunning     string `toml:"stale-running"`
	SweepInterval    string `toml:"sweep-interval"`
	WatchdogInterval string `toml:"watchdog-interval"`
	NotifyCmd        string `toml:"notify-cmd"`
}

// KeyList is one key or a list of keys in [keys] ("q" or ["q", "ctrl+c"]).
type KeyList []string

// UnmarshalTOML accepts a string or an array of strings.
func (k *KeyList) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		*k = KeyList{x}
		return nil
	case []any:
		out := make(KeyList, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("want a key string or a list of key strings, got %T in the list", e)
			}
			out = append(out, s)
		}
		*k = out
		return nil
	}
	return fmt.Errorf("want a key string or a list of key strings, got %T", v)
}

// configPath is $CLAWPIT_CONFIG, else $XDG_CONFIG_HOME/clawpit/config.toml,
// else ~/.config/clawpit/config.toml.
func configPath() string {
	if p := os.Getenv("CLAWPIT_CONFIG"); p != "" {
		return p
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "clawpit", "config.toml")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".config", "clawpit", "config.toml")
	}
	return ""
}

// config returns the configuration file's contents, read once per process
// (every command and the console share it).
func (a *app) config() (*Config, error) {
	if a.cfg == nil && a.cfgErr == nil {
		a.cfg, a.cfgErr = loadConfig()
	}
	return a.cfg, a.cfgErr
}

// loadConfig reads the configuration file; a missing file is the zero
// Config. Errors wrap core.ErrInvalid (exit 2) and name the file and key:
// malformed TOML, a value of the wrong type, an unknown key.
func loadConfig() (*Config, error) {
	path := configPath()
	cfg := &Config{}
	if path == "" {
		return cfg, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	md, err := toml.Decode(string(b), cfg)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			where := fmt.Sprintf("line %d", pe.Position.Line)
			if pe.LastKey != "" {
				where += ", key " + pe.LastKey
			}
			return nil, core.Invalidf("config %s: %s: %s", path, where, pe.Message)
		}
		return nil, core.Invalidf("config %s: %v", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		sort.Strings(keys)
		return nil, core.Invalidf("config %s: unknown key %s", path, strings.Join(keys, ", "))
	}
	cfg.Path = path
	return cfg, nil
}

// configDuration parses the [sweep] key value; "" is not set (ok false).
// Errors name the file and key.
func (c *Config) configDuration(key, value string, allowZero bool) (time.Duration, bool, error) {
	if value == "" {
		return 0, false, nil
	}
	d, err := time.ParseDuration(value)
	if err == nil && (d < 0 || (d == 0 && !allowZero)) {
		err = errors.New("must be positive")
		if allowZero {
			err = errors.New("must not be negative")
		}
	}
	if err == nil && d > maxFlagDuration {
		err = errors.New("at most 876000h (100 years)")
	}
	if err != nil {
		return 0, false, core.Invalidf("config %s: key sweep.%s: invalid duration %q: %v", c.Path, key, value, err)
	}
	return d, true, nil
}
