package cli

// `clawpit hooks install|uninstall|status` and `clawpit hook`: the Claude Code
// adapter (README "Use with Claude Code"). `hook` is the command Claude Code runs for each hook
// event; its stdout carries only a PreToolUse decision, and it fails closed:
// a gated tool call that cannot be decided is denied, never allowed, and is
// always answered before Claude Code's own hook timeout.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clawpit/clawpit/adapters/claude"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

// parentPoll is how often a waiting gated hook checks that its parent
// (Claude Code, or the shell it started) still runs.
const parentPoll = 250 * time.Millisecond

// hookAnswerMargin is how long past the approval timeout a gated hook still
// works on a decision before it answers deny regardless (the registry may be
// locked); Claude Code's timeout is 30 s past the approval timeout.
const hookAnswerMargin = 10 * time.Second

// hooksCommands returns `hooks` and `hook`.
func hooksCommands(a *app) []*cobra.Command {
	hooks := groupCommand("hooks", "Install clawpit as the approval gate of Claude Code (install, uninstall, status)")
	hooks.Long = `Merge clawpit's hooks into a Claude Code settings file so every Claude Code
session on the machine appears in clawpit: sessions, sub-agent runs and their
tasks, tool calls waiting for approval in the Approvals pane, and Claude Code's
notifications in Alerts. A gated tool call (by default Bash, Write, Edit,
MultiEdit, NotebookEdit, WebFetch and MCP tools) waits until an operator
approves or denies it in clawpit; without a decision within the approval
timeout it is denied.`
	hooks.AddCommand(a.withAgent(hooksInstallCmd(a), a.hooksInstallAgent), a.withAgent(hooksUninstallCmd(a), a.hooksUninstallAgent),
		a.withAgent(hooksStatusCmd(a), a.hooksStatusAgent))
	return []*cobra.Command{hooks, a.withAgent(hookCmd(a), a.hookAgent)}
}

// defaultSettingsPath is ~/.claude/settings.json.
func defaultSettingsPath() (string, error) {
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the home directory for ~/.claude/settings.json: %w", err)
	}
	return filepath.Join(h, ".claude", "settings.json"), nil
}

func settingsFlag(c *cobra.Command, p *string) {
	c.Flags().StringVar(p, "settings", "", "Claude Code settings file (default ~/.claude/settings.json)")
}

func resolveSettings(p string) (string, error) {
	if p == "" {
		return defaultSettingsPath()
	}
	return filepath.Abs(p)
}

// hooksInstallOpts are the options of "hooks install": the settings file
// (empty: ~/.claude/settings.json), the gated hook's timeout, gate and
// --on-failure mode (auto, block or continue), a run's inactivity timeout,
// --gate-on (added by withAgent) and the command line to suggest again.
type hooksInstallOpts struct {
	settings   string
	timeout    time.Duration
	gate       string
	inactivity time.Duration
	onFailure  string
	gateOn     string
	rerun      string
}

