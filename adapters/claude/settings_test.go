package claude

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

func installOpts(path string) InstallOptions {
	return InstallOptions{Settings: path, Binary: "/opt/clawpit bin/clawpit", DB: "/var/lib/clawpit/registry.db", ApprovalTimeout: 10 * time.Minute}
}

// hookGroups decodes a settings file's hooks.
func hookGroups(t *testing.T, path string) map[string][]struct {
	Matcher string           `json:"matcher"`
	Hooks   []map[string]any `json:"hooks"`
} {
	t.Helper()
	var s struct {
		Hooks map[string][]struct {
			Matcher string           `json:"matcher"`
			Hooks   []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("settings no longer JSON: %v\n%s", err, b)
	}
	return s.Hooks
}

func TestInstallUninstallRoundTrip(t *testing.T) {
	orig, err := os.ReadFile("testdata/settings_other.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"other content": string(orig),
		"empty object":  "{}\n",
		"no hooks key":  "{\n  \"model\": \"sonnet\"\n}\n",
		"missing file":  "",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".claude", "settings.json")
			if content != "" {
				os.MkdirAll(filepath.Dir(path), 0o700)
				if err := os.WriteFile(path, []byte(content), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			ch, err := Install(installOpts(path))
			if err != nil || !ch.Changed {
				t.Fatalf("install: %+v %v", ch, err)
			}
			after, _ := os.ReadFile(path)
			if content != "" {
				if ch.Backup == "" {
					t.Fatal("no backup")
				}
				if b, _ := os.ReadFile(ch.Backup); string(b) != content {
					t.Fatalf("backup differs from the original")
				}
				if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
					t.Fatalf("mode %v, want 0640 kept", fi.Mode().Perm())
				}
			}
			hs := hookGroups(t, path)
			for _, ev := range Events {
				n := 0
				for _, g := range hs[ev] {
					for _, h := range g.Hooks {
						if IsClawpitCommand(h["command"].(string)) {
							n++
							if ev == EventPreToolUse {
								if g.Matcher != "*" || h["timeout"].(float64) != 630 || !strings.Contains(h["command"].(string), " --gated --gate "+ShellQuote(DefaultGate)+" ") {
									t.Fatalf("PreToolUse hook: matcher %q %v", g.Matcher, h)
								}
							}
							if !strings.HasPrefix(h["command"].(string), "exec '/opt/clawpit bin/clawpit' --db /var/lib/clawpit/registry.db hook ") {
								t.Fatalf("command %q", h["command"])
							}
						}
					}
				}
				if n != 1 {
					t.Fatalf("%s: %d clawpit hooks, want 1", ev, n)
				}
			}
			// Other keys and hooks are kept, in order.
			if content == string(orig) {
				if len(hs["PostToolUse"]) != 2 || hs["PostToolUse"][0].Matcher != "Edit|Write" || len(hs["UserPromptSubmit"]) != 1 {
					t.Fatalf("user hooks not kept: %+v", hs)
				}
				keys := topKeys(t, after)
				if !reflect.DeepEqual(keys, []string{"$schema", "model", "permissions", "hooks", "env", "statusLine"}) {
					t.Fatalf("key order %v", keys)
				}
				if !strings.Contains(string(after), `"RATIO": 1.50`) || !strings.Contains(string(after), `"echo \"<context>$(date)</context>\""`) {
					t.Fatalf("values not kept byte for byte:\n%s", after)
				}
			}
			// Installing twice changes nothing.
			ch2, err := Install(installOpts(path))
			if err != nil || ch2.Changed {
				t.Fatalf("second install: %+v %v", ch2, err)
			}
			if again, _ := os.ReadFile(path); string(again) != string(after) {
				t.Fatal("second install changed the file")
			}
			st, err := Status(path)
			if err != nil || len(st) != len(Events) {
				t.Fatalf("status: %v %v", st, err)
			}
			ch3, err := Uninstall(path)
			if err != nil || !ch3.Changed {
				t.Fatalf("uninstall: %+v %v", ch3, err)
			}
			if content == "" {
				// Install created the file and its directory: uninstall
				// removes both and leaves no backup.
				if !ch3.Removed || ch3.Backup != "" {
					t.Fatalf("uninstall of a file install created: %+v", ch3)
				}
				if _, err := os.Lstat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
					ents, _ := os.ReadDir(filepath.Dir(path))
					t.Fatalf("uninstall left %s behind (%v): %v", filepath.Dir(path), err, ents)
				}
			} else if got, _ := os.ReadFile(path); string(got) != content || ch3.Removed {
				t.Fatalf("uninstall did not restore the file (%+v):\n got %s\nwant %s", ch3, got, content)
			}
			if st, _ := Status(path); len(st) != 0 {
				t.Fatalf("status after uninstall: %v", st)
			}
			if ch4, err := Uninstall(path); err != nil || ch4.Changed {
				t.Fatalf("second uninstall: %+v %v", ch4, err)
			}
		})
	}
}

