package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONShapes: every command's --json output has the shape
// docs/contract.md's "JSON shapes" table gives it — change, list, show or
// its own report — so a script never has to guess.
func TestJSONShapes(t *testing.T) {
	c := newCLI(t)
	type shape struct {
		kind   string // change, list, show, object
		keys   []string
		entity string // a change's entity key
	}
	change := func(entity string, extra ...string) shape {
		return shape{kind: "change", entity: entity, keys: append([]string{"applied", "reason", entity}, extra...)}
	}
	list := shape{kind: "list"}
	show := shape{kind: "show", keys: []string{"events"}}
	object := func(keys ...string) shape { return shape{kind: "object", keys: keys} }

	check := func(args []string, want shape) map[string]any {
		t.Helper()
		o := c.run(append([]string{"--json"}, args...)...)
		if o.code != 0 {
			t.Fatalf("clawpit --json %v: %s", args, o)
		}
		var v any
		if err := json.Unmarshal([]byte(o.stdout), &v); err != nil {
			t.Fatalf("clawpit --json %v: not one JSON document: %v\n%s", args, err, o.stdout)
		}
		if want.kind == "list" {
			if _, ok := v.([]any); !ok {
				t.Errorf("clawpit --json %v: want an array, got %s", args, o.stdout)
			}
			return nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("clawpit --json %v: want an object, got %s", args, o.stdout)
		}
		for _, k := range want.keys {
			if _, ok := m[k]; !ok {
				t.Errorf("clawpit --json %v: no %q in %s", args, k, o.stdout)
			}
		}
		if want.kind == "change" {
			if _, ok := m[want.entity].(map[string]any); !ok && want.entity != "" {
				t.Errorf("clawpit --json %v: %q is not an object", args, want.entity)
			}
		}
		if want.kind == "object" {
			if _, ok := m["events"]; ok {
				t.Errorf("clawpit --json %v: has events, the table says it has none", args)
			}
		}
		return m
	}
	id := func(m map[string]any, entity string) string {
		t.Helper()
		e, _ := m[entity].(map[string]any)
		for _, k := range []string{"id", "run_id", "name"} {
			if s, ok := e[k].(string); ok {
				return s
			}
		}
		t.Fatalf("no id in %v", m)
		return ""
	}

	check([]string{"session", "open", "S1"}, change("session"))
	check([]string{"session", "passivate", "S1"}, change("session", "reap"))
	check([]string{"session", "resume", "S1"}, change("session", "reaped_jobs"))
	tk := id(check([]string{"task", "create", "--runtime", "cli", "--session", "S1"}, change("task")), "task")
	for _, args := range [][]string{{"task", "start", tk}, {"task", "progress", tk}, {"task", "output", tk}, {"task", "finish", tk, "--status", "succeeded"},
		{"task", "deliver", tk, "--status", "delivered"}, {"task", "cancel", tk}} {
		check(args, change("task"))
	}
	track := c.command(strings.NewReader(`{"type":"result","subtype":"success"}`+"\n"), "--json", "task", "track", "--label", "x")
	var to map[string]any
	if o := c.runCmd(track); o.code != 0 || json.Unmarshal([]byte(o.stdout), &to) != nil || to["task"] == nil || to["applied"] == nil {
		t.Errorf("task track --json: %s", o)
	}
	check([]string{"run", "register", "R1", "--session", "S1:sub", "--requester", "S1"}, change("run"))
	check([]string{"run", "progress", "R1"}, change("run"))
	check([]string{"run", "kill", "R1"}, change("run"))
	check([]string{"run", "complete", "R1", "--outcome", "ok"}, change("run", "tasks"))
	ap := id(check([]string{"approval", "request", "--session", "S1", "--tool", "Bash", "--command", "git status"}, change("approval")), "approval")
	check([]string{"approval", "approve", ap, "--scope", "always"}, change("approval", "grant"))
	check([]string{"approval", "wait", ap}, object("id", "status"))
	dn := id(check([]string{"approval", "request", "--session", "S1", "--tool", "WebFetch", "--command", "https://example.com"}, change("approval")), "approval")
	check([]string{"approval", "deny", dn}, change("approval"))
	var grants []map[string]any
	c.json(&grants, "grant", "list")
	if len(grants) != 1 {
		t.Fatalf("grants: %v", grants)
	}
	check([]string{"grant", "revoke", grants[0]["id"].(string)}, change("grant"))
	jb := id(check([]string{"job", "run", "--session", "S1", "--", "sleep", "30"}, change("job")), "job")
	check([]string{"job", "status", jb}, object("id", "status", "log_path"))
	check([]string{"job", "tail", jb}, object("id", "status", "log_path", "capture_error", "note", "text"))
	check([]string{"job", "cancel", jb}, change("job"))
	check([]string{"job", "reap", "--session", "S1"}, shape{kind: "change", keys: []string{"applied", "reason", "reaped", "timed_out"}})
	key := sshKeyFile(t)
	check([]string{"operator", "add", "alice", "--role", "operator", "--key", key}, change("operator"))
	check([]string{"operator", "list"}, list)
	check([]string{"operator", "remove", "alice"}, change("operator"))
	for _, args := range [][]string{{"session", "list"}, {"task", "list"}, {"run", "list"}, {"approval", "list"}, {"grant", "list"},
		{"job", "list"}, {"notifications"}, {"notifications", "--ack"}, {"hooks", "status", "--settings", filepath.Join(t.TempDir(), "s.json")}} {
		check(args, list)
	}
	for _, args := range [][]string{{"session", "show", "S1"}, {"task", "show", tk}, {"run", "show", "R1"}, {"approval", "show", ap}, {"job", "show", jb}} {
		check(args, show)
	}
	settings := filepath.Join(t.TempDir(), ".claude", "settings.json")
	if m := check([]string{"hooks", "install", "--settings", settings, "--on-failure", "continue"}, change("hooks")); m["applied"] != true {
		t.Errorf("hooks install --json: %v", m)
	}
	if m := check([]string{"hooks", "install", "--settings", settings, "--on-failure", "continue"}, change("hooks")); m["applied"] != false || m["reason"] == "" {
		t.Errorf("hooks install --json, again: %v, want applied false with a reason", m)
	}
	if m := check([]string{"hooks", "uninstall", "--settings", settings}, change("hooks")); m["applied"] != true {
		t.Errorf("hooks uninstall --json: %v", m)
	}
	if m := check([]string{"hooks", "uninstall", "--settings", settings}, change("hooks")); m["applied"] != false || m["reason"] == "" {
		t.Errorf("hooks uninstall --json, again: %v, want applied false with a reason", m)
	}
	check([]string{"sweep", "--dry-run"}, object("mode", "started_at", "duration_ms", "counts", "actions", "findings", "truncated"))
	check([]string{"budget", "set", "--session-cost", "5", "--action", "gate"}, change("budget"))
	check([]string{"budget", "raise", "S1", "--cost", "10"}, change("budget"))
	check([]string{"budget"}, object("session", "run", "hour", "action", "set_by", "set_at", "raised", "hour_over"))
	check([]string{"session", "close", "S1"}, change("session", "reap"))
}

// sshKeyFile writes an ed25519 public key for operator add.
func sshKeyFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "k")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", p).CombinedOutput(); err != nil {
		t.Skipf("ssh-keygen: %v: %s", err, out)
	}
	if _, err := os.Stat(p + ".pub"); err != nil {
		t.Fatal(err)
	}
	return p + ".pub"
}