func hooksInstallCmd(a *app) *cobra.Command {
	var o hooksInstallOpts
	c := &cobra.Command{
		Use:   "install",
		Short: "Merge clawpit's hooks into a Claude Code settings file",
		Long: `Merge clawpit's hooks into a Claude Code settings file (default
~/.claude/settings.json). Every other setting and every hook that is not
clawpit's stays as it was; installing again changes nothing. The file is
written atomically, keeps its mode, and the previous version is kept beside it
as <file>.clawpit-backup (none for a file install creates: uninstall deletes
that one). The hooks run this binary by absolute path against
the registry in force now (--db, CLAWPIT_DB or CLAWPIT_HOME).

--on-failure decides what Claude Code does when the gated hook itself cannot
answer (the binary was moved, the hook was killed or timed out): "block" blocks
the tool call (Claude Code 2.1.295 and later); "continue" leaves Claude Code's
default, which lets it through; "auto" (the default) blocks when the claude on
PATH is 2.1.295 or later. Older Claude Code rejects the whole settings file
when it holds the onFailure key.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.gateOn, _ = cmd.Flags().GetString("gate-on") // added by withAgent
			o.rerun = rerunLine(cmd)
			return runHooksInstall(cmd.Context(), a, o)
		},
	}
	settingsFlag(c, &o.settings)
	c.Flags().DurationVar(&o.timeout, "approval-timeout", claude.DefaultApprovalTimeout, "deny a gated tool call when no operator decides within this long (at most 576h: Claude Code's hook timer holds about 24.8 days)")
	c.Flags().StringVar(&o.gate, "gate", claude.DefaultGate, "regular expression of the tool names that wait for approval")
	c.Flags().DurationVar(&o.inactivity, "run-inactivity", claude.DefaultRunInactivity, "end a sub-agent's run as timed out after this long without a tool call (paused while it waits for approval)")
	c.Flags().StringVar(&o.onFailure, "on-failure", "auto", "when the gated hook cannot answer: block the tool call (block), let it through (continue), or block if the claude on PATH supports it (auto)")
	return c
}

// runHooksInstall checks every value and the settings file before anything
// is written (bad input creates no registry), creates the registry, merges
// the hooks into the settings file and says what it did.
func runHooksInstall(ctx context.Context, a *app, o hooksInstallOpts) error {
	if err := o.check(); err != nil {
		return err
	}
	path, err := resolveSettings(o.settings)
	if err != nil {
		return err
	}
	// A settings file install would refuse (not a JSON object) is
	// refused before the registry is created: bad input writes nothing.
	if _, err := claude.Status(path); err != nil {
		return err
	}
	bin, err := hookBinary(a.stderr)
	if err != nil {
		return err
	}
	db, hadPassword, err := hookRegistry(a.resolvedDBPath())
	if err != nil {
		return err
	}
	// Open once so the registry exists, with its directory, before
	// the first hook runs.
	if _, err := a.registryCreate(ctx); err != nil {
		return err
	}
	current, err := installedOnFailure(path)
	if err != nil {
		return err
	}
	of, warning := resolveOnFailure(ctx, o.onFailure, current, o.rerun)
	ch, err := claude.Install(claude.InstallOptions{Settings: path, Binary: bin, DB: db, ApprovalTimeout: o.timeout, Gate: o.gate,
		RunInactivity: o.inactivity, OnFailure: of, GateOn: o.gateOn})
	if err != nil {
		return err
	}
	if warning != "" {
		fmt.Fprintln(a.stderr, "clawpit: warning: "+warning)
	}
	if hadPassword && ch.Changed {
		fmt.Fprintln(a.stderr, "clawpit: warning: "+passwordNote(path))
	}
	return a.printHooksInstalled(o, path, db, of, ch)
}

// check refuses (usage errors) an unknown --on-failure mode, a hook timeout
// Claude Code cannot hold (claude.MaxApprovalTimeout), a bad run inactivity
// and a --gate that is no regular expression.
func (o hooksInstallOpts) check() error {
	if o.onFailure != "auto" && o.onFailure != "block" && o.onFailure != "continue" {
		return usageError{fmt.Errorf("--on-failure %q: want auto, block or continue", o.onFailure)}
	}
	// Claude Code's hook timeout is written from these: refused
	// before anything is written (claude.MaxApprovalTimeout).
	if err := claude.CheckApprovalTimeout("--approval-timeout", o.timeout); err != nil {
		return err
	}
	if err := claude.CheckRunInactivity("--run-inactivity", o.inactivity); err != nil {
		return err
	}
	if _, err := regexp.Compile(orDefault(o.gate, claude.DefaultGate)); err != nil {
		return usageError{fmt.Errorf("--gate %q is not a valid regular expression: %w", o.gate, err)}
	}
	return nil
}

// hookBinary is the absolute path, symlinks resolved, of the running
// binary, which the hooks run. A temporary "go run" build draws a warning
// on stderr: it disappears.
func hookBinary(stderr io.Writer) (string, error) {
	bin, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the clawpit binary: %w", err)
	}
	if bin, err = filepath.EvalSymlinks(bin); err != nil {
		return "", fmt.Errorf("find the clawpit binary: %w", err)
	}
	if strings.Contains(bin, string(filepath.Separator)+"go-build") {
		fmt.Fprintf(stderr, "clawpit: warning: %s is a temporary 'go run' build that will disappear; install a built binary (go build -tags sqlite_fts5 -o ~/.local/bin/clawpit .) and run install from it\n", bin)
	}
	return bin, nil
}

// installedOnFailure is the onFailure of the gated hook (of either --gate-on)
// installed in the settings file at path, "" when none is.
func installedOnFailure(path string) (string, error) {
	installed, err := claude.Status(path)
	if err != nil {
		return "", err
	}
	current := ""
	for _, h := range installed {
		if h.Event == claude.EventPreToolUse || h.Event == claude.EventPermissionRequest { // the gated hook of either --gate-on
			current = h.OnFailure
		}
	}
	return current, nil
}

// printHooksInstalled says what install did: the change as JSON (applied
// false, "already installed", when nothing changed), or a few lines of text:
// where, the registry, the gate and its timeout, the backup, what a failed
// gated hook does and where to decide.
func (a *app) printHooksInstalled(o hooksInstallOpts, path, db, of string, ch claude.Change) error {
	if a.jsonOut {
		reason := ""
		if !ch.Changed {
			reason = "already installed"
		}
		return a.printJSON(mutationJSON(core.Result{Applied: ch.Changed, Reason: reason}, "hooks", struct {
			claude.Change
			OnFailure string `json:"on_failure,omitempty"`
		}{ch, of}))
	}
	if !ch.Changed {
		fmt.Fprintf(a.stdout, "clawpit hooks already installed in %s\n", path)
		return nil
	}
	fmt.Fprintf(a.stdout, "Installed clawpit hooks in %s (registry %s; tool calls matching %q wait up to %s for a decision).\n",
		path, db, orDefault(o.gate, claude.DefaultGate), claude.FormatDuration(o.timeout))
	if ch.Backup != "" {
		fmt.Fprintf(a.stdout, "Previous settings kept as %s.\n", ch.Backup)
	}
	if of == claude.OnFailureBlock {
		fmt.Fprintln(a.stdout, "If the gated hook cannot answer (binary moved, hook killed or timed out), Claude Code blocks the tool call.")
	}
	fmt.Fprintln(a.stdout, "New Claude Code sessions report to clawpit; approve or deny their tool calls in the console's Approvals pane.")
	return nil
}

// resolveOnFailure turns --on-failure (auto, block or continue) into the
// gated hook's onFailure value ("block" or none) and, when the hook is left
// failing open, a warning saying why and what to run (rerun: this install's
// command line, which gets " --on-failure block" appended). current is what
// the installed gated hook has now: auto keeps it when Claude Code's version
// cannot be read (a re-install from a shell without claude on PATH must not
// strip a block set before).
func resolveOnFailure(ctx context.Context, mode, current, rerun string) (onFailure, warning string) {
	switch mode {
	case "block":
		return claude.OnFailureBlock, ""
	case "continue":
		return "", ""
	}
	v, text, err := claude.DetectVersion(ctx)
	switch {
	case err == nil && claude.SupportsOnFailure(v):
		return claude.OnFailureBlock, ""
	case err == nil:
		return "", fmt.Sprintf("Claude Code %q lets a gated tool call through when its hook cannot answer (binary moved, hook killed); "+
			"%s and later block it instead: upgrade, then run `%s`", text, claude.MinOnFailureVersion, rerun)
	case current == claude.OnFailureBlock:
		return current, "" // set before, by hand or for a Claude Code found then
	}
	why := "claude is not on PATH, so its version is unknown"
	if !errors.Is(err, claude.ErrClaudeNotFound) {
		why = fmt.Sprintf("Claude Code's version could not be read (%v)", err)
	}
	return "", why + ": the gated hook was installed without onFailure: block (Claude Code before " + claude.MinOnFailureVersion +
		" skips a settings file holding it); if yours is " + claude.MinOnFailureVersion + " or later, run `" + rerun +
		" --on-failure block` so that it blocks a gated tool call whose hook cannot answer"
}

// rerunLine is the command line of this `hooks install` with the flags the
// operator gave (global ones included, --on-failure left out), to be quoted
// in advice.
func rerunLine(cmd *cobra.Command) string {
	var global, local []string
	inherited := cmd.InheritedFlags()
	// Flags() holds every flag parsed, the parents' persistent ones merged
	// in; Visit walks those set.
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if f.Name == "on-failure" {
			return
		}
		v := f.Value.String()
		if f.Name == "db" && store.IsPostgresURL(v) {
			// Never print the password (issue 30): the line reconnects as
			// the hook will, through PGPASSWORD or ~/.pgpass.
			if loc, _, err := hookRegistry(v); err == nil {
				v = loc
			} else {
				v = store.RedactURL(v)
			}
		}
		arg := "--" + f.Name + "=" + claude.ShellQuote(v)
		if inherited.Lookup(f.Name) != nil {
			global = append(global, arg)
		} else {
			local = append(local, arg)
		}
	})
	return strings.Join(slices.Concat([]string{"clawpit"}, global, []string{"hooks", "install"}, local), " ")
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func hooksUninstallCmd(a *app) *cobra.Command {
	var settings string
	c := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove clawpit's hooks from a Claude Code settings file",
		Long: `Remove exactly the hooks 'clawpit hooks install' added; everything else in the
file stays, and the previous version is kept as <file>.clawpit-backup. A file
that install created (it holds nothing but clawpit's hooks and has no backup
beside it) is deleted instead, with its directory when that is then empty.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := resolveSettings(settings)
			if err != nil {
				return err
			}
			ch, err := claude.Uninstall(path)
			if err != nil {
				return err
			}
			if a.jsonOut {
				reason := ""
				if !ch.Changed {
					reason = "no clawpit hooks in the file"
				}
				return a.printJSON(mutationJSON(core.Result{Applied: ch.Changed, Reason: reason}, "hooks", ch))
			}
			switch {
			case !ch.Changed:
				fmt.Fprintf(a.stdout, "no clawpit hooks in %s\n", path)
			case ch.Removed:
				fmt.Fprintf(a.stdout, "Removed clawpit hooks: deleted %s, which 'hooks install' had created.\n", path)
			default:
				fmt.Fprintf(a.stdout, "Removed clawpit hooks from %s (previous version kept as %s).\n", path, ch.Backup)
			}
			return nil
		},
	}
	settingsFlag(c, &settings)
	return c
}

func hooksStatusCmd(a *app) *cobra.Command {
	var settings string
	c := &cobra.Command{
		Use:   "status",
		Short: "Show where clawpit's hooks are installed",
		Long: `Show clawpit's hooks in the Claude Code settings files: --settings FILE, or
~/.claude/settings.json and this directory's .claude/settings.json and
.claude/settings.local.json.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var paths []string
			if settings != "" {
				p, err := resolveSettings(settings)
				if err != nil {
					return err
				}
				paths = []string{p}
			} else {
				if p, err := defaultSettingsPath(); err == nil {
					paths = append(paths, p)
				}
				if wd, err := os.Getwd(); err == nil {
					paths = append(paths, filepath.Join(wd, ".claude", "settings.json"), filepath.Join(wd, ".claude", "settings.local.json"))
				}
			}
			type fileStatus struct {
				Path  string             `json:"path"`
				Hooks []claude.Installed `json:"hooks"`
				Error string             `json:"error,omitempty"`
			}
			var out []fileStatus
			var firstErr error // a settings file that cannot be read: the exit status says so
			for _, p := range paths {
				hs, err := claude.Status(p)
				for i := range hs {
					hs[i].Command = redactURLs(hs[i].Command)
				}
				fs := fileStatus{Path: p, Hooks: hs}
				if err != nil {
					fs.Error = err.Error()
					if firstErr == nil {
						firstErr = err
					}
				}
				if fs.Hooks == nil {
					fs.Hooks = []claude.Installed{}
				}
				out = append(out, fs)
			}
			if a.jsonOut {
				if err := a.printJSON(out); err != nil {
					return err
				}
				return statusExit(firstErr)
			}
			for _, fs := range out {
				switch {
				case fs.Error != "":
					fmt.Fprintf(a.stdout, "%s: %s\n", fs.Path, fs.Error)
				case len(fs.Hooks) == 0:
					fmt.Fprintf(a.stdout, "%s: not installed\n", fs.Path)
				default:
					fmt.Fprintf(a.stdout, "%s: %d clawpit hooks\n", fs.Path, len(fs.Hooks))
					for _, h := range fs.Hooks {
						m := ""
						if h.Matcher != "" {
							m = " [" + h.Matcher + "]"
						}
						of := ""
						if h.OnFailure != "" {
							of = ", onFailure " + h.OnFailure
						}
						fmt.Fprintf(a.stdout, "  %-13s%s timeout %ds%s: %s\n", h.Event, m, h.Timeout, of, redactURLs(h.Command))
					}
				}
			}
			return statusExit(firstErr)
		},
	}
	settingsFlag(c, &settings)
	return c
}

