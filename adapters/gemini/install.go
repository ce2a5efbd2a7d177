package gemini

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"time"

	"github.com/clawpit/clawpit/adapters/claude"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
)

// InstallOptions is the input of Install.
type InstallOptions struct {
	Settings        string        // ~/.gemini/settings.json, or another
	Binary          string        // absolute path of the clawpit binary
	DB              string        // the registry: absolute path or password-less postgres:// URL (claude.RegistryLocation)
	ApprovalTimeout time.Duration // default claude.DefaultApprovalTimeout
	Gate            string        // BeforeTool matcher, default DefaultGate
}

// HookCommand is one clawpit hook's command line for Gemini CLI.
func HookCommand(o InstallOptions, gated bool) string {
	cmd := "exec " + claude.ShellQuote(o.Binary) + " --db " + claude.ShellQuote(o.DB) +
		" hook --agent gemini --approval-timeout " + termtext.FlagDuration(o.ApprovalTimeout)
	if gated {
		cmd += " --gated"
	}
	return cmd + " " + claude.Marker
}

// Install merges clawpit's hooks into Gemini CLI's settings.json (Claude
// Code's hook shape, timeouts in milliseconds; BeforeTool's is the approval
// timeout + 30 s), every other key kept; atomic, with a backup, idempotent.
func Install(o InstallOptions) (claude.Change, error) {
	if o.ApprovalTimeout == 0 {
		o.ApprovalTimeout = claude.DefaultApprovalTimeout
	}
	if err := claude.CheckApprovalTimeout("approval timeout", o.ApprovalTimeout); err != nil {
		return claude.Change{}, err
	}
	if o.Gate == "" {
		o.Gate = DefaultGate
	}
	if _, err := regexp.Compile(o.Gate); err != nil {
		return claude.Change{}, core.Invalidf("gate %q is not a valid regular expression: %v", o.Gate, err)
	}
	if !filepath.IsAbs(o.Binary) || !claude.RegistryLocation(o.DB) || !filepath.IsAbs(o.Settings) {
		return claude.Change{}, core.Invalidf("clawpit binary %q, registry %q (absolute, or a postgres:// URL without a password) and settings %q must be absolute paths", o.Binary, o.DB, o.Settings)
	}
	groups := map[string]json.RawMessage{}
	for _, ev := range Events {
		matcher, timeout := "", HookTimeoutMs
		if ev == EventBeforeTool {
			// invoke_agent reaches the gated hook too, which records the
			// sub-agent as a run and lets it start.
			matcher, timeout = o.Gate+"|"+ToolInvokeAgent, GateTimeoutMs(o.ApprovalTimeout)
		}
		groups[ev] = claude.Group(matcher, HookCommand(o, ev == EventBeforeTool), timeout)
	}
	return claude.RewriteHooks(o.Settings, Events, groups)
}
