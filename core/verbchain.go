package core

import (
	"strings"

	"github.com/clawpit/clawpit/termtext"
)

// VerbChain returns the approval pattern of a command (docs/contract.md "Entities and statuses" Approval
// pattern): its words — split where a POSIX shell splits them, at spaces,
// tabs and newlines only — up to, not including, the first word that is
//   - a flag (starts with '-'),
//   - a path (contains '/', or starts with '.' or '~'),
//   - a URL (contains "://"),
//   - quoted data (starts with ' or "),
//   - a comment (starts with '#'),
//   - shell syntax (contains one of | & ; < > ( ) $ ` or a newline), or
//   - hidden text: a control, format or non-space blank character
//     (termtext.HasHidden: CR, BS, a bidi override, a zero-width or
//     no-break space…), which a terminal may not show as itself.
//
// Examples: "git push --force origin" → "git push"; "rm -rf /" → "rm";
// "npm run build" → "npm run build"; "curl https://x" → "curl";
// "rm -rf ~ #\rgit log" → "rm" (what the shell runs, never what the CR
// would let a terminal show).
//
// Quoting is deliberately not parsed: a quoted argument simply ends the
// chain, which keeps patterns short and never lets data become a verb. The
// result may be empty (a command that starts with a flag or a path); an empty
// pattern never matches a grant (see RequestApproval).
func VerbChain(command string) string {
	var verbs []string
	for _, tok := range shellWords(command) {
		if endsVerbChain(tok) {
			break
		}
		verbs = append(verbs, tok)
	}
	return strings.Join(verbs, " ")
}

// shellWords splits command at the bytes a shell splits words at (space,
// tab, newline). strings.Fields would also split at '\r', '\v', '\f' and
// Unicode spaces, where a shell does not, so "rm\u00a0-rf" would look like
// two words.
func shellWords(command string) []string {
	return strings.FieldsFunc(command, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
}

func endsVerbChain(tok string) bool {
	switch {
	case strings.HasPrefix(tok, "-"),
		strings.HasPrefix(tok, "."), strings.HasPrefix(tok, "~"), strings.HasPrefix(tok, "#"),
		strings.Contains(tok, "/"), strings.Contains(tok, "://"),
		strings.HasPrefix(tok, "'"), strings.HasPrefix(tok, `"`),
		strings.ContainsAny(tok, "|&;<>()$`\n"),
		termtext.HasHidden(tok):
		return true
	}
	return false
}

// hasShellControl reports whether command chains or redirects other commands
// (; & | ` $( < > or a newline), or holds hidden text (termtext.HasHidden:
// a CR, a backspace, a bidi override, a zero-width character…). Such a
// command is never approved by a grant: a grant for "git status" must not
// approve "git status; rm -rf ~", nor a command whose screen form differs
// from what runs.
func hasShellControl(command string) bool {
	return strings.ContainsAny(command, ";&|`<>\n\r") || strings.Contains(command, "$(") ||
		termtext.HasHidden(strings.ReplaceAll(command, "\t", " "))
}