// statusExit is the exit of `hooks status` once its report is printed: 0, or
// the code of the first settings file it could not read (2 for bad JSON, 1
// for a read error), the message being in the report already.
func statusExit(err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: exitCode(err)}
}

// hookCmd is the command Claude Code runs for each hook event.
func hookCmd(a *app) *cobra.Command {
	var (
		timeout     time.Duration
		inactivity  time.Duration
		gated       bool
		installedBy string
		gate        string
	)
	c := &cobra.Command{
		Use:   "hook",
		Short: "Handle one hook event read from stdin (Claude Code runs it; see 'hooks install')",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_ = installedBy
			if err := claude.CheckApprovalTimeout("--approval-timeout", timeout); err != nil {
				return a.hookRefused(cmd.Context(), err)
			}
			if err := claude.CheckRunInactivity("--inactivity", inactivity); err != nil {
				return a.hookRefused(cmd.Context(), err)
			}
			cfg := claude.Config{ApprovalTimeout: timeout, RunInactivity: inactivity}
			if gate != "" {
				re, err := claude.CompileGate(gate)
				if err != nil {
					return a.hookRefused(cmd.Context(), fmt.Errorf("--gate %q is not a valid regular expression: %w", gate, err))
				}
				cfg.Gate = re
			}
			return a.runHook(cmd.Context(), cfg, gated)
		},
	}
	// The help text is built when shown, not on every hook event.
	help := c.HelpFunc()
	c.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		cmd.Long = hookHelp(hookAgents())
		help(cmd, args)
	})
	// A flag this binary does not know (an install from another clawpit
	// version) must not become exit 2, which blocks a Stop or any other
	// event; a tool call is still owed a deny.
	c.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return a.hookRefused(cmd.Context(), err)
	})
	f := c.Flags()
	f.DurationVar(&timeout, "approval-timeout", claude.DefaultApprovalTimeout, "deny a gated tool call when no operator decides within this long (at most 576h)")
	f.DurationVar(&inactivity, "inactivity", claude.DefaultRunInactivity, "inactivity budget of the sub-agent runs this records (at most 8760h)")
	f.BoolVar(&gated, "gated", false, "answer a permission decision, denying on any failure (set for PreToolUse)")
	f.StringVar(&gate, "gate", "", "regular expression of the tool names that wait for approval; any other tool call passes (no answer) unless a gating budget is crossed")
	f.StringVar(&installedBy, "installed-by", "", "marks a hook command installed by 'clawpit hooks install'")
	return c
}

