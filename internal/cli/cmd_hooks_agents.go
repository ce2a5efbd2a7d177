package cli

// `clawpit hooks install|uninstall|status --agent codex|gemini` and
// `clawpit hook --agent codex|gemini`: the other agents' adapters beside
// Claude Code's (issue 28). cmd_hooks.go stays Claude Code's; this file
// wraps its commands with --agent and --config-dir and runs the other
// agents' paths.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/clawpit/clawpit/adapters/claude"
	"github.com/clawpit/clawpit/adapters/codex"
	"github.com/clawpit/clawpit/adapters/gemini"
	"github.com/clawpit/clawpit/adapters/hookkit"
	"github.com/clawpit/clawpit/core"
	"github.com/spf13/cobra"
)

// Agents clawpit has hook adapters for (--agent).
const (
	agentClaude = "claude"
	agentCodex  = "codex"
	agentGemini = "gemini"
)

// agentRunE is one command's path for an agent other than Claude Code.
type agentRunE func(cmd *cobra.Command, agent, configDir string) error

// withAgent adds --agent (default claude) and, unless hidden, --config-dir
// to c, running other for an agent other than Claude Code and c's own
// RunE for Claude Code.
func (a *app) withAgent(c *cobra.Command, other agentRunE) *cobra.Command {
	var agent, configDir string
	c.Flags().StringVar(&agent, "agent", agentClaude, "the agent: claude (Claude Code), codex (Codex CLI), gemini (Gemini CLI)")
	c.Flags().StringVar(&configDir, "config-dir", "", "the agent's configuration directory (codex: default $CODEX_HOME, else ~/.codex; gemini: default ~/.gemini)")
	var gateOn string
	if c.Name() == "install" || c.Name() == "hook" {
		c.Flags().StringVar(&gateOn, "gate-on", claude.GateOnTool, "what waits for an operator: every gated tool call (tool), or only what the agent would ask its user about (ask: its PermissionRequest; claude and codex)")
	}
	claudeRun := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if gateOn != claude.GateOnTool && gateOn != claude.GateOnAsk && gateOn != "" {
			return usageError{fmt.Errorf("--gate-on %q: want tool or ask", gateOn)}
		}
		if gateOn == claude.GateOnAsk && agent == agentGemini {
			return usageError{errors.New("--gate-on ask is for --agent claude or codex: Gemini CLI has no permission-request hook event; use --gate-on tool")}
		}
		switch agent {
		case agentClaude:
			if configDir != "" {
				return usageError{errors.New("--config-dir is for --agent codex or gemini; Claude Code's file is --settings")}
			}
			if gateOn == claude.GateOnAsk && c.Name() == "hook" {
				return a.hookClaudeAsk(cmd)
			}
			return claudeRun(cmd, args)
		case agentCodex, agentGemini:
			return other(cmd, agent, configDir)
		}
		return usageError{fmt.Errorf("--agent %q: want claude, codex or gemini", agent)}
	}
	return c
}

// codexDir resolves Codex's home: --config-dir, the directory of
// --settings (its hooks.json), $CODEX_HOME, else ~/.codex; absolute.
func codexDir(cmd *cobra.Command, configDir string) (string, error) {
	if configDir == "" {
		if s, _ := cmd.Flags().GetString("settings"); s != "" {
			configDir = filepath.Dir(s)
		}
	}
	if configDir == "" {
		configDir = os.Getenv("CODEX_HOME")
	}
	if configDir == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the home directory for ~/.codex: %w", err)
		}
		configDir = filepath.Join(h, ".codex")
	}
	return filepath.Abs(configDir)
}

