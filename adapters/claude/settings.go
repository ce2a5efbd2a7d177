package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/clawpit/clawpit/adapters/hookkit"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
)

// Marker ends every hook command clawpit installs, so uninstall and status
// find exactly clawpit's entries and nothing else (hookkit.Marker, one for
// every agent).
const Marker = hookkit.Marker

// DefaultGate is the PreToolUse matcher: the tools that change things.
const DefaultGate = "Bash|Write|Edit|MultiEdit|NotebookEdit|WebFetch|mcp__.*"

// HookTimeoutSeconds is the Claude Code `timeout` (seconds) of the
// non-gating hooks; they finish in milliseconds, closing a session may wait
// up to 5 s for its jobs.
const HookTimeoutSeconds = 30

// gateMargin is how much longer Claude Code's own PreToolUse timeout is than
// the approval timeout, so clawpit always answers first (a hook killed at its
// timeout would let the tool call through).
const gateMargin = 30 * time.Second

// Events lists the hook events clawpit installs, in the order written.
var Events = []string{EventPreToolUse, EventPostToolUse, EventSubagentStart, EventSubagentStop,
	EventSessionStart, EventSessionEnd, EventStop, EventNotification}

// InstallOptions is the input of Install.
type InstallOptions struct {
	Settings        string        // the settings file (created when missing)
	Binary          string        // absolute path of the clawpit binary
	DB              string        // the registry the hooks write to: absolute path or password-less postgres:// URL (RegistryLocation)
	ApprovalTimeout time.Duration // default DefaultApprovalTimeout
	Gate            string        // PreToolUse matcher regex, default DefaultGate
	RunInactivity   time.Duration // sub-agent runs' watchdog budget; 0 = DefaultRunInactivity
	// OnFailure is the gated PreToolUse hook's `onFailure`: OnFailureBlock,
	// or "" to leave Claude Code's default (a hook that cannot start, times
	// out or exits with a code other than 0 or 2 lets the tool call through).
	// Claude Code before MinOnFailureVersion rejects the key, and with it the
	// whole settings file: see SupportsOnFailure.
	OnFailure string
	// GateOn is what waits for an operator: GateOnTool (default) every
	// PreToolUse matching Gate; GateOnAsk only a PermissionRequest, which
	// Claude Code fires when its own rules would ask its user (also in
	// headless -p runs, 2.1.328), so the user's allow and deny rules keep
	// deciding everything else.
	GateOn string
}

// Gate modes (InstallOptions.GateOn, --gate-on).
const (
	GateOnTool = "tool"
	GateOnAsk  = "ask"
)

// EventPermissionRequest is Claude Code's permission-request hook event
// (Claude Code hooks: PermissionRequest; no tool_use_id).
const EventPermissionRequest = "PermissionRequest"

// OnFailureBlock is the `onFailure` value that makes Claude Code block a tool
// call whose PreToolUse hook cannot start, times out or exits with an
// unexpected code (Claude Code hooks: onFailure, added in 2.1.295).
const OnFailureBlock = "block"

// Change reports what Install or Uninstall did to a settings file.
type Change struct {
	Path    string `json:"path"`
	Changed bool   `json:"-"`                // the file was written or removed
	Backup  string `json:"backup,omitempty"` // copy of the file as it was, when it existed before install and changed
	// Removed: uninstall removed the file (and its directory when that
	// was left empty), install having created it.
	Removed bool `json:"removed,omitempty"`
}

// MaxHookTimeoutSeconds is the largest hook `timeout` (seconds) Claude Code
// honours: it runs the timeout on a JavaScript timer, which holds at most
// 2^31−1 ms (about 24.8 days); a larger value fires at once, so the hook
// would be cut off and the tool call let through.
const MaxHookTimeoutSeconds = (1<<31 - 1) / 1000

// MaxApprovalTimeout is the longest approval timeout install and the hook
// accept: 24 days (576h), so the gated hook's timeout (this + 30 s) stays
// under MaxHookTimeoutSeconds.
const MaxApprovalTimeout = 24 * 24 * time.Hour