// A file install created stays recorded as such (no backup beside it,
// nothing but clawpit's hooks in it) across a re-install that changes it:
// no backup is made, and uninstall removes the file but keeps a directory
// holding anything else. A file that existed keeps its backup.
func TestUninstallRemovesWhatInstallCreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".claude")
	path := filepath.Join(dir, "settings.json")
	if _, err := Install(installOpts(path)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "CLAUDE.md"), []byte("notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := installOpts(path)
	o.ApprovalTimeout = 20 * time.Minute
	if ch, err := Install(o); err != nil || !ch.Changed || ch.Backup != "" {
		t.Fatalf("re-install changing a file install created: %+v %v, want changed without backup", ch, err)
	}
	ch, err := Uninstall(path)
	if err != nil || !ch.Removed || ch.Backup != "" {
		t.Fatalf("uninstall: %+v %v", ch, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "CLAUDE.md" {
		t.Fatalf("left in %s: %v, want only CLAUDE.md", dir, ents)
	}

	// A file that existed (even one holding only clawpit's hooks, as a
	// backup beside it says) is restored, not removed.
	if _, err := Install(installOpts(path)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+BackupSuffix, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ch, err := Uninstall(path); err != nil || ch.Removed || ch.Backup == "" {
		t.Fatalf("uninstall of a file that has a backup: %+v %v", ch, err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "{}\n" {
		t.Fatalf("settings after uninstall: %q %v", b, err)
	}
}

func topKeys(t *testing.T, b []byte) []string {
	o, err := parseObject(b)
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, m := range o {
		ks = append(ks, m.key)
	}
	return ks
}

func TestInstallReplacesInPlaceAndKeepsSharedGroups(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	if _, err := Install(installOpts(path)); err != nil {
		t.Fatal(err)
	}
	// A user adds their own hook into clawpit's Stop group and a group after it.
	hs := hookGroups(t, path)
	b, _ := os.ReadFile(path)
	var doc map[string]any
	json.Unmarshal(b, &doc)
	stop := doc["hooks"].(map[string]any)["Stop"].([]any)
	g := stop[0].(map[string]any)
	g["hooks"] = append(g["hooks"].([]any), map[string]any{"type": "command", "command": "say done"})
	doc["hooks"].(map[string]any)["Stop"] = append(stop, map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "notify-send hi"}}})
	nb, _ := json.MarshalIndent(doc, "", "  ")
	os.WriteFile(path, append(nb, '\n'), 0o600)
	_ = hs

	o := installOpts(path)
	o.ApprovalTimeout = 2 * time.Minute
	o.Gate = "Bash"
	if ch, err := Install(o); err != nil || !ch.Changed {
		t.Fatalf("reinstall: %+v %v", ch, err)
	}
	hs = hookGroups(t, path)
	if hs[EventPreToolUse][0].Matcher != "*" || !strings.Contains(hs[EventPreToolUse][0].Hooks[0]["command"].(string), " --gate Bash ") ||
		hs[EventPreToolUse][0].Hooks[0]["timeout"].(float64) != 150 {
		t.Fatalf("PreToolUse not updated: %+v", hs[EventPreToolUse])
	}
	stopGroups := hs[EventStop]
	if len(stopGroups) != 3 || stopGroups[0].Hooks[0]["command"] != "say done" || !IsClawpitCommand(stopGroups[1].Hooks[0]["command"].(string)) || stopGroups[2].Hooks[0]["command"] != "notify-send hi" {
		t.Fatalf("Stop groups: %+v", stopGroups)
	}
	if _, err := Uninstall(path); err != nil {
		t.Fatal(err)
	}
	hs = hookGroups(t, path)
	if len(hs) != 1 || len(hs[EventStop]) != 2 || hs[EventStop][0].Hooks[0]["command"] != "say done" {
		t.Fatalf("after uninstall: %+v", hs)
	}
}

func TestInstallRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`["not", "an object"]`), 0o600)
	hooksArray := filepath.Join(dir, "hooks-array.json")
	os.WriteFile(hooksArray, []byte(`{"hooks": {"Stop": {"matcher": ""}}}`), 0o600)
	for name, o := range map[string]InstallOptions{
		"not an object":   installOpts(bad),
		"event not array": installOpts(hooksArray),
		"bad gate":        {Settings: filepath.Join(dir, "s.json"), Binary: "/b", DB: "/d", Gate: "Bash("},
		"relative binary": {Settings: filepath.Join(dir, "s.json"), Binary: "clawpit", DB: "/d"},
	} {
		before, _ := os.ReadFile(o.Settings)
		if _, err := Install(o); !errors.Is(err, core.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
		if after, _ := os.ReadFile(o.Settings); string(after) != string(before) {
			t.Errorf("%s: file changed", name)
		}
	}
}

