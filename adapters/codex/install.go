package codex

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/clawpit/clawpit/adapters/claude"
	"github.com/clawpit/clawpit/adapters/hookkit"
	"github.com/clawpit/clawpit/core"
)

// DefaultGate is the PreToolUse matcher for Codex: its shell (reported as
// tool_name "Bash"), apply_patch and MCP tools.
const DefaultGate = "Bash|apply_patch|mcp__.*"

// Events are the events clawpit installs for Codex, in the order written.
var Events = []string{EventPreToolUse, EventPostToolUse, EventSubagentStart, EventSubagentStop,
	EventSessionStart, EventSessionEnd, EventStop}

// HookTimeoutSeconds is the Codex `timeout` (seconds) of the non-gating
// hooks, set on every one so that no Codex default (SessionEnd's is 1 s)
// applies.
const HookTimeoutSeconds = 30

// SessionEndTimeoutSeconds is SessionEnd's: Codex 0.169.0 caps a SessionEnd
// handler at 3 s (its hooks/list shows timeoutSec 3 for a 30 set) and hashes
// the capped value, so a larger one would leave the hook "modified" and
// skipped. The non-gated hook answers within about 0.5 s.
const SessionEndTimeoutSeconds = 3

// InstallOptions is the input of Install.
type InstallOptions struct {
	Dir             string        // $CODEX_HOME: hooks.json and config.toml are written there
	Binary          string        // absolute path of the clawpit binary
	DB              string        // the registry: absolute path or password-less postgres:// URL (claude.RegistryLocation)
	ApprovalTimeout time.Duration // default claude.DefaultApprovalTimeout
	Gate            string        // the gated event's matcher, default DefaultGate
	RunInactivity   time.Duration // 0: claude.DefaultRunInactivity
	// GateOn is what waits for an operator: claude.GateOnTool (default)
	// every PreToolUse matching Gate; claude.GateOnAsk only a
	// PermissionRequest matching Gate, which Codex fires when its own
	// approval policy would ask its user (interactive `codex`, or `codex
	// exec --approve-for-me`; agents/NOTES.md), and PreToolUse decides
	// only the interactive-shell rule (InteractiveShell).
	GateOn string
}

// HooksPath and ConfigPath are Codex's files in dir ($CODEX_HOME).
func HooksPath(dir string) string  { return filepath.Join(dir, "hooks.json") }
func ConfigPath(dir string) string { return filepath.Join(dir, "config.toml") }

// target is o as hookkit's Target: the hook command's parts and the gate.
func (o InstallOptions) target() hookkit.Target {
	t := hookkit.Target{Agent: "codex", Binary: o.Binary, DB: o.DB, ApprovalTimeout: o.ApprovalTimeout, Gate: o.Gate}
	if o.RunInactivity != claude.DefaultRunInactivity {
		t.RunInactivity = o.RunInactivity
	}
	return t
}

// HookCommand is the command line of one clawpit hook for Codex
// (hookkit.Target.Command): like Claude Code's (claude.HookCommand) with
// --agent codex, --gated for a gated hook, and --gate-on ask for every hook
// of ask mode (the gated ones read PermissionRequest as well).
func HookCommand(o InstallOptions, gated bool) string {
	var flags []string
	if gated {
		flags = append(flags, "--gated")
	}
	if o.GateOn == claude.GateOnAsk {
		flags = append(flags, "--gate-on "+claude.GateOnAsk)
	}
	return o.target().Command(flags...)
}