// MaxRunInactivity is the longest sub-agent inactivity budget install and
// the hook accept: 365 days (8760h).
const MaxRunInactivity = 365 * 24 * time.Hour

// CheckApprovalTimeout refuses an approval timeout that is not positive or
// is over MaxApprovalTimeout (core.ErrInvalid naming flag and value).
func CheckApprovalTimeout(flag string, d time.Duration) error {
	if d <= 0 || d > MaxApprovalTimeout {
		return core.Invalidf("%s %s: want more than 0 and at most %s (Claude Code's hook timer holds about 24.8 days)",
			flag, termtext.FlagDuration(d), termtext.FlagDuration(MaxApprovalTimeout))
	}
	return nil
}

// CheckRunInactivity refuses an inactivity budget under 1 ms or over
// MaxRunInactivity (core.ErrInvalid naming flag and value).
func CheckRunInactivity(flag string, d time.Duration) error {
	if d < time.Millisecond || d > MaxRunInactivity {
		return core.Invalidf("%s %s: want at least 1ms and at most %s", flag, termtext.FlagDuration(d), termtext.FlagDuration(MaxRunInactivity))
	}
	return nil
}

// GateTimeoutSeconds is the PreToolUse hook's Claude Code timeout for an
// approval timeout d: d plus 30 s, in whole seconds, at most
// MaxHookTimeoutSeconds (d is checked with CheckApprovalTimeout first; the
// cap only keeps a bad d from overflowing).
func GateTimeoutSeconds(d time.Duration) int {
	if d > MaxApprovalTimeout {
		return MaxHookTimeoutSeconds
	}
	return int(math.Ceil((d + gateMargin).Seconds()))
}

// HookCommand is the shell command line clawpit installs: `exec` (the shell
// Claude Code starts becomes clawpit, so the signal that stops a hook reaches
// it: a stopped PreToolUse hook withdraws its approval), the binary and the
// registry by absolute path, `hook`, the approval timeout, the run inactivity
// budget when not the default, --gated for PreToolUse, and Marker last.
func HookCommand(o InstallOptions, gated bool) string {
	return hookCommand(o, gated, "")
}

// hookCommand is HookCommand with --gate-on ask for the PermissionRequest
// hook (gateOn GateOnAsk).
func hookCommand(o InstallOptions, gated bool, gateOn string) string {
	timeout := o.ApprovalTimeout
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	cmd := "exec " + termtext.ShellQuote(o.Binary) + " --db " + termtext.ShellQuote(o.DB) + " hook --approval-timeout " + termtext.FlagDuration(timeout)
	if o.RunInactivity > 0 && o.RunInactivity != DefaultRunInactivity {
		cmd += " --inactivity " + termtext.FlagDuration(o.RunInactivity)
	}
	if gated {
		cmd += " --gated"
	}
	if gated && gateOn != GateOnAsk && o.Gate != "" {
		// The gate is applied by the hook, not the matcher: a tool
		// outside it still reaches clawpit, which holds it only when a
		// gating budget is crossed (What it costs).
		cmd += " --gate " + termtext.ShellQuote(o.Gate)
	}
	if gateOn == GateOnAsk {
		cmd += " --gate-on ask"
	}
	return cmd + " " + Marker
}

// RegistryLocation reports whether db can stand in a hook command as the
// registry in force: hookkit.RegistryLocation (an absolute SQLite path, or
// a postgres:// URL without a password).
func RegistryLocation(db string) bool { return hookkit.RegistryLocation(db) }

// IsClawpitCommand reports whether a hook command is one clawpit installed.
func IsClawpitCommand(cmd string) bool {
	return strings.HasSuffix(strings.TrimSpace(cmd), Marker) && strings.Contains(cmd, " hook ")
}

// ShellQuote quotes s for sh (Claude Code runs hook commands through a
// shell): as it is when it holds only safe characters, else in single
// quotes.
func ShellQuote(s string) string { return termtext.ShellQuote(s) }

