package core

import "strings"

// VerbChain returns the approval pattern of a command (SPEC §3 Approval
// pattern): its whitespace-separated tokens up to, not including, the first
// token that is
//   - a flag (starts with '-'),
//   - a path (contains '/', or starts with '.' or '~'),
//   - a URL (contains "://"),
//   - quoted data (starts with ' or "), or
//   - shell syntax (contains one of | & ; < > ( ) $ ` or a newline).
//
// Examples: "git push --force origin" → "git push"; "rm -rf /" → "rm";
// "npm run build" → "npm run build"; "curl https://x" → "curl".
//
// Quoting is deliberately not parsed: a quoted argument simply ends the
// chain, which keeps patterns short and never lets data become a verb. The
// result may be empty (a command that starts with a flag or a path); an empty
// pattern never matches a grant (see RequestApproval).
func VerbChain(command string) string {
	var verbs []string
	for _, tok := range strings.Fields(command) {
		if endsVerbChain(tok) {
			break
		}
		verbs = append(verbs, tok)
	}
	return strings.Join(verbs, " ")
}

func endsVerbChain(tok string) bool {
	switch {
	case strings.HasPrefix(tok, "-"),
		strings.HasPrefix(tok, "."), strings.HasPrefix(tok, "~"),
		strings.Contains(tok, "/"), strings.Contains(tok, "://"),
		strings.HasPrefix(tok, "'"), strings.HasPrefix(tok, `"`),
		strings.ContainsAny(tok, "|&;<>()$`\n"):
		return true
	}
	return false
}

// hasShellControl reports whether command chains or redirects other commands
// (; & | ` $( < > or a newline). Such a command is never approved by a grant:
// a grant for "git status" must not approve "git status; rm -rf ~".
func hasShellControl(command string) bool {
	return strings.ContainsAny(command, ";&|`<>\n\r") || strings.Contains(command, "$(")
}