// hooksInstallAgent is `hooks install --agent codex`.
func (a *app) hooksInstallAgent(cmd *cobra.Command, agent, configDir string) error {
	f := cmd.Flags()
	timeout, _ := f.GetDuration("approval-timeout")
	inactivity, _ := f.GetDuration("run-inactivity")
	gate, _ := f.GetString("gate")
	if !f.Changed("gate") {
		gate = codex.DefaultGate
		if agent == agentGemini {
			gate = gemini.DefaultGate
		}
	}
	if err := claude.CheckApprovalTimeout("--approval-timeout", timeout); err != nil {
		return err
	}
	if err := claude.CheckRunInactivity("--run-inactivity", inactivity); err != nil {
		return err
	}
	bin, err := os.Executable()
	if err == nil {
		bin, err = filepath.EvalSymlinks(bin)
	}
	if err != nil {
		return fmt.Errorf("find the clawpit binary: %w", err)
	}
	db, hadPassword, err := hookRegistry(a.resolvedDBPath())
	if err != nil {
		return err
	}
	if hadPassword {
		fmt.Fprintln(a.stderr, "clawpit: warning: "+passwordNote("the "+agent+" hook commands"))
	}
	if _, err := a.registryCreate(cmd.Context()); err != nil {
		return err
	}
	if agent == agentGemini {
		return a.installGemini(cmd, configDir, gemini.InstallOptions{Binary: bin, DB: db, ApprovalTimeout: timeout, Gate: gate})
	}
	dir, err := codexDir(cmd, configDir)
	if err != nil {
		return err
	}
	gateOn, _ := f.GetString("gate-on")
	ch, err := codex.Install(codex.InstallOptions{Dir: dir, Binary: bin, DB: db, ApprovalTimeout: timeout, Gate: gate, RunInactivity: inactivity, GateOn: gateOn})
	if err != nil {
		return err
	}
	what := "tool calls matching %q wait"
	next := "New Codex sessions report to clawpit; approve or deny their tool calls in the console's Approvals pane."
	if gateOn == claude.GateOnAsk {
		what = "what Codex would ask you about (PermissionRequest) matching %q waits"
		next = "Codex asks only when its approval policy says so: interactive `codex`, or `codex exec --approve-for-me`; a plain `codex exec` never asks, so nothing waits. An interactive shell still waits for an operator."
	}
	return a.reportChange(ch, "clawpit hooks already installed and trusted in "+codex.HooksPath(dir),
		fmt.Sprintf("Installed clawpit hooks in %s, trusted in %s (registry %s; "+what+" up to %s for a decision).",
			codex.HooksPath(dir), codex.ConfigPath(dir), db, gate, claude.FormatDuration(timeout)), next)
}

// reportChange prints what an install or uninstall did: ch as JSON, or
// unchanged when nothing was written, else the lines of changed.
func (a *app) reportChange(ch claude.Change, unchanged string, changed ...string) error {
	if a.jsonOut {
		return a.printJSON(ch)
	}
	if !ch.Changed {
		changed = []string{unchanged}
	}
	for _, l := range changed {
		fmt.Fprintln(a.stdout, l)
	}
	return nil
}

// hooksUninstallAgent is `hooks uninstall --agent codex|gemini`.
func (a *app) hooksUninstallAgent(cmd *cobra.Command, agent, configDir string) error {
	if agent == agentGemini {
		return a.uninstallGemini(cmd, configDir)
	}
	dir, err := codexDir(cmd, configDir)
	if err != nil {
		return err
	}
	ch, err := codex.Uninstall(dir)
	if err != nil {
		return err
	}
	return a.reportChange(ch, "no clawpit hooks in "+codex.HooksPath(dir),
		fmt.Sprintf("Removed clawpit hooks and their trust from %s and %s.", codex.HooksPath(dir), codex.ConfigPath(dir)))
}