// Install merges clawpit's hooks into the settings file (README "Use with Claude Code"): for each of
// Events one matcher group with one command hook; PreToolUse matches the gate
// and its timeout is GateTimeoutSeconds. Every other key and every hook that
// is not clawpit's keeps its value and order; clawpit's own entries are
// replaced where they stand, so installing twice changes nothing (Changed
// false, the file untouched). The file is written atomically with its mode
// kept (0600 for a new file) after a backup of the old one beside it
// (<file>.clawpit-backup; none for a file install created, see
// createdByInstall); a symlinked file is written where it points.
// Errors: ErrInvalid for a settings file that is not
// a JSON object, a bad gate regex, relative paths, or an approval timeout or
// run inactivity out of range (CheckApprovalTimeout, CheckRunInactivity);
// nothing is written then.
func Install(o InstallOptions) (Change, error) {
	if o.ApprovalTimeout == 0 {
		o.ApprovalTimeout = DefaultApprovalTimeout
	}
	if err := CheckApprovalTimeout("approval timeout", o.ApprovalTimeout); err != nil {
		return Change{}, err
	}
	if o.RunInactivity != 0 {
		if err := CheckRunInactivity("run inactivity", o.RunInactivity); err != nil {
			return Change{}, err
		}
	}
	if o.Gate == "" {
		o.Gate = DefaultGate
	}
	if _, err := regexp.Compile(o.Gate); err != nil {
		return Change{}, core.Invalidf("gate %q is not a valid regular expression: %v", o.Gate, err)
	}
	if !filepath.IsAbs(o.Binary) || !RegistryLocation(o.DB) {
		return Change{}, core.Invalidf("clawpit binary %q must be an absolute path, and registry %q an absolute path or a postgres:// URL without a password", o.Binary, o.DB)
	}
	if o.OnFailure != "" && o.OnFailure != OnFailureBlock {
		return Change{}, core.Invalidf("onFailure %q: want %q or none", o.OnFailure, OnFailureBlock)
	}
	if o.GateOn != "" && o.GateOn != GateOnTool && o.GateOn != GateOnAsk {
		return Change{}, core.Invalidf("gate-on %q: want %q or %q", o.GateOn, GateOnTool, GateOnAsk)
	}
	ask := o.GateOn == GateOnAsk
	groups := map[string][]byte{}
	for _, ev := range Events {
		h := map[string]any{"type": "command", "command": HookCommand(o, ev == EventPreToolUse), "timeout": HookTimeoutSeconds}
		g := orderedObject{}
		switch {
		case ev == EventPreToolUse && ask:
			// PermissionRequest gates; this hook answers nothing (Claude
			// Code's rules decide) unless a gating budget is crossed, when
			// every tool call waits (What it costs).
			h["command"] = hookCommand(o, true, GateOnAsk)
			h["timeout"] = GateTimeoutSeconds(o.ApprovalTimeout)
			if o.OnFailure != "" {
				h["onFailure"] = o.OnFailure
			}
			g.set("matcher", mustJSON("*"))
		case ev == EventPreToolUse:
			h["timeout"] = GateTimeoutSeconds(o.ApprovalTimeout)
			if o.OnFailure != "" {
				h["onFailure"] = o.OnFailure
			}
			g.set("matcher", mustJSON("*")) // the hook applies the gate (--gate)
		case ev == EventPostToolUse:
			g.set("matcher", mustJSON("*"))
		}
		g.set("hooks", mustJSON([]any{orderedHook(h)}))
		groups[ev] = g.bytes()
	}
	if ask {
		h := map[string]any{"type": "command", "command": hookCommand(o, true, GateOnAsk), "timeout": GateTimeoutSeconds(o.ApprovalTimeout)}
		if o.OnFailure != "" {
			h["onFailure"] = o.OnFailure
		}
		g := orderedObject{}
		g.set("matcher", mustJSON(o.Gate))
		g.set("hooks", mustJSON([]any{orderedHook(h)}))
		groups[EventPermissionRequest] = g.bytes()
	}
	return rewriteEvents(o.Settings, append(slices.Clone(Events), EventPermissionRequest), func(ev string) []byte { return groups[ev] })
}

