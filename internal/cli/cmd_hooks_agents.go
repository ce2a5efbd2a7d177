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
	"os"
	"path/filepath"
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
		c.Flags().StringVar(&gateOn, "gate-on", claude.GateOnTool, "what waits for an operator: every gated tool call (tool), or only what the agent would ask its user about (ask: Claude Code's PermissionRequest)")
	}
	claudeRun := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if gateOn != claude.GateOnTool && gateOn != claude.GateOnAsk && gateOn != "" {
			return usageError{fmt.Errorf("--gate-on %q: want tool or ask", gateOn)}
		}
		if gateOn == claude.GateOnAsk && agent != agentClaude {
			return usageError{fmt.Errorf("--gate-on ask is for --agent claude: %s", noAskMode[agent])}
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

// noAskMode says why an agent has no --gate-on ask.
var noAskMode = map[string]string{
	agentCodex:  "Codex fires PermissionRequest only in interactive runs (codex exec always runs with approval policy \"never\"), so headless Codex has nothing to ask; use --gate-on tool",
	agentGemini: "Gemini CLI has no permission-request hook event; use --gate-on tool",
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
	ch, err := codex.Install(codex.InstallOptions{Dir: dir, Binary: bin, DB: db, ApprovalTimeout: timeout, Gate: gate, RunInactivity: inactivity})
	if err != nil {
		return err
	}
	if a.jsonOut {
		return a.printJSON(ch)
	}
	if !ch.Changed {
		fmt.Fprintf(a.stdout, "clawpit hooks already installed and trusted in %s\n", codex.HooksPath(dir))
		return nil
	}
	fmt.Fprintf(a.stdout, "Installed clawpit hooks in %s, trusted in %s (registry %s; tool calls matching %q wait up to %s for a decision).\n",
		codex.HooksPath(dir), codex.ConfigPath(dir), db, gate, claude.FormatDuration(timeout))
	fmt.Fprintln(a.stdout, "New Codex sessions report to clawpit; approve or deny their tool calls in the console's Approvals pane.")
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
	if a.jsonOut {
		return a.printJSON(ch)
	}
	if !ch.Changed {
		fmt.Fprintf(a.stdout, "no clawpit hooks in %s\n", codex.HooksPath(dir))
		return nil
	}
	fmt.Fprintf(a.stdout, "Removed clawpit hooks and their trust from %s and %s.\n", codex.HooksPath(dir), codex.ConfigPath(dir))
	return nil
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
		if hs == nil {
			hs = []codex.Hook{}
		}
		if perr := a.printJSON(struct {
			Path  string       `json:"path"`
			Hooks []codex.Hook `json:"hooks"`
			Error string       `json:"error,omitempty"`
		}{codex.HooksPath(dir), hs, errText(err)}); perr != nil {
			return perr
		}
		return statusExit(err)
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
		fmt.Fprintf(a.stdout, "  %-13s%s timeout %ds, %s: %s\n", h.Event, m, h.Timeout, trust, redactURLs(h.Command))
	}
	if err != nil {
		return &exitError{code: exitCode(err), msg: err.Error()}
	}
	return nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// hookAgent is `hook --agent codex`: Codex's payloads, Codex's answers.
func (a *app) hookAgent(cmd *cobra.Command, agent, _ string) error {
	f := cmd.Flags()
	timeout, _ := f.GetDuration("approval-timeout")
	inactivity, _ := f.GetDuration("inactivity")
	gated, _ := f.GetBool("gated")
	if agent == agentGemini {
		return a.hookGemini(cmd.Context(), timeout, gated)
	}
	cfg := claude.Config{ApprovalTimeout: timeout, RunInactivity: inactivity, TaskKind: codex.TaskKind, Agent: agentCodex}
	if err := errors.Join(claude.CheckApprovalTimeout("--approval-timeout", timeout), claude.CheckRunInactivity("--inactivity", inactivity)); err != nil {
		if gated {
			a.stdout.Write(codex.Answer(claude.DenyError(err)))
			return &exitError{code: exitOK, msg: "hook: " + err.Error()}
		}
		return &exitError{code: exitFailed, msg: "hook: " + err.Error()}
	}
	return a.runCodexHook(cmd.Context(), cfg, gated)
}

// runCodexHook reads a Codex payload (within claude.PayloadReadTimeout) and
// answers (Codex hooks): a PreToolUse is held until the operator decides
// and answered deny or nothing (codex.Answer), deny on any failure, before
// Codex's own timeout; other events are recorded like Claude Code's
// (runEvent: spool, no output).
func (a *app) runCodexHook(ctx context.Context, cfg claude.Config, gated bool) error {
	start := time.Now()
	rctx, cancel := context.WithTimeoutCause(ctx, claude.PayloadReadTimeout,
		fmt.Errorf("stdin still open after %s", claude.FormatDuration(claude.PayloadReadTimeout)))
	defer cancel()
	var p *claude.Payload
	var err error
	if gated {
		p, err = codex.ReadGated(rctx, a.stdin)
	} else {
		p, err = codex.ReadPayload(rctx, a.stdin)
	}
	switch {
	case err != nil && gated:
		a.stdout.Write(codex.Answer(claude.DenyError(err)))
		fmt.Fprintln(a.stderr, "clawpit: hook codex PreToolUse: "+err.Error())
		return nil
	case errors.Is(err, claude.ErrPayloadTimeout):
		fmt.Fprintln(a.stderr, "clawpit: hook: "+err.Error())
		return nil
	case err != nil:
		return &exitError{code: exitFailed, msg: "hook: " + err.Error()}
	case p.HookEventName == codex.EventPreToolUse:
		if codex.InteractiveShell(p) {
			p.Note = codex.InteractiveWarning
		}
		return a.runGatedAs(ctx, start, cfg, p, codex.Answer)
	}
	return a.runEvent(ctx, start, cfg, p)
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
		answer(claude.DenyError(err), err)
		a.abandonDB = true // a transaction may still hang: exit without waiting for it
	}
	return nil
}

// hookClaudeAsk is `hook --gate-on ask --gated`, Claude Code's
// PermissionRequest hook (Claude Code hooks: PermissionRequest): the
// request waits in clawpit as an approval (no tool_use_id: Claude Code
// gives none) and is answered allow or deny in PermissionRequest's
// decision; deny on any failure, before Claude Code's timeout.
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
	p, err := claude.ReadPayloadWithin(rctx, a.stdin)
	if err == nil && p.HookEventName != claude.EventPermissionRequest {
		err = fmt.Errorf("%w: the --gate-on ask hook decides only PermissionRequest, got %q", core.ErrInvalid, hookkit.Clip(p.HookEventName, 64))
	}
	if err != nil {
		a.stdout.Write(encode(claude.DenyError(err)))
		fmt.Fprintln(a.stderr, "clawpit: hook PermissionRequest: "+err.Error())
		return nil
	}
	// Decided as a tool call: the same approval, wait and answer.
	p.HookEventName, p.ToolUseID = claude.EventPreToolUse, ""
	return a.runGatedAs(cmd.Context(), start, cfg, p, encode)
}
