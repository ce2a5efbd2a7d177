package cli

// `hooks install|uninstall|status --agent gemini` and `hook --agent
// gemini`: Gemini CLI's adapter (adapters/gemini). The hook never reads or
// prints its environment, which holds GEMINI_API_KEY.

import (
	"fmt"
	"os"
	"path/filepath"

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
	return a.reportChange(ch, "clawpit hooks already installed in "+path,
		fmt.Sprintf("Installed clawpit hooks in %s (registry %s; tool calls matching %q wait up to %s for a decision).",
			path, o.DB, o.Gate, claude.FormatDuration(o.ApprovalTimeout)),
		"Headless Gemini CLI runs offer shell and write tools only with --approval-mode yolo; clawpit's BeforeTool hook is then their gate.")
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
	done := fmt.Sprintf("Removed clawpit hooks from %s (previous version kept as %s).", path, ch.Backup)
	if ch.Removed {
		// The file held nothing but what 'hooks install' wrote: it is gone and
		// there is no backup to name.
		done = fmt.Sprintf("Removed clawpit hooks: deleted %s, which 'hooks install' had created.", path)
	}
	return a.reportChange(ch, "no clawpit hooks in "+path, done)
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
		return printStatusJSON(a, path, hs, err)
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
			fmt.Fprintf(a.stdout, "  %-13s%s timeout %dms: %s\n", h.Event, m, h.Timeout, h.Command)
		}
	}
	return statusExit(err)
}
