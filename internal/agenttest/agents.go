package agenttest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Agent is one real CLI set up to run headless against a stand-in, in a
// scratch HOME (Home) and working directory (Work) of its own.
type Agent struct {
	Bin     string   // the CLI's executable
	BaseURL string   // the stand-in's URL
	Home    string   // scratch HOME (its tmp/ is TMPDIR)
	Work    string   // the run's working directory
	Env     []string // more environment for the CLI, appended last
	kind    string   // "claude", "codex" or "gemini"
}

// newAgent requires the CLI named by env and makes its scratch dirs.
func newAgent(t testing.TB, kind, env, pkg, baseURL string) *Agent {
	t.Helper()
	bin := RequireCLI(t, env, pkg)
	home, work, err := scratch(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Agent{Bin: bin, BaseURL: baseURL, Home: home, Work: work, kind: kind}
}

// NewClaude is Claude Code (CLAWPIT_CLAUDE) against an Anthropic stand-in:
// ANTHROPIC_BASE_URL, a dummy ANTHROPIC_API_KEY,
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 (no telemetry, update or
// feature-flag calls), Claude Code's config under the scratch HOME.
func NewClaude(t testing.TB, baseURL string) *Agent {
	return newAgent(t, "claude", EnvClaude, "@anthropic-ai/claude-code", baseURL)
}

// NewCodex is Codex CLI (CLAWPIT_CODEX) against an OpenAI Responses
// stand-in: CODEX_HOME=Home/.codex holds a config.toml with the custom
// provider "agenttest" (wire_api = "responses", env_key
// AGENTTEST_API_KEY), the model "agenttest-model" (outside Codex's
// catalogue, so its shell tool is exec_command {cmd}), and the working
// directory trusted, update checks, analytics, telemetry and plugins off.
func NewCodex(t testing.TB, baseURL string) *Agent {
	a := newAgent(t, "codex", EnvCodex, "@openai/codex", baseURL)
	if err := os.MkdirAll(a.CodexHome(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a.CodexHome(), "config.toml"), []byte(a.codexConfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	return a
}

// NewGemini is Gemini CLI (CLAWPIT_GEMINI) against a Gemini stand-in:
// GOOGLE_GEMINI_BASE_URL, a dummy GEMINI_API_KEY, and
// Home/.gemini/settings.json with auth type gemini-api-key, telemetry,
// usage statistics and update checks off.
func NewGemini(t testing.TB, baseURL string) *Agent {
	a := newAgent(t, "gemini", EnvGemini, "@google/gemini-cli", baseURL)
	if err := a.WriteGeminiSettings(nil); err != nil {
		t.Fatal(err)
	}
	return a
}

// CodexHome is $CODEX_HOME (Home/.codex).
func (a *Agent) CodexHome() string { return filepath.Join(a.Home, ".codex") }

// codexConfig is config.toml for the stand-in (Codex 0.169.0's keys).
func (a *Agent) codexConfig() string {
	return fmt.Sprintf(`model = "agenttest-model"
model_provider = "agenttest"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.agenttest]
name = "agenttest"
base_url = %q
wire_api = "responses"
env_key = "AGENTTEST_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[projects.%q]
trust_level = "trusted"

[analytics]
enabled = false

[otel]
exporter = "none"

# The plugins feature looks up github.com, api.github.com and chatgpt.com
# at startup (seen with strace); off, codex exec reaches only base_url.
[features]
plugins = false
`, a.BaseURL+"/v1", a.Work)
}

// GeminiSettings is Home/.gemini/settings.json.
func (a *Agent) GeminiSettings() string { return filepath.Join(a.Home, ".gemini", "settings.json") }

// WriteGeminiSettings writes settings.json: auth by API key, no telemetry,
// usage statistics or update checks, the working directory trusted, plus
// extra top-level keys (e.g. "hooks").
func (a *Agent) WriteGeminiSettings(extra map[string]any) error {
	s := map[string]any{
		"security":                   map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": false}},
		"telemetry":                  map[string]any{"enabled": false},
		"privacy":                    map[string]any{"usageStatisticsEnabled": false},
		"general":                    map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"ide":                        map[string]any{"enabled": false},
		"model":                      map[string]any{"name": "gemini-agenttest"},
		"hasSeenIdeIntegrationNudge": true,
	}
	for k, v := range extra {
		s[k] = v
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("gemini settings: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(a.GeminiSettings()), 0o755); err != nil {
		return fmt.Errorf("gemini settings: %w", err)
	}
	if err := os.WriteFile(a.GeminiSettings(), b, 0o600); err != nil {
		return fmt.Errorf("gemini settings: %w", err)
	}
	return nil
}

// Environ is the CLI's environment: baseEnv plus its API settings and
// a.Env (for running its other subcommands, e.g. `codex app-server`).
func (a *Agent) Environ() []string {
	env := baseEnv(a.Home)
	switch a.kind {
	case "claude":
		env = append(env, "ANTHROPIC_BASE_URL="+a.BaseURL, "ANTHROPIC_API_KEY=sk-ant-agenttest-dummy",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
			"DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1")
	case "codex":
		env = append(env, "CODEX_HOME="+a.CodexHome(), "AGENTTEST_API_KEY=sk-agenttest-dummy", "RUST_LOG=error")
	case "gemini":
		env = append(env, "GOOGLE_GEMINI_BASE_URL="+a.BaseURL, "GEMINI_API_KEY=agenttest-dummy-key",
			"GEMINI_CLI_NO_RELAUNCH=true", "GEMINI_TELEMETRY_ENABLED=false")
	}
	return append(env, a.Env...)
}

// argv is the headless command line for prompt, with args after the
// CLI's own (for Claude Code: --settings FILE, --agents JSON, …).
func (a *Agent) argv(prompt string, args []string) []string {
	switch a.kind {
	case "claude":
		return append([]string{a.Bin, "-p", prompt, "--output-format", "stream-json", "--verbose"}, args...)
	case "codex":
		return append(append([]string{a.Bin, "exec", "--skip-git-repo-check", "--color", "never"}, args...), prompt)
	default:
		return append(append([]string{a.Bin}, args...), "-p", prompt)
	}
}

// Start starts the CLI on prompt in Work; ctx bounds it (the process group
// is killed when ctx ends).
func (a *Agent) Start(ctx context.Context, prompt string, args ...string) (*Proc, error) {
	return Start(ctx, a.Work, a.Environ(), a.argv(prompt, args)...)
}

// Run runs the CLI on prompt to the end (or ctx's end).
func (a *Agent) Run(ctx context.Context, prompt string, args ...string) (Result, error) {
	p, err := a.Start(ctx, prompt, args...)
	if err != nil {
		return Result{}, err
	}
	return p.Wait(), nil
}

// Command is the command line Start runs, for messages.
func (a *Agent) Command(prompt string, args ...string) string {
	return strings.Join(a.argv(prompt, args), " ")
}
