package cli

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

func TestResolveConsole(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := []struct {
		name     string
		args     []string
		cfg      *Config
		env      func(string) string
		theme    string
		sweep    time.Duration
		watchdog time.Duration
		notify   string
		errText  string
	}{
		{name: "defaults", theme: "dark", sweep: time.Minute, watchdog: 5 * time.Second},
		{name: "config", cfg: &Config{Theme: "light", Sweep: SweepConfig{SweepInterval: "0s", WatchdogInterval: "2s", NotifyCmd: "cat"}},
			theme: "light", sweep: 0, watchdog: 2 * time.Second, notify: "cat"},
		{name: "flags beat config", args: []string{"--theme", "high-contrast", "--sweep-interval", "30s", "--notify-cmd", "true"},
			cfg:   &Config{Theme: "light", Sweep: SweepConfig{SweepInterval: "0s", NotifyCmd: "cat"}},
			theme: "high-contrast", sweep: 30 * time.Second, watchdog: 5 * time.Second, notify: "true"},
		{name: "NO_COLOR", args: []string{"--theme", "light"}, env: env("NO_COLOR", "1"), theme: "mono", sweep: time.Minute, watchdog: 5 * time.Second},
		{name: "bad theme", args: []string{"--theme", "neon"}, errText: `unknown theme "neon"`},
		{name: "bad config theme", cfg: &Config{Theme: "neon", Path: "/x/config.toml"}, errText: `/x/config.toml: key theme: unknown theme "neon"`},
		{name: "flag theme beats a bad config theme", args: []string{"--theme", "light"}, cfg: &Config{Theme: "neon"}, theme: "light", sweep: time.Minute, watchdog: 5 * time.Second},
		{name: "bad config key", cfg: &Config{Keys: map[string]KeyList{"launch": {"l"}}}, errText: `unknown action "launch"`},
		{name: "negative interval", args: []string{"--sweep-interval", "-1s"}, errText: "must not be negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &app{th: core.DefaultThresholds()}
			root := newRootCmd(a)
			if err := root.ParseFlags(c.args); err != nil {
				t.Fatal(err)
			}
			getenv := c.env
			if getenv == nil {
				getenv = env()
			}
			s, err := resolveConsole(root, a, c.cfg, getenv)
			if c.errText != "" {
				if err == nil || !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), c.errText) {
					t.Fatalf("err = %v, want %q (ErrInvalid, exit 2)", err, c.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.theme.Name != c.theme || s.sweepInterval != c.sweep || s.watchdogInterval != c.watchdog || s.notifyCmd != c.notify {
				t.Fatalf("got theme %s sweep %s watchdog %s notify %q", s.theme.Name, s.sweepInterval, s.watchdogInterval, s.notifyCmd)
			}
		})
	}
}