// hooksStatusAgent is `hooks status --agent codex`: the hooks with their
// trust; exit 1 and the one step that trusts them when Codex would skip
// any.
func (a *app) hooksStatusAgent(cmd *cobra.Command, agent, configDir string) error {
	if agent == agentGemini {
		return a.statusGemini(cmd, configDir)
	}
	dir, err := codexDir(cmd, configDir)
	if err != nil {
		return err
	}
	hs, err := codex.Status(dir)
	for i := range hs {
		hs[i].Command = redactURLs(hs[i].Command)
	}
	if a.jsonOut {
		return printStatusJSON(a, codex.HooksPath(dir), hs, err)
	}
	if len(hs) == 0 && err == nil {
		fmt.Fprintf(a.stdout, "%s: not installed\n", codex.HooksPath(dir))
		return nil
	}
	fmt.Fprintf(a.stdout, "%s: %d clawpit hooks\n", codex.HooksPath(dir), len(hs))
	for _, h := range hs {
		m, trust := "", "trusted"
		if h.Matcher != "" {
			m = " [" + h.Matcher + "]"
		}
		if !h.Trusted {
			trust = "NOT TRUSTED (skipped by Codex)"
		}
		fmt.Fprintf(a.stdout, "  %-13s%s timeout %ds, %s: %s\n", h.Event, m, h.Timeout, trust, h.Command)
	}
	if err != nil {
		return &exitError{code: exitCode(err), msg: err.Error()}
	}
	return nil
}

// printStatusJSON is `hooks status --json` of an agent's file: {"path",
// "hooks" ([] when none), "error" (when the file or its trust could not be
// read)}, then statusExit(err).
func printStatusJSON[H any](a *app, path string, hs []H, err error) error {
	if hs == nil {
		hs = []H{}
	}
	var msg string
	if err != nil {
		msg = err.Error()
	}
	if perr := a.printJSON(struct {
		Path  string `json:"path"`
		Hooks []H    `json:"hooks"`
		Error string `json:"error,omitempty"`
	}{path, hs, msg}); perr != nil {
		return perr
	}
	return statusExit(err)
}

// agentHook is what `clawpit hook --agent X` needs of the adapter of an
// agent other than Claude Code: how it reads a payload (any event, or the
// gated hook's only), how it answers a decision, and the registry mapping's
// settings. Both readers return the payload mapped onto Claude Code's
// events (claude.Handler); an empty event is one clawpit does not record.
type agentHook struct {
	gatedEvent string // the agent's name of the gated event, for messages: "PreToolUse", "BeforeTool"
	read       func(context.Context, io.Reader) (*claude.Payload, error)
	readGated  func(context.Context, io.Reader) (*claude.Payload, error)
	answer     func(claude.Decision) []byte
	// answerPermission, when set (Codex under --gate-on ask), is the
	// deny of a gated payload that cannot be read but names
	// PermissionRequest (rawTap.namesPermissionRequest: the shape that
	// fails closed).
	answerPermission func(claude.Decision) []byte
	// inactivity: the agent has sub-agents with ids of their own, so
	// --inactivity applies (and is checked).
	inactivity bool
	// decide, when set, is the rule for a tool call or permission request
	// (p mapped onto claude.EventPreToolUse or as read): the encoder of the
	// answer when it waits for an operator, p adjusted for the approval
	// (Note, ToolUseID); nil when it passes at once with no answer.
	// Unset: every PreToolUse waits, answered with answer.
	decide func(p *claude.Payload) func(claude.Decision) []byte
	// overBudget, when set (Codex under --gate-on ask), answers a
	// PreToolUse that decide lets pass: it still waits when a budget with
	// the action gate is crossed (as a tool outside Claude Code's --gate
	// does), and passes with no answer otherwise.
	overBudget func(claude.Decision) []byte
	cfg        claude.Config
}