// hookAgent is an agent runtime whose hook events `clawpit hook` handles,
// as `clawpit hook --help` documents it: how its hooks are installed, its
// events with the payload fields read, and a sample payload. Claude Code is
// the one today; another runtime (Codex, Gemini CLI) adds an entry.
type hookAgent struct {
	name    string
	install string // the command that installs its hooks
	events  []claude.EventDoc
	sample  string // one payload as the runtime writes it to stdin
}

func hookAgents() []hookAgent {
	return []hookAgent{{name: "Claude Code", install: "clawpit hooks install", events: claude.EventDocs(), sample: claude.SamplePayload}}
}

// hookHelp is `clawpit hook --help`'s text: what the command does and, for
// each agent, its events, their fields and a sample payload.
func hookHelp(agents []hookAgent) string {
	var b strings.Builder
	for _, ag := range agents {
		fmt.Fprintf(&b, "%s runs this command for each of its hook events, once\n'%s' has added it to its settings; you do not run it\nyourself, except to try a payload by hand.\n", ag.name, ag.install)
	}
	b.WriteString(`
It reads one hook payload (a JSON object, at most 1 MiB, complete within
3 s) from stdin and records it in the registry.

With --gated (the PreToolUse hook) it prints exactly one decision JSON on
stdout and exits 0: allow when an operator approved; deny when one denied,
when no one decided within --approval-timeout, when the payload is not a
readable PreToolUse (any other event, a repeated member name, bad JSON, over
1 MiB, stdin left open), or when the registry could not be reached in time.
A write-locked registry is retried until the deadline, then denied.
With --gate REGEX as well ('hooks install' writes it, with the matcher "*"),
a tool whose name REGEX does not match gets no answer at once (nothing on
stdout: the agent's own permission rules decide), unless a budget with the
action "gate" is crossed (see 'clawpit budget'): then it waits like any
gated call, the approval saying which budget.

Other events print nothing, answer within about a second and never block
the agent: when the registry is busy the event is kept in the hook spool
(<registry>.spool, 0700) and applied, in order, by the next hook, the daemon
or the console; exit 0. A broken registry exits 1 with the message on
stderr (the event stays spooled). For an event not listed below (an
unknown event) nothing is recorded, a line on stderr says so, exit 0.
`)
	for _, ag := range agents {
		fmt.Fprintf(&b, "\n%s events (hook_event_name) and the payload fields clawpit reads:\n", ag.name)
		w := 0
		for _, e := range ag.events {
			w = max(w, len(e.Name))
		}
		for _, e := range ag.events {
			fmt.Fprintf(&b, "  %-*s  %s\n  %-*s  fields: %s\n", w, e.Name, e.Records, w, "", strings.Join(e.Fields, ", "))
		}
		fmt.Fprintf(&b, "\nA sample %s payload (PreToolUse; clawpit does not read\ntranscript_path and permission_mode):\n", ag.name)
		for _, l := range strings.Split(ag.sample, "\n") {
			b.WriteString("  " + l + "\n")
		}
	}
	b.WriteString("\nTry one by hand: clawpit hook --gated < payload.json")
	return b.String()
}