// Install merges clawpit's hooks into $CODEX_HOME/hooks.json (Claude Code's
// format, timeouts in seconds: the gated PreToolUse gets the approval
// timeout + 30 s, claude.GateTimeoutSeconds) and records them as trusted
// in $CODEX_HOME/config.toml (Trust). Both files are written atomically
// with a backup; installing twice changes nothing. The error of a trust
// that could not be written names the one step that trusts the hooks.
// Errors wrap core.ErrInvalid for a bad gate, relative paths or an
// approval timeout out of range (claude.CheckApprovalTimeout); nothing is
// written then.
func Install(o InstallOptions) (claude.Change, error) {
	if o.ApprovalTimeout == 0 {
		o.ApprovalTimeout = claude.DefaultApprovalTimeout
	}
	t := o.target()
	if err := cmp.Or(claude.CheckApprovalTimeout("approval timeout", o.ApprovalTimeout), t.Check(DefaultGate, "Codex home", o.Dir)); err != nil {
		return claude.Change{}, err
	}
	o.Gate = t.Gate
	if o.GateOn != "" && o.GateOn != claude.GateOnTool && o.GateOn != claude.GateOnAsk {
		return claude.Change{}, core.Invalidf("gate-on %q: want %q or %q", o.GateOn, claude.GateOnTool, claude.GateOnAsk)
	}
	// Parse config.toml before anything is written: a file Codex could
	// not read either is refused.
	if _, err := readConfig(ConfigPath(o.Dir)); err != nil {
		return claude.Change{}, err
	}
	hooks := HooksPath(o.Dir)
	before, err := installedAt(hooks)
	if err != nil {
		return claude.Change{}, err
	}
	groups := map[string]json.RawMessage{}
	for _, ev := range Events {
		matcher, timeout := "", HookTimeoutSeconds
		switch ev {
		case EventPreToolUse:
			matcher, timeout = o.Gate, claude.GateTimeoutSeconds(o.ApprovalTimeout)
		case EventSessionEnd:
			timeout = SessionEndTimeoutSeconds
		}
		groups[ev] = claude.Group(matcher, HookCommand(o, ev == EventPreToolUse), timeout)
	}
	if o.GateOn == claude.GateOnAsk {
		// PreToolUse stays gated with the same timeout: it holds an
		// interactive shell for an operator in this mode too.
		groups[EventPermissionRequest] = claude.Group(o.Gate, HookCommand(o, true), claude.GateTimeoutSeconds(o.ApprovalTimeout))
	}
	// PermissionRequest is always listed, so that installing in tool mode
	// removes an ask mode's hook.
	ch, err := claude.RewriteHooks(hooks, append(slices.Clone(Events), EventPermissionRequest), groups)
	if err != nil {
		return ch, err
	}
	after, err := installedAt(hooks)
	if err != nil {
		return ch, err
	}
	changed, err := writeTrust(ConfigPath(o.Dir), hooks, before, after)
	if err != nil {
		return ch, fmt.Errorf("%w; Codex skips untrusted hooks silently: trust them in Codex's /hooks, or fix config.toml and run install again", err)
	}
	ch.Changed = ch.Changed || changed
	return ch, nil
}

// Uninstall removes clawpit's hooks from $CODEX_HOME/hooks.json and their
// trust records from config.toml.
func Uninstall(dir string) (claude.Change, error) {
	hooks := HooksPath(dir)
	before, err := installedAt(hooks)
	if err != nil {
		return claude.Change{}, err
	}
	others, err := handlersAt(hooks)
	if err != nil {
		return claude.Change{}, err
	}
	ch, err := claude.Uninstall(hooks)
	if err != nil {
		return ch, err
	}
	after, err := handlersAt(hooks)
	if err != nil {
		return ch, err
	}
	changed, err := writeTrustMoving(ConfigPath(dir), before, nil, moves(others, after))
	ch.Changed = ch.Changed || changed
	return ch, err
}

// handlerRef is one handler of a hooks.json that is not clawpit's: where it
// is (its trust key) and what it is.
type handlerRef struct {
	key, event, what string
}

// handlersAt lists the handlers of a Codex hooks.json that are not
// clawpit's, in file order per event.
func handlersAt(path string) ([]handlerRef, error) {
	var out []handlerRef
	err := eachHandler(path, func(key, ev string, matcher json.RawMessage, raw json.RawMessage) {
		var h struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(raw, &h) == nil && claude.IsClawpitCommand(h.Command) {
			return
		}
		var what bytes.Buffer // compact: the rewrite re-indents the file
		_ = json.Compact(&what, matcher)
		what.WriteByte(0)
		_ = json.Compact(&what, raw)
		out = append(out, handlerRef{key: key, event: ev, what: what.String()})
	})
	return out, err
}