// agentHooks are the hook adapters of the agents other than Claude Code;
// ask: --gate-on ask (Codex only).
func agentHooks(agent string, ask bool) agentHook {
	if agent == agentGemini {
		return agentHook{gatedEvent: gemini.EventBeforeTool, readGated: gemini.ReadGated, answer: gemini.Answer,
			read: func(ctx context.Context, r io.Reader) (*claude.Payload, error) {
				p, _, err := gemini.ReadPayload(ctx, r)
				return p, err
			},
			cfg: claude.Config{TaskKind: gemini.TaskKind, NestRunPrefix: gemini.RunPrefix, Agent: agentGemini}}
	}
	h := agentHook{gatedEvent: codex.EventPreToolUse, read: codex.ReadPayload, readGated: codex.ReadGated, answer: codex.Answer,
		inactivity: true, decide: codexTool,
		cfg: claude.Config{TaskKind: codex.TaskKind, Agent: agentCodex}}
	if ask {
		h.gatedEvent, h.readGated = codex.EventPermissionRequest+" or "+codex.EventPreToolUse, codex.ReadAsk
		h.decide, h.answerPermission, h.overBudget = codexAsk, codex.AnswerPermission, codex.Answer
	}
	return h
}

// codexAsk is the gated Codex hook's rule under --gate-on ask. A
// PermissionRequest (Codex would ask its user) waits for an operator and
// is answered in PermissionRequest's contract (codex.AnswerPermission),
// paired with its call by the rollout (codex.PairCall: turn_id and
// command) for the approval's tool-call id. A PreToolUse waits only when it
// opens an interactive shell (codex.InteractiveShell), whose later input no
// hook sees; any other gets nil here and passes with no answer, Codex's
// own rules deciding it, unless a gating budget is crossed
// (agentHook.overBudget: the budgets are read, and while any is set the
// rollout is counted, as for any tool call).
func codexAsk(p *claude.Payload) func(claude.Decision) []byte {
	if p.HookEventName == codex.EventPermissionRequest {
		id, tty := codex.PairCall(p)
		if tty || codex.InteractiveShell(p) {
			p.Note = codex.InteractiveWarning
		}
		// Decided as a tool call: the same approval, wait and answer.
		p.HookEventName, p.ToolUseID = claude.EventPreToolUse, id
		return codex.AnswerPermission
	}
	if !codex.InteractiveShell(p) {
		return nil
	}
	p.Note = codex.InteractiveWarning
	return codex.Answer
}

// codexTool is the gated Codex hook's rule under --gate-on tool: every
// PreToolUse waits for an operator (an interactive shell with its
// warning); a PermissionRequest, installed only in ask mode, passes
// (Codex's own approval then decides).
func codexTool(p *claude.Payload) func(claude.Decision) []byte {
	if p.HookEventName != claude.EventPreToolUse {
		return nil
	}
	if codex.InteractiveShell(p) {
		p.Note = codex.InteractiveWarning
	}
	return codex.Answer
}

// hookAgent is `hook --agent codex|gemini`: the agent's payloads, the
// agent's answers (runAgentHook).
func (a *app) hookAgent(cmd *cobra.Command, agent, _ string) error {
	f := cmd.Flags()
	timeout, _ := f.GetDuration("approval-timeout")
	inactivity, _ := f.GetDuration("inactivity")
	gated, _ := f.GetBool("gated")
	gateOn, _ := f.GetString("gate-on")
	h := agentHooks(agent, gateOn == claude.GateOnAsk)
	h.cfg.ApprovalTimeout = timeout
	err := claude.CheckApprovalTimeout("--approval-timeout", timeout)
	if h.inactivity {
		h.cfg.RunInactivity = inactivity
		err = errors.Join(err, claude.CheckRunInactivity("--inactivity", inactivity))
	}
	if err != nil {
		if gated && h.answerPermission != nil {
			// The payload says which event's deny denies.
			return a.hookRefused(cmd.Context(), err)
		}
		if gated {
			a.stdout.Write(h.answer(claude.DenyError(err)))
			return &exitError{code: exitOK, msg: "hook: " + err.Error()}
		}
		return &exitError{code: exitFailed, msg: "hook: " + err.Error()}
	}
	return a.runAgentHook(cmd.Context(), agent, h, gated)
}