// eventNames lists the names of events.
func eventNames(events []claude.EventDoc) []string {
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = e.Name
	}
	return names
}

// hookRefused answers a hook whose command line is bad: a PreToolUse (or a
// payload that cannot be read) is denied, exit 0; any other event exits 1
// with the message, never 2 (which would block it). A PermissionRequest
// (the --gate-on ask hook of Claude Code or Codex, whose deny shapes are
// the same) is denied in PermissionRequest's shape: a PreToolUse-shaped
// answer there is a failed hook, and the agent would ask its user or its
// own reviewer instead of denying. A payload that cannot be parsed is
// answered in PermissionRequest's shape when its bytes name that event
// (rawTap.namesPermissionRequest says why that is the safer guess).
func (a *app) hookRefused(ctx context.Context, err error) error {
	rctx, cancel := context.WithTimeout(ctx, claude.PayloadReadTimeout)
	defer cancel()
	var tap rawTap
	p, perr := claude.ReadPayloadWithin(rctx, io.TeeReader(a.stdin, &tap))
	deny := claude.DenyError(err)
	switch {
	case perr == nil && p.HookEventName == claude.EventPermissionRequest:
		a.stdout.Write(deny.PermissionRequestJSON())
	case perr == nil && p.HookEventName != claude.EventPreToolUse:
		return &exitError{code: exitFailed, msg: "hook: " + err.Error()}
	case perr != nil && tap.namesPermissionRequest():
		a.stdout.Write(deny.PermissionRequestJSON())
	default:
		a.stdout.Write(deny.JSON())
	}
	return &exitError{code: exitOK, msg: "hook: " + err.Error()}
}