// eachHandler calls fn for each handler of a Codex hooks.json (none when
// the file does not exist), in file order per event of AllEvents, with its
// trust key (<file>:<event snake_case>:<group>:<handler>), its group's
// matcher (nil when the group has none) and the handler as written. A
// matcher that is neither absent, null nor a string is refused with the
// file (core.ErrInvalid), fn not called.
func eachHandler(path string, fn func(key, event string, matcher, handler json.RawMessage)) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	var file struct {
		Hooks map[string][]struct {
			Matcher json.RawMessage   `json:"matcher"`
			Hooks   []json.RawMessage `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return core.Invalidf("Codex hooks file %s: %v", path, err)
	}
	for ev, groups := range file.Hooks {
		for gi, g := range groups {
			var m *string
			if len(g.Matcher) > 0 && json.Unmarshal(g.Matcher, &m) != nil {
				return core.Invalidf("Codex hooks file %s: the matcher of %s group %d is not a string", path, ev, gi)
			}
		}
	}
	for _, ev := range AllEvents {
		for gi, g := range file.Hooks[ev] {
			for hi, raw := range g.Hooks {
				fn(fmt.Sprintf("%s:%s:%d:%d", path, snake(ev), gi, hi), ev, g.Matcher, raw)
			}
		}
	}
	return nil
}

// moves pairs the other handlers before and after a rewrite (per event, in
// order, by content) and returns the trust keys that changed: removing
// clawpit's group shifts the groups after it, and Codex keys trust by
// position, so their records move with them (the hash, of the content,
// stays valid).
func moves(before, after []handlerRef) map[string]string {
	out := map[string]string{}
	next := map[string]int{} // event → index into after's handlers of that event
	byEvent := map[string][]handlerRef{}
	for _, h := range after {
		byEvent[h.event] = append(byEvent[h.event], h)
	}
	for _, h := range before {
		list := byEvent[h.event]
		i := next[h.event]
		if i < len(list) && list[i].what == h.what {
			if list[i].key != h.key {
				out[h.key] = list[i].key
			}
			next[h.event] = i + 1
		}
	}
	return out
}

// Hook is one clawpit hook in hooks.json, where Codex finds it, and whether
// Codex trusts it.
type Hook struct {
	claude.Installed
	Key     string `json:"key"`     // Codex's trust key: <hooks.json>:<event snake_case>:<group>:<handler>
	Hash    string `json:"hash"`    // the trusted_hash it needs
	Trusted bool   `json:"trusted"` // config.toml records exactly Hash under Key
}

// Status lists clawpit's hooks in dir's hooks.json with their trust. The
// error, when any is untrusted, says the one step that trusts them.
func Status(dir string) ([]Hook, error) {
	hs, err := installedAt(HooksPath(dir))
	if err != nil {
		return nil, err
	}
	cfg, err := readConfig(ConfigPath(dir))
	if err != nil {
		return hs, err
	}
	var untrusted []string
	for i := range hs {
		hs[i].Trusted = cfg[hs[i].Key] == hs[i].Hash
		if !hs[i].Trusted {
			untrusted = append(untrusted, hs[i].Event)
		}
	}
	if len(untrusted) > 0 {
		return hs, fmt.Errorf("clawpit's %s hook(s) are not trusted by Codex, which skips them silently (the gate is OPEN): run `clawpit hooks install --agent codex --config-dir %s` (or trust them in Codex's /hooks)",
			strings.Join(untrusted, ", "), dir)
	}
	return hs, nil
}

// installedAt finds clawpit's hooks in a Codex hooks.json with their trust
// keys and hashes (TrustHash).
func installedAt(path string) ([]Hook, error) {
	var out []Hook
	err := eachHandler(path, func(key, ev string, rawMatcher, raw json.RawMessage) {
		var h struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Timeout *int   `json:"timeout"`
		}
		if json.Unmarshal(raw, &h) != nil || h.Type != "command" || !claude.IsClawpitCommand(h.Command) {
			return
		}
		var matcher *string // checked by eachHandler: absent, null or a string
		_ = json.Unmarshal(rawMatcher, &matcher)
		timeout := defaultTimeout(ev)
		if h.Timeout != nil {
			timeout = *h.Timeout
		}
		m := ""
		if matcher != nil {
			m = *matcher
		}
		out = append(out, Hook{
			Installed: claude.Installed{Event: ev, Matcher: m, Command: h.Command, Timeout: timeout},
			Key:       key,
			Hash:      TrustHash(ev, matcher, h.Command, timeout),
		})
	})
	return out, err
}

// defaultTimeout is the timeout (seconds) Codex 0.169.0 gives a handler
// that sets none: 600, but 1 for SessionEnd (agents/NOTES.md).
func defaultTimeout(event string) int {
	if event == EventSessionEnd {
		return 1
	}
	return 600
}

// snake is an event's name in Codex's trust keys (PreToolUse →
// pre_tool_use).
func snake(event string) string {
	var b strings.Builder
	for i, r := range event {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TrustHash is the trusted_hash Codex 0.169.0 records for one command
// handler (agents/NOTES.md): "sha256:" and the hex SHA-256 of the compact
// JSON, keys sorted, no HTML escaping, of {"event_name": snake_case event,
// "matcher" (left out when nil), "hooks": [{"type": "command", "command",
// "timeout" (seconds), "async": false}]}.
func TrustHash(event string, matcher *string, command string, timeout int) string {
	v := map[string]any{"event_name": snake(event),
		"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": timeout, "async": false}}}
	if matcher != nil {
		v["matcher"] = *matcher
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// readConfig parses config.toml (missing: empty) and returns its trust
// records: hooks.state key → trusted_hash.
func readConfig(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	} else if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var cfg struct {
		Hooks struct {
			State map[string]struct {
				TrustedHash string `toml:"trusted_hash"`
			} `toml:"state"`
		} `toml:"hooks"`
	}
	if _, err := toml.Decode(string(data), &cfg); err != nil {
		return nil, core.Invalidf("Codex config %s is not valid TOML: %v", path, err)
	}
	out := map[string]string{}
	for k, v := range cfg.Hooks.State {
		out[k] = v.TrustedHash
	}
	return out, nil
}

// stateHeader matches a [hooks.state."KEY"] table header line.
var stateHeader = regexp.MustCompile(`^\s*\[\s*hooks\s*\.\s*state\s*\.\s*("(?:[^"\\]|\\.)*"|'[^']*')\s*\]\s*(#.*)?$`)

// tableHeader matches any table header line ([x] or [[x]]).
var tableHeader = regexp.MustCompile(`^\s*\[`)

// writeTrust rewrites config.toml so that the trust records of the hooks
// in before (clawpit's, as they were) are gone and those of after are
// present: each removed as a whole [hooks.state."KEY"] table, each added as
// one at the end, so no table is ever written twice. The result must parse
// as TOML with exactly after's hashes, or nothing is written (a record kept
// in another form, e.g. an inline table, is refused that way). Atomic, with
// a backup (<file>.clawpit-backup); unchanged content is not rewritten.
func writeTrust(path, hooksPath string, before, after []Hook) (bool, error) {
	return writeTrustMoving(path, before, after, nil)
}

// writeTrustMoving is writeTrust that also renames the tables of the keys
// in move (old → new: other handlers' records that moved with their hooks).
func writeTrustMoving(path string, before, after []Hook, move map[string]string) (bool, error) {
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	drop := map[string]bool{}
	for _, h := range append(append([]Hook{}, before...), after...) {
		drop[h.Key] = true
	}
	for _, to := range move {
		drop[to] = true // a stale record where a moved one lands
	}
	var out []string
	skipping := false
	for _, line := range strings.SplitAfter(string(old), "\n") {
		if m := stateHeader.FindStringSubmatch(strings.TrimRight(line, "\r\n")); m != nil {
			key := tomlKey(m[1])
			if to, ok := move[key]; ok {
				q, _ := json.Marshal(to)
				line, skipping = fmt.Sprintf("[hooks.state.%s]\n", q), false
			} else {
				skipping = drop[key]
			}
		} else if tableHeader.MatchString(line) {
			skipping = false
		}
		if !skipping {
			out = append(out, line)
		}
	}
	text := strings.TrimRight(strings.Join(out, ""), "\n")
	for _, h := range after {
		key, _ := json.Marshal(h.Key) // a TOML basic string is a JSON string
		text += fmt.Sprintf("\n\n[hooks.state.%s]\ntrusted_hash = %q", key, h.Hash)
	}
	text = strings.TrimLeft(text, "\n") + "\n"
	if exists && text == string(old) {
		return false, nil
	}
	if !exists && len(after) == 0 {
		return false, nil
	}
	if err := checkTrust(text, after); err != nil {
		return false, fmt.Errorf("config %s: %w", path, err)
	}
	mode := os.FileMode(0o600)
	if exists {
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
		if err := claude.WriteFileAtomic(path+".clawpit-backup", old, mode); err != nil {
			return false, err
		}
	}
	if err := claude.WriteFileAtomic(path, []byte(text), mode); err != nil {
		return false, err
	}
	return true, nil
}

// checkTrust parses the new config.toml text and checks it records exactly
// each hook's hash.
func checkTrust(text string, hooks []Hook) error {
	var cfg struct {
		Hooks struct {
			State map[string]struct {
				TrustedHash string `toml:"trusted_hash"`
			} `toml:"state"`
		} `toml:"hooks"`
	}
	if _, err := toml.Decode(text, &cfg); err != nil {
		return core.Invalidf("the trust records would not parse (a [hooks.state] entry kept in another form?): %v", err)
	}
	for _, h := range hooks {
		if got := cfg.Hooks.State[h.Key].TrustedHash; got != h.Hash {
			return core.Invalidf("trust of %s reads %q after the edit, want %q", h.Key, got, h.Hash)
		}
	}
	return nil
}

// tomlKey unquotes a quoted TOML key ("basic" or 'literal').
func tomlKey(q string) string {
	if strings.HasPrefix(q, "'") {
		return strings.Trim(q, "'")
	}
	if s, err := strconv.Unquote(q); err == nil {
		return s
	}
	return q
}