// Group is one matcher group of a hooks file in Claude Code's format (also
// Codex's hooks.json and Gemini CLI's settings.json): {"matcher": M (left
// out when ""), "hooks": [{"type": "command", "command": C, "timeout": T}]},
// T in the agent's own unit.
func Group(matcher, command string, timeout int) json.RawMessage {
	g := orderedObject{}
	if matcher != "" {
		g.set("matcher", mustJSON(matcher))
	}
	g.set("hooks", mustJSON([]any{orderedHook(map[string]any{"type": "command", "command": command, "timeout": timeout})}))
	return g.bytes()
}

// RewriteHooks merges groups (event → one group, see Group) into the hooks
// file at path the way Install does for Claude Code: clawpit's own entries
// replaced where they stand, events in order, everything else kept, an
// atomic write with a backup, nothing written when nothing changes. Used by
// the Codex and Gemini adapters, whose hooks files share the shape.
func RewriteHooks(path string, events []string, groups map[string]json.RawMessage) (Change, error) {
	return rewriteEvents(path, events, func(ev string) []byte { return groups[ev] })
}

// orderedHook writes a hook object with its keys in the reference's order
// (onFailure only when set).
func orderedHook(h map[string]any) json.RawMessage {
	o := orderedObject{}
	for _, k := range []string{"type", "command", "timeout", "onFailure"} {
		if v, ok := h[k]; ok {
			o.set(k, mustJSON(v))
		}
	}
	return o.bytes()
}

// Uninstall removes exactly the hooks Install added (commands ending in
// Marker), dropping a matcher group, an event and the "hooks" key only when
// they become empty. A missing file or one without clawpit hooks is left
// untouched (Changed false). A file install created (createdByInstall) is
// removed, with its directory when that is then empty (Removed).
func Uninstall(path string) (Change, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return Change{Path: path}, nil
	}
	return rewrite(path, func(string) []byte { return nil })
}