// rawTap keeps the first claude.MaxPayloadBytes of a payload as it is
// read, so that a payload that cannot be parsed can still be sniffed for
// its event. It is safe for the reader goroutine ReadPayloadWithin leaves
// behind when stdin stays open.
type rawTap struct {
	mu sync.Mutex
	b  []byte
}

func (t *rawTap) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := claude.MaxPayloadBytes - len(t.b); room > 0 {
		t.b = append(t.b, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

// namesPermissionRequest reports whether the bytes read so far contain
// "PermissionRequest" anywhere.
//
// An unreadable payload of the --gate-on ask hook is either a
// PermissionRequest or a PreToolUse, and only the answer in the event's own
// shape denies; the other shape is a failed hook. A failed PermissionRequest
// hook hands the call to the agent's own user or reviewer, with no later
// hook: the operator is bypassed. A failed PreToolUse hook lets the call go
// on to the agent's own rules, which send anything needing approval to the
// PermissionRequest hook, still clawpit's. So when the bytes name
// PermissionRequest at all (even beside PreToolUse, as with a repeated
// hook_event_name), its shape is the one that fails closed.
func (t *rawTap) namesPermissionRequest() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Contains(t.b, []byte(claude.EventPermissionRequest))
}

// runHook reads the payload (within claude.PayloadReadTimeout), handles it
// and answers. Gated: exactly one decision JSON on stdout, exit 0 — deny on
// any failure and, as a last resort, at approval timeout + hookAnswerMargin
// from the start even when the registry hangs. Not gated: nothing on stdout,
// within about eventBudget (see runEvent).
func (a *app) runHook(ctx context.Context, cfg claude.Config, gated bool) error {
	start := time.Now()
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = claude.DefaultApprovalTimeout
	}
	rctx, cancel := context.WithTimeoutCause(ctx, claude.PayloadReadTimeout,
		fmt.Errorf("stdin still open after %s", claude.FormatDuration(claude.PayloadReadTimeout)))
	defer cancel()
	if gated {
		p, deny, err := claude.ReadGated(rctx, a.stdin)
		if err != nil {
			a.stdout.Write(deny.JSON())
			fmt.Fprintln(a.stderr, "clawpit: hook PreToolUse: "+err.Error())
			return nil
		}
		return a.runGated(ctx, start, cfg, p)
	}
	p, err := claude.ReadPayloadWithin(rctx, a.stdin)
	switch {
	case errors.Is(err, claude.ErrPayloadTimeout):
		// Nothing to record: Claude Code is not held up by it.
		fmt.Fprintln(a.stderr, "clawpit: hook: "+err.Error())
		return nil
	case err != nil:
		return &exitError{code: exitFailed, msg: "hook: " + err.Error()}
	case p.HookEventName == claude.EventPreToolUse:
		// A tool call reaching an ungated hook is still owed a decision.
		return a.runGated(ctx, start, cfg, p)
	case !claude.KnownEvent(p.HookEventName):
		// An event of a newer Claude Code, or a hook set up by hand for
		// another event: said, not blamed on a missing field, and never
		// blocking (exit 0).
		fmt.Fprintf(a.stderr, "clawpit: hook: unknown event %q: nothing recorded (clawpit handles %s; see 'clawpit hook --help')\n",
			p.HookEventName, strings.Join(eventNames(claude.EventDocs()), ", "))
		return nil
	}
	return a.runEvent(ctx, start, cfg, p)
}

