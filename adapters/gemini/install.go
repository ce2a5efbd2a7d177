package gemini

import (
	"cmp"
	"encoding/json"
	"time"

	"github.com/clawpit/clawpit/adapters/claude"
	"github.com/clawpit/clawpit/adapters/hookkit"
)

// InstallOptions is the input of Install.
type InstallOptions struct {
	Settings        string        // ~/.gemini/settings.json, or another
	Binary          string        // absolute path of the clawpit binary
	DB              string        // the registry: absolute path or password-less postgres:// URL (claude.RegistryLocation)
	ApprovalTimeout time.Duration // default claude.DefaultApprovalTimeout
	Gate            string        // BeforeTool matcher, default DefaultGate
}

// target is o as hookkit's Target: the hook command's parts and the gate.
func (o InstallOptions) target() hookkit.Target {
	return hookkit.Target{Agent: "gemini", Binary: o.Binary, DB: o.DB, ApprovalTimeout: o.ApprovalTimeout, Gate: o.Gate}
}

// HookCommand is one clawpit hook's command line for Gemini CLI
// (hookkit.Target.Command with --agent gemini, and --gated for BeforeTool).
func HookCommand(o InstallOptions, gated bool) string {
	if gated {
		return o.target().Command("--gated")
	}
	return o.target().Command()
}

// Install merges clawpit's hooks into Gemini CLI's settings.json (Claude
// Code's hook shape, timeouts in milliseconds; BeforeTool's is the approval
// timeout + 30 s), every other key kept; atomic, with a backup, idempotent.
// Errors wrap core.ErrInvalid for a bad gate, relative paths or an approval
// timeout out of range; nothing is written then.
func Install(o InstallOptions) (claude.Change, error) {
	if o.ApprovalTimeout == 0 {
		o.ApprovalTimeout = claude.DefaultApprovalTimeout
	}
	t := o.target()
	if err := cmp.Or(claude.CheckApprovalTimeout("approval timeout", o.ApprovalTimeout), t.Check(DefaultGate, "settings", o.Settings)); err != nil {
		return claude.Change{}, err
	}
	o.Gate = t.Gate
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