func TestHookCommandQuoting(t *testing.T) {
	got := HookCommand(InstallOptions{Binary: "/it's/clawpit", DB: "/r.db", ApprovalTimeout: 90 * time.Second}, false)
	if got != `exec '/it'\''s/clawpit' --db /r.db hook --approval-timeout 1m30s --installed-by clawpit` {
		t.Fatalf("got %s", got)
	}
	got = HookCommand(InstallOptions{Binary: "/c", DB: "/r.db", RunInactivity: 2 * time.Minute}, true)
	if got != `exec /c --db /r.db hook --approval-timeout 10m --inactivity 2m --gated --installed-by clawpit` {
		t.Fatalf("got %s", got)
	}
	if !IsClawpitCommand(got) || IsClawpitCommand("clawpit hook") || IsClawpitCommand("echo --installed-by clawpit") {
		t.Fatal("IsClawpitCommand")
	}
	if FormatDuration(10*time.Minute) != "10m" || FormatDuration(2*time.Hour) != "2h" || FormatDuration(1500*time.Millisecond) != "1.5s" {
		t.Fatal("FormatDuration")
	}
}

func TestInstallKeepsSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "claude-settings.json")
	os.MkdirAll(filepath.Dir(real), 0o700)
	os.WriteFile(real, []byte("{\n  \"model\": \"opus\"\n}\n"), 0o644)
	link := filepath.Join(dir, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(link), 0o700)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(installOpts(link)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("symlink replaced: %v %v", fi.Mode(), err)
	}
	if st, _ := Status(real); len(st) != len(Events) {
		t.Fatalf("hooks not written through the link: %v", st)
	}
	if _, err := Uninstall(link); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(real); string(b) != "{\n  \"model\": \"opus\"\n}\n" {
		t.Fatalf("after uninstall: %s", b)
	}
}

