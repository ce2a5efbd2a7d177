package agents

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// hookDump is a hook command that saves each payload it is given on stdin
// to a file of its own in Dir, and beside it the names (never the values:
// Gemini CLI's hooks see GEMINI_API_KEY) of its environment variables.
type hookDump struct {
	Dir    string
	Script string // the command to configure
}

// newHookDump writes the dump script into a fresh directory.
func newHookDump(t *testing.T) hookDump {
	t.Helper()
	d := hookDump{Dir: t.TempDir()}
	d.Script = filepath.Join(d.Dir, "dump.sh")
	script := fmt.Sprintf("#!/bin/sh\nf=$(mktemp %q/payload.XXXXXX)\ncat > \"$f\"\nenv | cut -d= -f1 | sort > \"$f.env\"\n", d.Dir)
	if err := os.WriteFile(d.Script, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// payload is one dumped hook payload: its JSON object and the names of the
// hook's environment variables.
type payload struct {
	Fields  map[string]any
	Raw     string
	EnvVars []string
}

// Event is the payload's hook_event_name.
func (p payload) Event() string { s, _ := p.Fields["hook_event_name"].(string); return s }

// Keys are the payload's top-level field names, sorted.
func (p payload) Keys() []string {
	var ks []string
	for k := range p.Fields {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// payloads reads every dumped payload, in no particular order.
func (d hookDump) payloads(t *testing.T) []payload {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(d.Dir, "payload.*"))
	var out []payload
	for _, f := range files {
		if strings.HasSuffix(f, ".env") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := payload{Raw: string(b)}
		if err := json.Unmarshal(b, &p.Fields); err != nil {
			t.Fatalf("hook payload %s is not a JSON object: %v\n%s", f, err, b)
		}
		env, _ := os.ReadFile(f + ".env")
		p.EnvVars = strings.Fields(string(env))
		out = append(out, p)
	}
	return out
}

// byEvent is the payloads of event.
func byEvent(ps []payload, event string) []payload {
	var out []payload
	for _, p := range ps {
		if p.Event() == event {
			out = append(out, p)
		}
	}
	return out
}

// logPayloads logs each payload's event and fields (and, with
// CLAWPIT_AGENTS_DUMP=DIR, writes them there for NOTES.md).
func logPayloads(t *testing.T, name string, ps []payload) {
	t.Helper()
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "== %s keys=%v\n%s\nenv names: %s\n", p.Event(), p.Keys(), p.Raw, strings.Join(p.EnvVars, " "))
	}
	t.Logf("%s: %d hook payloads\n%s", name, len(ps), b.String())
	if dir := os.Getenv("CLAWPIT_AGENTS_DUMP"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, name+".txt"), []byte(b.String()), 0o644)
	}
}

// hookAnswer is what a hook command answers: stdout, stderr, exit code,
// after sleeping Sleep seconds (past the hook's timeout: a hook that hangs).
type hookAnswer struct {
	Stdout, Stderr string
	Code           int
	Sleep          int
}

// script writes a hook command giving this answer into dir and returns its
// path. It reads its payload first, as a hook must.
func (h hookAnswer) script(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "answer.sh")
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	body := fmt.Sprintf("#!/bin/sh\ncat >/dev/null\nsleep %d\nprintf '%%s' %s\nprintf '%%s' %s >&2\nexit %d\n", h.Sleep, q(h.Stdout), q(h.Stderr), h.Code)
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
