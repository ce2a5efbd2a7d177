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

// rolloutCall is one function call of a Codex rollout (the session's
// .jsonl at transcript_path): a line {"type": "response_item", "payload":
// {"type": "function_call", "call_id", "arguments": "<JSON>",
// "internal_chat_message_metadata_passthrough": {"turn_id"}}}, and whether
// a function_call_output for it follows.
type rolloutCall struct {
	callID, turnID string
	args           struct {
		Cmd string `json:"cmd"`
		TTY bool   `json:"tty"`
	}
	answered bool
}

// rolloutCalls reads the function calls of the rollout at path, in order
// (only its last maxRolloutBytes: the calls a hook asks about were written
// last). A rollout that cannot be read has none: the rules that use it
// hold without it.
func rolloutCalls(path string) []rolloutCall {
	if path == "" || !filepath.IsAbs(path) {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxRolloutBytes {
		_, _ = f.Seek(fi.Size()-maxRolloutBytes, io.SeekStart)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxRolloutBytes)
	var calls []rolloutCall
	at := map[string]int{} // call_id → index in calls
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"function_call`)) {
			continue
		}
		var rec struct {
			Type    string `json:"type"`
			Payload struct {
				Type      string `json:"type"`
				CallID    string `json:"call_id"`
				Arguments string `json:"arguments"`
				Meta      struct {
					TurnID string `json:"turn_id"`
				} `json:"internal_chat_message_metadata_passthrough"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Type != "response_item" || rec.Payload.CallID == "" {
			continue
		}
		switch rec.Payload.Type {
		case "function_call":
			c := rolloutCall{callID: rec.Payload.CallID, turnID: rec.Payload.Meta.TurnID}
			_ = json.Unmarshal([]byte(rec.Payload.Arguments), &c.args)
			at[c.callID] = len(calls)
			calls = append(calls, c)
		case "function_call_output":
			if i, ok := at[rec.Payload.CallID]; ok {
				calls[i].answered = true
			}
		}
	}
	return calls
}

// rolloutTTY reports whether the rollout at path holds the function call
// callID with "tty": true in its arguments.
func rolloutTTY(path, callID string) bool {
	if callID == "" {
		return false
	}
	for _, c := range rolloutCalls(path) {
		if c.callID == callID && c.args.TTY {
			return true
		}
	}
	return false
}

// PairCall finds the call a PermissionRequest p asks about, which Codex
// names by no id (Codex hooks: PermissionRequest): in p's rollout, the one
// function call of p's turn_id whose "cmd" is p's command and that has no
// output yet. It returns its call_id (the tool_use_id its PreToolUse
// carried) and whether it opens a tty, or "" when no call matches (the
// approval is then asked without an id).
//
// When several unanswered calls match (parallel calls running the same
// command, say in different workdirs, which the payload does not show),
// the request cannot be told apart from the others: the id is "" so that no
// approval of one of them answers another (an approval is replayed by its
// tool-call id), and tty is true if any of them asks for a tty, so the
// warning is never lost to the wrong pairing.
func PairCall(p *claude.Payload) (callID string, tty bool) {
	command, _ := p.ToolCall()
	if command == "" {
		return "", false
	}
	matches := 0
	for _, c := range rolloutCalls(p.TranscriptPath) {
		if !c.answered && c.args.Cmd == command && (p.TurnID == "" || c.turnID == "" || c.turnID == p.TurnID) {
			matches++
			callID = c.callID
			tty = tty || c.args.TTY
		}
	}
	if matches > 1 {
		return "", tty
	}
	return callID, tty
}
