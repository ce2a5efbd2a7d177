package cli

// `hooks install|uninstall|status --agent gemini` and `hook --agent
// gemini`: Gemini CLI's adapter (adapters/gemini). The hook never reads or
// prints its environment, which holds GEMINI_API_KEY.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/clawpit/clawpit/adapters/claude"
	"github.com/clawpit/clawpit/adapters/gemini"
	"github.com/spf13/cobra"
)

// geminiSettings resolves Gemini CLI's settings.json: --settings FILE,
// --config-dir DIR's settings.json, else ~/.gemini/settings.json.
func geminiSettings(cmd *cobra.Command, configDir string) (string, error) {
	if s, _ := cmd.Flags().GetString("settings"); s != "" {
		return filepath.Abs(s)
	}
	if configDir == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the home directory for ~/.gemini: %w", err)
		}
		configDir = filepath.Join(h, ".gemini")
	}
	return filepath.Abs(filepath.Join(configDir, "settings.json"))
}

func (a *app) installGemini(cmd *cobra.Command, configDir string, o gemini.InstallOptions) error {
	path, err := geminiSettings(cmd, configDir)
	if err != nil {
		return err
	}
	o.Settings = path
	ch, err := gemini.Install(o)
	if err != nil {
		return err
	}
	if a.jsonOut {
		return a.printJSON(ch)
	}
	if !ch.Changed {
		fmt.Fprintf(a.stdout, "clawpit hooks already installed in %s\n", path)
		return nil
	}
	fmt.Fprintf(a.stdout, "Installed clawpit hooks in %s (registry %s; tool calls matching %q wait up to %s for a decision).\n",
		path, o.DB, o.Gate, claude.FormatDuration(o.ApprovalTimeout))
	fmt.Fprintln(a.stdout, "Headless Gemini CLI runs offer shell and write tools only with --approval-mode yolo; clawpit's BeforeTool hook is then their gate.")
	return nil
}

func (a *app) uninstallGemini(cmd *cobra.Command, configDir string) error {
	path, err := geminiSettings(cmd, configDir)
	if err != nil {
		return err
	}
	ch, err := claude.Uninstall(path)
	if err != nil {
		return err
	}
	if a.jsonOut {
		return a.printJSON(ch)
	}
	if !ch.Changed {
		fmt.Fprintf(a.stdout, "no clawpit hooks in %s\n", path)
		return nil
	}
	fmt.Fprintf(a.stdout, "Removed clawpit hooks from %s (previous version kept as %s).\n", path, ch.Backup)
	return nil
}

func (a *app) statusGemini(cmd *cobra.Command, configDir string) error {
	path, err := geminiSettings(cmd, configDir)
	if err != nil {
		return err
	}
	hs, err := claude.Status(path)
	for i := range hs {
		hs[i].Command = redactURLs(hs[i].Command)
	}
	if a.jsonOut {
		if hs == nil {
			hs = []claude.Installed{}
		}
		if perr := a.printJSON(struct {
			Path  string             `json:"path"`
			Hooks []claude.Installed `json:"hooks"`
			Error string             `json:"error,omitempty"`
		}{path, hs, errText(err)}); perr != nil {
			return perr
		}
		return statusExit(err)
	}
	switch {
	case err != nil:
		fmt.Fprintf(a.stdout, "%s: %s\n", path, err)
	case len(hs) == 0:
		fmt.Fprintf(a.stdout, "%s: not installed\n", path)
	default:
		fmt.Fprintf(a.stdout, "%s: %d clawpit hooks\n", path, len(hs))
		for _, h := range hs {
			m := ""
			if h.Matcher != "" {
				m = " [" + h.Matcher + "]"
			}
			fmt.Fprintf(a.stdout, "  %-13s%s timeout %dms: %s\n", h.Event, m, h.Timeout, redactURLs(h.Command))
		}
	}
	return statusExit(err)
}

// hookGemini reads a Gemini CLI payload and answers (Gemini CLI hooks): a
// BeforeTool is held until the operator decides and answered deny or
// nothing (gemini.Answer), deny on any failure, before Gemini CLI's
// timeout; SessionStart, AfterTool, AfterAgent and SessionEnd are recorded
// like Claude Code's; other events are read and ignored.
func (a *app) hookGemini(ctx context.Context, timeout time.Duration, gated bool) error {
	start := time.Now()
	cfg := claude.Config{ApprovalTimeout: timeout, TaskKind: gemini.TaskKind, NestRunPrefix: gemini.RunPrefix, Agent: agentGemini}
	if err := claude.CheckApprovalTimeout("--approval-timeout", timeout); err != nil {
		if gated {
			a.stdout.Write(gemini.Answer(claude.DenyError(err)))
			return &exitError{code: exitOK, msg: "hook: " + err.Error()}
		}
		return &exitError{code: exitFailed, msg: "hook: " + err.Error()}
	}
	rctx, cancel := context.WithTimeoutCause(ctx, claude.PayloadReadTimeout,
		fmt.Errorf("stdin still open after %s", claude.FormatDuration(claude.PayloadReadTimeout)))
	defer cancel()
	var p *claude.Payload
	var err error
	if gated {
		p, err = gemini.ReadGated(rctx, a.stdin)
	} else {
		p, _, err = gemini.ReadPayload(rctx, a.stdin)
	}
	switch {
	case err != nil && gated:
		a.stdout.Write(gemini.Answer(claude.DenyError(err)))
		fmt.Fprintln(a.stderr, "clawpit: hook gemini BeforeTool: "+err.Error())
		return nil
	case errors.Is(err, claude.ErrPayloadTimeout):
		fmt.Fprintln(a.stderr, "clawpit: hook: "+err.Error())
		return nil
	case err != nil:
		return &exitError{code: exitFailed, msg: "hook: " + err.Error()}
	case p.HookEventName == claude.EventPreToolUse:
		return a.runGatedAs(ctx, start, cfg, p, gemini.Answer)
	case p.HookEventName == "":
		return nil // an event clawpit does not record
	}
	return a.runEvent(ctx, start, cfg, p)
}