// Installed is one clawpit hook found in a settings file.
type Installed struct {
	Event   string `json:"event"`
	Matcher string `json:"matcher"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
	// OnFailure is the hook's `onFailure` ("block"), "" when not set.
	OnFailure string `json:"on_failure,omitempty"`
}

// Status lists the clawpit hooks in a settings file; none for a missing file.
func Status(path string) ([]Installed, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("read settings %s: %w", path, err)
	}
	top, err := parseObject(data)
	if err != nil {
		return nil, core.Invalidf("settings file %s: %v", path, err)
	}
	hooks, err := parseObject(top.get("hooks"))
	if err != nil {
		return nil, core.Invalidf("settings file %s: \"hooks\": %v", path, err)
	}
	var out []Installed
	for _, kv := range hooks {
		var gs []struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type      string `json:"type"`
				Command   string `json:"command"`
				Timeout   int    `json:"timeout"`
				OnFailure string `json:"onFailure"`
			} `json:"hooks"`
		}
		if json.Unmarshal(kv.val, &gs) != nil {
			continue
		}
		for _, g := range gs {
			for _, h := range g.Hooks {
				if h.Type == "command" && IsClawpitCommand(h.Command) {
					out = append(out, Installed{Event: kv.key, Matcher: g.Matcher, Command: h.Command, Timeout: h.Timeout, OnFailure: h.OnFailure})
				}
			}
		}
	}
	return out, nil
}

// rewrite strips clawpit's hooks from every event of the settings file at
// path and puts want(event) (nil: nothing) where the first of them stood, or
// at the end of the event's list; then writes the file if it changed.
//
// A file that install created (createdByInstall) gets no backup when it is
// rewritten, and is removed, with its directory when that is then empty,
// when the last of clawpit's hooks goes (Change.Removed).
func rewrite(path string, want func(event string) []byte) (Change, error) {
	return rewriteEvents(path, Events, want)
}

// rewriteEvents is rewrite for the events of any agent's hooks file.
func rewriteEvents(path string, evs []string, want func(event string) []byte) (Change, error) {
	ch := Change{Path: path}
	// A settings file kept as a symlink (dotfiles) is rewritten where it
	// points, so the link survives.
	linked := false
	if real, err := filepath.EvalSymlinks(path); err == nil {
		linked, path = real != path, real
	}
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return ch, fmt.Errorf("read settings %s: %w", path, err)
	}
	wanted := false // install (some event wants clawpit's hooks), not uninstall
	for _, ev := range evs {
		if want(ev) != nil {
			wanted = true
			break
		}
	}
	out, err := merged(path, old, evs, want)
	if err != nil {
		return ch, err
	}
	if exists && bytes.Equal(out, old) {
		return ch, nil
	}
	if exists {
		norm, err := parseObject(old)
		if err == nil {
			if same, _ := norm.indent(); bytes.Equal(same, out) {
				return ch, nil // only formatting would change
			}
		}
	}
	if !exists && !wanted {
		return ch, nil
	}
	created := exists && !linked && createdByInstall(path, old)
	if created && !wanted {
		if err := os.Remove(path); err != nil {
			return ch, fmt.Errorf("remove settings %s: %w", path, err)
		}
		_ = os.Remove(filepath.Dir(path)) // only when empty
		ch.Changed, ch.Removed = true, true
		return ch, nil
	}
	mode := os.FileMode(0o600)
	if exists {
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	if exists && !created {
		ch.Backup = path + BackupSuffix
		if err := writeAtomic(ch.Backup, old, mode); err != nil {
			return ch, err
		}
	}
	if err := writeAtomic(path, out, mode); err != nil {
		return ch, err
	}
	ch.Changed = true
	return ch, nil
}

// BackupSuffix names the copy of a settings file install or uninstall kept
// before changing it: <file>.clawpit-backup.
const BackupSuffix = ".clawpit-backup"

// createdByInstall reports whether the settings file at path (content old)
// is one install created: it holds clawpit's hooks and nothing else, and no
// backup lies beside it (install writes one whenever it changes a file that
// existed before, so its absence records that the file did not). The record
// lives in the files themselves and survives anything but a hand edit.
func createdByInstall(path string, old []byte) bool {
	if _, err := os.Lstat(path + BackupSuffix); !errors.Is(err, os.ErrNotExist) {
		return false
	}
	top, err := parseObject(old)
	if err != nil || len(top) == 0 {
		return false
	}
	bare, err := merged(path, old, nil, func(string) []byte { return nil })
	if err != nil {
		return false
	}
	empty, _ := orderedObject{}.indent()
	return bytes.Equal(bare, empty)
}

// merged is the settings file old (at path, for messages) with clawpit's
// hooks replaced by want(event), indented as written.
func merged(path string, old []byte, evs []string, want func(event string) []byte) ([]byte, error) {
	top, err := parseObject(old)
	if err != nil {
		return nil, core.Invalidf("settings file %s: %v", path, err)
	}
	hooks, err := parseObject(top.get("hooks"))
	if err != nil {
		return nil, core.Invalidf("settings file %s: \"hooks\": %v", path, err)
	}
	events := map[string]bool{}
	for i := range hooks {
		events[hooks[i].key] = true
	}
	for _, ev := range evs {
		if !events[ev] && want(ev) != nil {
			hooks = append(hooks, kv{key: ev, val: []byte("[]")})
		}
	}
	var kept orderedObject
	for _, e := range hooks {
		val, err := mergeEvent(e.val, want(e.key))
		if err != nil {
			return nil, core.Invalidf("settings file %s: hooks.%s: %v", path, e.key, err)
		}
		if val != nil {
			kept.set(e.key, val)
		}
	}
	switch {
	case len(kept) > 0:
		top.put("hooks", kept.bytes())
	case len(hooks) > 0:
		top.del("hooks") // held only clawpit's hooks
	}
	return top.indent()
}

// mergeEvent strips clawpit's hooks from one event's matcher-group array and
// inserts ours (nil: none) where the first clawpit hook stood, else at the
// end. It returns nil when the array ends up empty and held clawpit hooks.
func mergeEvent(raw []byte, ours []byte) ([]byte, error) {
	var groups []json.RawMessage
	if err := json.Unmarshal(raw, &groups); err != nil {
		return nil, fmt.Errorf("not an array of matcher groups: %w", err)
	}
	var out []json.RawMessage
	placed, hadOurs := false, false
	for _, g := range groups {
		stripped, removed, err := stripGroup(g)
		if err != nil {
			return nil, err
		}
		if removed {
			hadOurs = true
		}
		if stripped != nil {
			out = append(out, stripped)
		}
		if removed && !placed && ours != nil {
			out = append(out, ours)
			placed = true
		}
	}
	if !placed && ours != nil {
		out = append(out, ours)
	}
	if !hadOurs && ours == nil {
		return raw, nil // untouched
	}
	if len(out) == 0 {
		return nil, nil // held only clawpit's hooks
	}
	return mustJSON(out), nil
}

// stripGroup removes clawpit's hooks from one matcher group; nil when none is
// left and some were removed. A group that is not an object is kept as is.
func stripGroup(g json.RawMessage) (json.RawMessage, bool, error) {
	obj, err := parseObject(g)
	if err != nil {
		return g, false, nil
	}
	var hs []json.RawMessage
	if json.Unmarshal(obj.get("hooks"), &hs) != nil {
		return g, false, nil
	}
	var keep []json.RawMessage
	for _, h := range hs {
		var c struct {
			Type    string `json:"type"`
			Command string `json:"command"`
		}
		if json.Unmarshal(h, &c) == nil && c.Type == "command" && IsClawpitCommand(c.Command) {
			continue
		}
		keep = append(keep, h)
	}
	if len(keep) == len(hs) {
		return g, false, nil
	}
	if len(keep) == 0 {
		return nil, true, nil
	}
	obj.put("hooks", mustJSON(keep))
	return obj.bytes(), true, nil
}

// kv is one member of a JSON object, its value kept raw.
type kv struct {
	key string
	val json.RawMessage
}

// orderedObject is a JSON object that keeps its members' order and values.
type orderedObject []kv

// parseObject reads a JSON object keeping member order and raw values; empty
// input is an empty object.
func parseObject(data []byte) (orderedObject, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return orderedObject{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var o orderedObject
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("bad JSON: %w", err)
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, fmt.Errorf("bad JSON at %q: %w", key, err)
		}
		o = append(o, kv{key, val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("bad JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON object")
	}
	return o, nil
}

func (o orderedObject) get(key string) json.RawMessage {
	for _, m := range o {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

func (o *orderedObject) set(key string, val json.RawMessage) { *o = append(*o, kv{key, val}) }

// put replaces key's value where it stands, or appends it.
func (o *orderedObject) put(key string, val json.RawMessage) {
	for i := range *o {
		if (*o)[i].key == key {
			(*o)[i].val = val
			return
		}
	}
	o.set(key, val)
}

func (o *orderedObject) del(key string) {
	out := (*o)[:0]
	for _, m := range *o {
		if m.key != key {
			out = append(out, m)
		}
	}
	*o = out
}

// bytes is the compact object.
func (o orderedObject) bytes() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(mustJSON(m.key))
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// indent is the object as a settings file: two-space indent, final newline.
func (o orderedObject) indent() ([]byte, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, o.bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("format settings: %w", err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// mustJSON marshals v without HTML escaping; v is always marshalable here.
func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// writeAtomic writes data to path through a temporary file in the same
// directory (fsynced, then renamed), with mode.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteFileAtomic writes data to path through a fsynced temporary file in
// the same directory, renamed over it, with mode (the Codex and Gemini
// adapters' config files).
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	return writeAtomic(path, data, mode)
}
