package codex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawpit/clawpit/adapters/claude"
)

// InteractiveWarning is put before the rationale of an approval that opens
// an interactive shell: what write_stdin later types into it runs with no
// hook at all (Codex 0.169.0; agents/NOTES.md), so approving it approves
// everything typed into it.
const InteractiveWarning = "WARNING: this opens an interactive shell (tty); whatever the agent types into it with write_stdin runs WITHOUT clawpit's gate. Approve only if you accept that."

// maxRolloutBytes bounds how much of a rollout InteractiveShell reads: the
// call it looks for was written last, so only the file's tail is read.
const maxRolloutBytes = 8 << 20

// interactivePrograms are commands that, run with no arguments, read
// commands from their terminal: the shells and the common REPLs.
var interactivePrograms = map[string]bool{"bash": true, "sh": true, "zsh": true, "dash": true, "ksh": true, "fish": true,
	"csh": true, "tcsh": true, "python": true, "python3": true, "node": true, "irb": true, "perl": true, "ruby": true}

// InteractiveShell reports whether the PreToolUse p opens a session the
// agent can type into afterwards (Codex: exec_command with "tty": true, then
// write_stdin): its call in the transcript_path rollout, found by
// tool_use_id, asks for a tty; or, whatever the rollout says, its command is
// only an interactive program ("bash", "sh -i", "python3"), which is all
// the payload shows of such a call.
func InteractiveShell(p *claude.Payload) bool {
	if p.ToolName != "Bash" {
		return false
	}
	command, _ := p.ToolCall()
	if bareInteractive(command) {
		return true
	}
	return rolloutTTY(p.TranscriptPath, p.ToolUseID)
}

// bareInteractive reports whether command is an interactive program with at
// most option flags (-i, -l, --login, --norc).
func bareInteractive(command string) bool {
	f := strings.Fields(command)
	if len(f) == 0 {
		return false
	}
	if f[0] == "exec" || f[0] == "env" {
		f = f[1:]
	}
	if len(f) == 0 || !interactivePrograms[filepath.Base(f[0])] {
		return false
	}
	for _, a := range f[1:] {
		if !strings.HasPrefix(a, "-") || a == "-c" || a == "-e" || a == "-m" {
			return false
		}
	}
	return true
}

// rolloutTTY reports whether the rollout at path (Codex's session .jsonl)
// holds the function call callID with "tty": true in its arguments. A
// rollout that cannot be read says nothing (false): the command rule still
// holds.
func rolloutTTY(path, callID string) bool {
	if path == "" || callID == "" || !filepath.IsAbs(path) {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxRolloutBytes {
		_, _ = f.Seek(fi.Size()-maxRolloutBytes, io.SeekStart)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxRolloutBytes)
	id := []byte(callID)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, id) {
			continue
		}
		var rec struct {
			Payload struct {
				Type      string `json:"type"`
				CallID    string `json:"call_id"`
				Arguments string `json:"arguments"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Payload.CallID != callID || rec.Payload.Arguments == "" {
			continue
		}
		var args struct {
			TTY bool `json:"tty"`
		}
		if json.Unmarshal([]byte(rec.Payload.Arguments), &args) == nil && args.TTY {
			return true
		}
	}
	return false
}