// TestInstallOnFailure: onFailure goes on the gated PreToolUse hook only,
// Status reports it, an install without it takes it off again, and any
// other value is refused with the file untouched.
func TestInstallOnFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	o := installOpts(path)
	o.OnFailure = OnFailureBlock
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	for ev, gs := range hookGroups(t, path) {
		got, _ := gs[0].Hooks[0]["onFailure"].(string)
		if want := map[bool]string{true: "block"}[ev == EventPreToolUse]; got != want {
			t.Fatalf("%s onFailure %q, want %q", ev, got, want)
		}
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"timeout": 630,
            "onFailure": "block"`) {
		t.Fatalf("onFailure not written after timeout:\n%s", b)
	}
	hs, err := Status(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if (h.OnFailure == OnFailureBlock) != (h.Event == EventPreToolUse) {
			t.Fatalf("status %s onFailure %q", h.Event, h.OnFailure)
		}
	}
	o.OnFailure = ""
	if ch, err := Install(o); err != nil || !ch.Changed {
		t.Fatalf("install without onFailure: %+v, %v", ch, err)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "onFailure") {
		t.Fatalf("onFailure kept:\n%s", b)
	}
	before, _ := os.ReadFile(path)
	o.OnFailure = "deny"
	if _, err := Install(o); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), `"deny"`) {
		t.Fatalf("onFailure deny: %v, want ErrInvalid naming it", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("a refused install changed the file")
	}
}

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in       string
		v        [3]int
		pre      bool
		ok, with bool // with: SupportsOnFailure
	}{
		{"2.1.317 (Claude Code)", [3]int{2, 1, 317}, false, true, true},
		{"2.1.295 (Claude Code)", [3]int{2, 1, 295}, false, true, true},
		{"2.1.294 (Claude Code)", [3]int{2, 1, 294}, false, true, false},
		{"v2.1.300", [3]int{2, 1, 300}, false, true, true},
		{"Claude Code v2.1.300", [3]int{2, 1, 300}, false, true, true},
		{"2.1.295-beta.2 (Claude Code)", [3]int{2, 1, 295}, true, true, false},
		{"2.1.296-rc1", [3]int{2, 1, 296}, true, true, true},
		{"2.0.999", [3]int{2, 0, 999}, false, true, false},
		{"3.0.0", [3]int{3, 0, 0}, false, true, true},
		{"1.9.400", [3]int{1, 9, 400}, false, true, false},
		{"claude 2.2.0-beta.1\n", [3]int{2, 2, 0}, true, true, true},
		{"Claude Code", [3]int{}, false, false, false},
		{"", [3]int{}, false, false, false},
		{"2.1", [3]int{}, false, false, false},
		{"10.2.1.295", [3]int{10, 2, 1}, false, true, true},
	} {
		v, ok := ParseVersion(tc.in)
		if v.N != tc.v || v.Pre != tc.pre || ok != tc.ok {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v (pre %v), %v", tc.in, v, ok, tc.v, tc.pre, tc.ok)
		}
		if ok && SupportsOnFailure(v) != tc.with {
			t.Errorf("SupportsOnFailure(%v) = %v, want %v", v, !tc.with, tc.with)
		}
	}
}

// TestInstallGateOnAsk: --gate-on ask installs a gated PermissionRequest
// hook (matcher the gate, timeout the gate's, onFailure kept) and a
// PreToolUse for every tool (held only over a gating budget); back to
// tool, PreToolUse is gated again and PermissionRequest is gone.
func TestInstallGateOnAsk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	o := InstallOptions{Settings: path, Binary: "/bin/clawpit", DB: "/reg.db", ApprovalTimeout: time.Minute, OnFailure: OnFailureBlock}
	for _, tc := range []struct {
		gateOn      string
		wantGated   []string
		wantMissing string
	}{
		{GateOnAsk, []string{EventPermissionRequest, EventPreToolUse}, ""},
		{GateOnTool, []string{EventPreToolUse}, EventPermissionRequest},
	} {
		o.GateOn = tc.gateOn
		if _, err := Install(o); err != nil {
			t.Fatal(err)
		}
		hs, err := Status(path)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, h := range hs {
			switch {
			case h.Event == tc.wantMissing:
				t.Errorf("gate-on %s: %s hook installed", tc.gateOn, h.Event)
			case slices.Contains(tc.wantGated, h.Event):
				found++
				// PreToolUse: every tool reaches the hook, so a crossed
				// budget holds any tool (in ask mode, only then).
				wantMatcher := "*"
				if h.Event == EventPermissionRequest {
					wantMatcher = DefaultGate
				}
				if !strings.Contains(h.Command, "--gated") || h.Timeout != 90 || h.OnFailure != OnFailureBlock || h.Matcher != wantMatcher {
					t.Errorf("gate-on %s: gated hook %+v", tc.gateOn, h)
				}
				if got := strings.Contains(h.Command, "--gate-on ask"); got != (tc.gateOn == GateOnAsk) {
					t.Errorf("gate-on %s: command %q", tc.gateOn, h.Command)
				}
			}
		}
		if found != len(tc.wantGated) {
			t.Errorf("gate-on %s: %d of the hooks %v", tc.gateOn, found, tc.wantGated)
		}
	}
	o.GateOn = "sometimes"
	if _, err := Install(o); err == nil {
		t.Error("gate-on sometimes accepted")
	}
}

// A hook command names the registry by absolute path or by a PostgreSQL
// URL without a password (issue 30): a relative path depends on the
// agent's directory, and a password would sit in a settings file.
func TestRegistryLocation(t *testing.T) {
	for _, tc := range []struct {
		db   string
		want bool
	}{
		{"/abs/reg.db", true},
		{"reg.db", false},
		{"postgres://u@h/db", true},
		{"postgresql://u@/db?host=/run/pg", true},
		{"postgres://u:pw@h/db", false},
		{"postgres://%zz", false},
	} {
		if got := RegistryLocation(tc.db); got != tc.want {
			t.Errorf("RegistryLocation(%q) = %v, want %v", tc.db, got, tc.want)
		}
	}
}