// runGated decides the PreToolUse p: one decision JSON on stdout, exit 0.
func (a *app) runGated(ctx context.Context, start time.Time, cfg claude.Config, p *claude.Payload) error {
	return a.runGatedAs(ctx, start, cfg, p, claude.Decision.JSON)
}

// watchHookStop cancels sctx (through stop, with the cause) when a signal
// stops the hook or its parent exits.
func (a *app) watchHookStop(ctx, sctx context.Context, stop context.CancelCauseFunc) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// A parent that exits (Claude Code quit or was killed, or the shell of
	// an install without exec was stopped) leaves no one to answer either.
	ppid := os.Getppid()
	go func() {
		defer signal.Stop(sigs)
		tick := time.NewTicker(parentPoll)
		defer tick.Stop()
		for {
			select {
			case s := <-sigs:
				stop(fmt.Errorf("stopped by %s", unix.SignalName(s.(syscall.Signal))))
				return
			case <-ctx.Done():
				// The process's own handler took a SIGINT or SIGTERM that
				// came before ours was installed (while the payload was read).
				stop(errors.New("stopped by a signal"))
				return
			case <-tick.C:
				if os.Getppid() != ppid {
					stop(fmt.Errorf("its parent process %d exited", ppid))
					return
				}
			case <-sctx.Done():
				return
			}
		}
	}()
}