// runAgentHook reads one payload (within claude.PayloadReadTimeout) and
// answers in the agent's contract: the gated event is held until the
// operator decides and answered deny or nothing (h.answer), deny on any
// failure, before the agent's own timeout; other events are recorded like
// Claude Code's (runEvent: spool, no output), those clawpit does not record
// read and ignored.
func (a *app) runAgentHook(ctx context.Context, agent string, h agentHook, gated bool) error {
	start := time.Now()
	rctx, cancel := context.WithTimeoutCause(ctx, claude.PayloadReadTimeout,
		fmt.Errorf("stdin still open after %s", claude.FormatDuration(claude.PayloadReadTimeout)))
	defer cancel()
	read := h.read
	if gated {
		read = h.readGated
	}
	var tap rawTap
	in := a.stdin
	if gated && h.answerPermission != nil {
		in = io.TeeReader(a.stdin, &tap)
	}
	p, err := read(rctx, in)
	switch {
	case err != nil && gated:
		answer := h.answer
		if h.answerPermission != nil && tap.namesPermissionRequest() {
			answer = h.answerPermission
		}
		a.stdout.Write(answer(claude.DenyError(err)))
		fmt.Fprintf(a.stderr, "clawpit: hook %s %s: %s\n", agent, h.gatedEvent, err)
		return nil
	case errors.Is(err, claude.ErrPayloadTimeout):
		fmt.Fprintln(a.stderr, "clawpit: hook: "+err.Error())
		return nil
	case err != nil:
		return &exitError{code: exitFailed, msg: "hook: " + err.Error()}
	case p.HookEventName == claude.EventPreToolUse || p.HookEventName == claude.EventPermissionRequest:
		encode := h.answer
		if h.decide != nil {
			encode = h.decide(p)
		}
		cfg := h.cfg
		if encode == nil && h.overBudget != nil && p.HookEventName == claude.EventPreToolUse {
			// Outside every gate: held only over a gating budget.
			encode, cfg.Gate = h.overBudget, regexp.MustCompile(`[^\x00-\x{10FFFF}]`)
		}
		if encode == nil {
			return nil // passes at once: the agent's own rules decide
		}
		return a.runGatedAs(ctx, start, cfg, p, encode)
	case p.HookEventName == "":
		return nil // an event clawpit does not record
	}
	return a.runEvent(ctx, start, h.cfg, p)
}

// runGatedAs answers one gated hook call in an agent's contract: encode
// turns the decision into what the agent reads on stdout (possibly
// nothing). Deny on any failure, and at approval timeout +
// hookAnswerMargin from start at the latest; a signal or the parent's exit
// withdraws the approval at once (watchHookStop).
func (a *app) runGatedAs(ctx context.Context, start time.Time, cfg claude.Config, p *claude.Payload, encode func(claude.Decision) []byte) error {
	var once sync.Once
	answer := func(d claude.Decision, err error) {
		once.Do(func() {
			a.stdout.Write(encode(d))
			if err != nil {
				fmt.Fprintln(a.stderr, "clawpit: hook PreToolUse: "+err.Error())
			}
		})
	}
	deadline := start.Add(cfg.ApprovalTimeout + hookAnswerMargin)
	// The signals that end the process's context are handled here, to say
	// which one stopped the hook.
	hctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline.Add(-hookAnswerMargin/2))
	defer cancel()
	// The agent stops a hook it no longer waits for (the user interrupts
	// the tool call, or the hook timeout passes): the approval is then
	// withdrawn, not left pending for an operator to decide in vain.
	sctx, stop := context.WithCancelCause(hctx)
	defer stop(nil)
	a.watchHookStop(ctx, sctx, stop)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d, err := a.decideRetrying(sctx, cfg, p)
		if c := context.Cause(sctx); err != nil && errors.Is(err, context.Canceled) && c != nil && !errors.Is(c, context.Canceled) &&
			!strings.Contains(err.Error(), c.Error()) {
			// Stopped before the approval was asked (while the registry
			// was opened or retried): say by what, not "context canceled".
			err = fmt.Errorf("stopped before an operator decided (%v)", c)
			d = claude.DenyError(err)
		}
		answer(d, err)
	}()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		err := errors.New("no answer from the registry within " + claude.FormatDuration(cfg.ApprovalTimeout+hookAnswerMargin))
		if why := a.gateBusy.Load(); why != nil {
			// Its last try was still waiting on the registry's lock.
			err = fmt.Errorf("%w: the registry stayed busy (%s)", err, *why)
		}
		answer(claude.DenyError(err), err)
		a.abandonDB = true // a transaction may still hang: exit without waiting for it
	}
	return nil
}

