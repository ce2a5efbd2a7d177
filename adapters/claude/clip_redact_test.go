package claude

import (
	"strings"
	"testing"
)

// TestToolCallRedactsBeforeClip: a token that the 2,000-byte clip of an MCP
// tool input cuts is redacted whole first, so no part of it survives in the
// command an approval shows (issue 24 item 7).
func TestToolCallRedactsBeforeClip(t *testing.T) {
	tok := "gh" + "p_" + strings.Repeat("aB3d", 9)
	const head = `{"body":"`
	for k := 1; k < len(tok); k++ { // the token starts k bytes before the clip
		pad := strings.Repeat("w", maxCommandChars-k-len(head)-1) + " "
		p := &Payload{ToolName: "mcp__x__y", ToolInput: []byte(head + pad + tok + ` tail"}`)}
		cmd, _ := p.ToolCall()
		if len(cmd) > maxCommandChars+len("…") {
			t.Fatalf("k=%d: %d bytes, over the clip", k, len(cmd))
		}
		for i := 2; i+4 <= len(tok); i++ {
			if strings.Contains(cmd, tok[i:i+4]) {
				t.Fatalf("k=%d: %q of the token survives: …%q", k, tok[i:i+4], cmd[len(cmd)-40:])
			}
		}
	}
}