// gateRetry is how long a gated hook waits before it tries a busy registry
// again.
const gateRetry = 50 * time.Millisecond

// decideRetrying opens the registry, folds the hook spool in (events of the
// session that came before this tool call) and decides p, trying again while
// the registry is busy (write-locked, or a PostgreSQL server out of reach)
// until ctx ends: then the answer is deny with the last error. Any other
// failure is a deny at once.
func (a *app) decideRetrying(ctx context.Context, cfg claude.Config, p *claude.Payload) (claude.Decision, error) {
	var locked error // the last "still locked" the retries saw
	for {
		d, err := a.decideOnce(ctx, cfg, p)
		if err != nil && cfg.Outside(p.ToolName) && claude.IsBudgetUnread(err) {
			// Outside the gate only a crossed budget would hold the
			// call: one try, and a registry that cannot say what was
			// spent lets it pass (the agent's own rules decide) rather
			// than hold it. A call already held over budget is retried
			// while busy, then denied, as a gated call is: it must not
			// run because something failed while it waited.
			return claude.Decision{}, err
		}
		// A try the hook's own deadline cut short (SQLite's busy wait,
		// a slow read) ends the retries as a busy registry does: it is
		// the deadline of waiting for the registry, not a failure of its
		// own.
		cut := ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded)
		if err == nil || !registryBusy(err) && !cut {
			return d, err
		}
		if errors.Is(err, core.ErrBusy) {
			locked = err
		} else if locked != nil && ctx.Err() != nil {
			// The deadline cut short a try that was waiting on the lock:
			// the lock is the reason, not the deadline.
			err = locked
		}
		why := err.Error()
		a.gateBusy.Store(&why)
		t := time.NewTimer(gateRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			err = fmt.Errorf("the registry stayed busy until the hook's deadline: %w", err)
			return claude.DenyError(err), err
		case <-t.C:
		}
	}
}

func (a *app) decideOnce(ctx context.Context, cfg claude.Config, p *claude.Payload) (claude.Decision, error) {
	reg, err := a.registryCreate(ctx)
	if err != nil {
		// Nothing is known of the budgets yet: a tool outside the
		// gate passes (decideRetrying).
		return claude.DenyError(err), &claude.BudgetUnreadError{Err: err}
	}
	a.foldHookSpool(ctx, reg, time.Second, func(l string) { fmt.Fprintln(a.stderr, "clawpit: "+l) })
	h := &claude.Handler{Reg: reg, Cfg: cfg}
	d, err := h.Handle(ctx, p) // PreToolUse: never a nil decision
	return *d, err
}

// registryBusy reports whether err is worth another try: the registry was
// write-locked past the busy timeout, or its server could not be reached.
func registryBusy(err error) bool {
	return errors.Is(err, core.ErrBusy) || errors.Is(err, core.ErrUnavailable)
}