// hookClaudeAsk is `hook --gate-on ask --gated`, Claude Code's
// PermissionRequest hook (Claude Code hooks: PermissionRequest): the
// request waits in clawpit as an approval (no tool_use_id: Claude Code
// gives none) and is answered allow or deny in PermissionRequest's
// decision; deny on any failure, before Claude Code's timeout. Its
// PreToolUse hook (matcher "*") answers nothing, Claude Code's own rules
// deciding, unless a budget with the action gate is crossed: then the call
// waits as a gated one, answered in PreToolUse's decision.
func (a *app) hookClaudeAsk(cmd *cobra.Command) error {
	start := time.Now()
	f := cmd.Flags()
	timeout, _ := f.GetDuration("approval-timeout")
	inactivity, _ := f.GetDuration("inactivity")
	encode := func(d claude.Decision) []byte { return d.PermissionRequestJSON() }
	if err := errors.Join(claude.CheckApprovalTimeout("--approval-timeout", timeout), claude.CheckRunInactivity("--inactivity", inactivity)); err != nil {
		a.stdout.Write(encode(claude.DenyError(err)))
		return &exitError{code: exitOK, msg: "hook: " + err.Error()}
	}
	cfg := claude.Config{ApprovalTimeout: timeout, RunInactivity: inactivity}
	rctx, cancel := context.WithTimeoutCause(cmd.Context(), claude.PayloadReadTimeout,
		fmt.Errorf("stdin still open after %s", claude.FormatDuration(claude.PayloadReadTimeout)))
	defer cancel()
	var tap rawTap
	p, err := claude.ReadPayloadWithin(rctx, io.TeeReader(a.stdin, &tap))
	if err == nil && p.HookEventName != claude.EventPermissionRequest && p.HookEventName != claude.EventPreToolUse {
		err = fmt.Errorf("%w: the --gate-on ask hook decides only PermissionRequest and PreToolUse, got %q", core.ErrInvalid, hookkit.Clip(p.HookEventName, 64))
	}
	if err != nil {
		if p == nil && !tap.namesPermissionRequest() {
			// An unreadable PreToolUse: its own deny (the shape that
			// fails closed; rawTap.namesPermissionRequest).
			encode = claude.Decision.JSON
		}
		a.stdout.Write(encode(claude.DenyError(err)))
		fmt.Fprintln(a.stderr, "clawpit: hook --gate-on ask: "+err.Error())
		return nil
	}
	if p.HookEventName == claude.EventPreToolUse {
		// Claude Code's own rules decide it (no answer) unless a gating
		// budget is crossed: every tool is outside this gate.
		cfg.Gate = regexp.MustCompile(`[^\x00-\x{10FFFF}]`)
		return a.runGatedAs(cmd.Context(), start, cfg, p, claude.Decision.JSON)
	}
	// Decided as a tool call: the same approval, wait and answer.
	p.HookEventName, p.ToolUseID = claude.EventPreToolUse, ""
	return a.runGatedAs(cmd.Context(), start, cfg, p, encode)
}
