package tui

import (
	"encoding/json"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
)

// dialog is a modal box drawn over the screen. It takes every key while it
// is open (ctrl+c still quits); q and esc close a dialog without a text
// field; in one with a text field q is typed and esc closes.
//
// A dialog is a component in soft-serve's sense: it gets the shared
// Context, not the root model, and answers with Cmds — its action, and
// statusMsg for what the status line says (statusCmd). The actions it may
// run are given to it when it opens.
type dialog interface {
	// update handles a key or paste; done closes the dialog.
	update(ctx *Context, msg tea.Msg) (done bool, cmd tea.Cmd)
	// view renders the box for a screen w cells wide.
	view(ctx *Context, w int) string
}

// dialogWidth is the box's inner width on a screen w cells wide.
func dialogWidth(w int) int { return max(20, min(w-10, 72)) }

// wideDialogWidth is the widest inner width of a dialog that lists long
// lines (the maintenance plan): like dialogWidth on 80 columns, wider on
// wide screens so an action's reason is not cut off.
func wideDialogWidth(w int) int { return max(dialogWidth(w), min(w-10, 120)) }

// box renders a dialog: title, body lines (wrapped to the box), hint line.
func box(ctx *Context, w int, title string, body []string, hints string) string {
	return boxW(ctx, dialogWidth(w), title, body, hints)
}

// boxW is box with an inner width of iw cells.
func boxW(ctx *Context, iw int, title string, body []string, hints string) string {
	th := ctx.Theme
	var b strings.Builder
	b.WriteString(th.DialogTitle.Render(truncRight(title, iw)))
	b.WriteString("\n")
	for _, l := range body {
		b.WriteString("\n")
		b.WriteString(l)
	}
	b.WriteString("\n\n")
	b.WriteString(hints)
	return th.Dialog.Width(iw + 4).Render(b.String())
}

// wrapText wraps plain (sanitised) text to w cells.
func wrapText(s string, w int) []string {
	if w < 1 {
		return []string{s}
	}
	return strings.Split(ansi.Wrap(s, w, " /-"), "\n")
}

func hint(ctx *Context, b key.Binding, what string) string {
	return ctx.Theme.Help.ShortKey.Render(firstKey(b)) + " " + ctx.Theme.Help.ShortDesc.Render(what)
}

func hints(parts ...string) string { return strings.Join(parts, "   ") }

// ---- confirm ----------------------------------------------------------

// confirmDialog asks before an action that destroys or denies (cancel,
// kill, reap).
type confirmDialog struct {
	title   string
	lines   []string // sanitised
	yes, no string
	run     tea.Cmd // the action; its message is an actionMsg
	// counting is the session whose jobs a reap dialog is counting: its
	// line is replaced when the count arrives (reapCountMsg).
	counting string
}

func (d *confirmDialog) update(ctx *Context, msg tea.Msg) (bool, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return false, nil
	}
	keys := ctx.Keys
	switch {
	case key.Matches(k, keys.Confirm):
		return true, statusCmd(d.yes+"…", lvlInfo, d.run)
	case key.Matches(k, keys.Back, keys.Quit), k.String() == "n":
		return true, statusCmd(d.yes+": not confirmed, nothing done", lvlInfo, nil)
	}
	return false, nil
}

func (d *confirmDialog) view(ctx *Context, w int) string {
	iw := dialogWidth(w)
	var body []string
	for _, l := range d.lines {
		body = append(body, wrapText(l, iw)...)
	}
	return box(ctx, w, d.title, body, hints(hint(ctx, ctx.Keys.Confirm, d.yes), hint(ctx, ctx.Keys.Back, d.no)))
}

// ---- approve with scope -----------------------------------------------

// scopeDialog offers the scopes (core.Scopes), then each of the agent's
// suggested permission updates (Target.Suggestions): choice past the
// scopes is suggestion choice-len(core.Scopes)+1, approved once.
type scopeDialog struct {
	t       Target
	choice  int
	approve func(scope core.Scope, suggestion int) tea.Cmd
	sugg    []json.RawMessage // Target.Suggestions, split
}

func newScopeDialog(t Target, approve func(core.Scope, int) tea.Cmd) *scopeDialog {
	return &scopeDialog{t: t, approve: approve, sugg: core.SuggestionList(json.RawMessage(t.Suggestions))}
}

// chosen is the dialog's choice as a scope and a suggestion (0: none).
func (d *scopeDialog) chosen() (core.Scope, int) {
	if d.choice < len(core.Scopes) {
		return core.Scopes[d.choice], 0
	}
	return core.ScopeOnce, d.choice - len(core.Scopes) + 1
}

var scopeWhat = map[core.Scope]string{
	core.ScopeOnce:    "this request only",
	core.ScopeSession: "this request and later matching requests of the same session (a session grant)",
	core.ScopeAlways:  "this request and every later matching request, in any session (a global grant)",
}

func (d *scopeDialog) update(ctx *Context, msg tea.Msg) (bool, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return false, nil
	}
	keys := ctx.Keys
	n := len(core.Scopes) + len(d.sugg)
	switch {
	case key.Matches(k, keys.Confirm):
		return true, statusCmd("approving "+d.t.Short+"…", lvlInfo, d.approve(d.chosen()))
	case key.Matches(k, keys.Left, keys.Up, keys.PrevPane):
		d.choice = (d.choice + n - 1) % n
	case key.Matches(k, keys.Right, keys.Down, keys.NextPane):
		d.choice = (d.choice + 1) % n
	case key.Matches(k, keys.Back, keys.Quit), k.String() == "n":
		return true, statusCmd("approve "+d.t.Short+": not confirmed, nothing done", lvlInfo, nil)
	}
	return false, nil
}

func (d *scopeDialog) view(ctx *Context, w int) string {
	th := ctx.Theme
	iw := dialogWidth(w)
	body := commandLines(ctx, d.t.Name, iw)
	body = append(body, "session "+d.t.Session)
	if d.t.Cwd != "" {
		body = append(body, clipLines(wrapText("cwd "+d.t.Cwd, iw), 2, iw)...)
	}
	if d.t.Why != "" {
		body = append(body, clipLines(wrapText("why "+d.t.Why, iw), 3, iw)...)
	}
	if d.t.Hidden {
		body = append(body, wrapText(th.StatusWarn.Render("the command holds control or invisible characters, shown as symbols: ␍ carriage return, ␈ backspace, ␊ newline, ␛ escape, <U+…> an invisible character"), iw)...)
	}
	body = append(body, "")
	var opts []string
	names := make([]string, 0, len(core.Scopes)+len(d.sugg))
	for _, s := range core.Scopes {
		names = append(names, string(s))
	}
	for i := range d.sugg {
		names = append(names, "suggestion "+strconv.Itoa(i+1))
	}
	for i, s := range names {
		if i == d.choice {
			opts = append(opts, th.ChoiceActive.Render("["+s+"]"))
		} else {
			opts = append(opts, th.Choice.Render(" "+s+" "))
		}
	}
	body = append(body, wrapText("scope  "+strings.Join(opts, " "), iw)...)
	scope, n := d.chosen()
	if n > 0 {
		// The agent's own words, exactly: it applies them as sent.
		body = append(body, wrapText(th.Muted.Render("this request, and the agent applies its suggested permission update:"), iw)...)
		body = append(body, clipLines(wrapText(termtext.Exact(string(d.sugg[n-1]), 2000), iw), 4, iw)...)
		body = append(body, "grant  none")
	} else {
		body = append(body, wrapText(th.Muted.Render(scopeWhat[scope]), iw)...)
		body = append(body, wrapText("grant  "+grantText(d.t, scope), iw)...)
	}
	return box(ctx, w, "Approve "+d.t.Short, body, hints(
		th.Help.ShortKey.Render(firstKey(ctx.Keys.Left)+"/"+firstKey(ctx.Keys.Right))+" "+th.Help.ShortDesc.Render("scope"),
		hint(ctx, ctx.Keys.Confirm, "approve"), hint(ctx, ctx.Keys.Back, "cancel")))
}

// grantText says exactly which grant approving t with scope creates (docs/contract.md "Entities and statuses" Grant: the approval's tool and pattern; session scope binds the
// session): `Bash "git push" in session S1`, `Bash "rm" in any session`,
// or "none" for once. The pattern is Go-quoted, so its exact bytes show.
func grantText(t Target, scope core.Scope) string {
	if scope == core.ScopeOnce {
		return "none"
	}
	g := t.Tool + " " + strconv.Quote(t.Pattern)
	if scope == core.ScopeSession {
		g += " in session " + t.Session
	} else {
		g += " in any session"
	}
	if t.Pattern == "" {
		g += " (an empty pattern matches no later request)"
	}
	return g
}

// commandLines wraps a dialog's command to iw cells, keeping the box on the
// screen: past what fits, a last line says how much more there is and
// where the whole command is.
func commandLines(ctx *Context, s string, iw int) []string {
	lines := wrapText(s, iw)
	room := max(3, ctx.Height-18)
	if len(lines) <= room {
		return lines
	}
	more := len(lines) - room + 1
	return append(lines[:room-1], ctx.Theme.StatusWarn.Render(truncRight(
		"… "+itoa(more)+" more lines: the whole command is in its detail (esc, enter)", iw)))
}

// clipLines keeps at most n of lines, the last of them ending in "…" when
// some were left out (the detail view has them all).
func clipLines(lines []string, n, iw int) []string {
	if len(lines) <= n {
		return lines
	}
	lines = lines[:n]
	lines[n-1] = ansiTruncate(lines[n-1], iw-1) + "…"
	return lines
}

// ---- deny with reason -------------------------------------------------

type reasonDialog struct {
	t    Target
	in   lineInput
	deny func(reason string) tea.Cmd
}

func (d *reasonDialog) update(_ *Context, msg tea.Msg) (bool, tea.Cmd) {
	switch d.in.update(msg) {
	case inputSubmit:
		reason := strings.TrimSpace(d.in.value())
		return true, statusCmd("denying "+d.t.Short+"…", lvlInfo, d.deny(reason))
	case inputCancel:
		return true, statusCmd("deny "+d.t.Short+": not confirmed, nothing done", lvlInfo, nil)
	}
	return false, nil
}

func (d *reasonDialog) view(ctx *Context, w int) string {
	th := ctx.Theme
	iw := dialogWidth(w)
	body := commandLines(ctx, d.t.Name, iw)
	body = append(body, "session "+d.t.Session, "", "reason (optional):", d.in.view(th.Input, iw))
	return box(ctx, w, "Deny "+d.t.Short+"?", body, hints(
		th.Help.ShortKey.Render("enter")+" "+th.Help.ShortDesc.Render("deny"),
		th.Help.ShortKey.Render("esc")+" "+th.Help.ShortDesc.Render("keep it pending")))
}

// ---- maintenance plan -------------------------------------------------

// planDialog shows the maintenance dry run; enter applies it. The root
// model fills it (planMsg) and closes it when the apply ends (sweepMsg).
type planDialog struct {
	loading, applying bool
	plan              *Plan
	err               error
	offset            int
	apply             func(*Plan) tea.Cmd
}

func (d *planDialog) update(ctx *Context, msg tea.Msg) (bool, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return false, nil
	}
	keys := ctx.Keys
	switch {
	case d.applying:
		return false, nil
	case key.Matches(k, keys.Confirm):
		if d.loading {
			return false, nil
		}
		if d.err != nil || d.plan == nil || d.plan.Empty {
			return true, nil
		}
		d.applying = true
		return false, statusCmd("applying maintenance…", lvlInfo, d.apply(d.plan))
	case key.Matches(k, keys.Back, keys.Quit):
		return true, statusCmd("maintenance: not applied", lvlInfo, nil)
	case key.Matches(k, keys.Up):
		d.offset = max(0, d.offset-1)
	case key.Matches(k, keys.Down):
		d.offset++
	case key.Matches(k, keys.PageUp):
		d.offset = max(0, d.offset-10)
	case key.Matches(k, keys.PageDown):
		d.offset += 10
	}
	return false, nil
}

func (d *planDialog) view(ctx *Context, w int) string {
	th := ctx.Theme
	iw := dialogWidth(w)
	if d.plan != nil && !d.loading && d.err == nil {
		// As wide as the longest line needs, up to wideDialogWidth.
		need := width(d.plan.Summary)
		for _, l := range d.plan.Lines {
			need = max(need, width(l))
		}
		iw = max(iw, min(need, wideDialogWidth(w)))
	}
	title := "Maintenance — dry run"
	var body []string
	h := hints(hint(ctx, ctx.Keys.Confirm, "apply"), hint(ctx, ctx.Keys.Back, "cancel"))
	switch {
	case d.loading:
		body = []string{"planning…"}
		h = hint(ctx, ctx.Keys.Back, "cancel")
	case d.err != nil:
		body = wrapText(th.StatusErr.Render("planning failed: ")+errText(d.err), iw)
		h = hint(ctx, ctx.Keys.Back, "close")
	default:
		body = wrapText(d.plan.Summary, iw)
		if len(d.plan.Lines) > 0 {
			body = append(body, "")
			room := max(3, ctx.Height-12)
			d.offset = min(d.offset, max(0, len(d.plan.Lines)-room))
			end := min(len(d.plan.Lines), d.offset+room)
			for _, l := range d.plan.Lines[d.offset:end] {
				body = append(body, truncRight(l, iw))
			}
			if len(d.plan.Lines) > room {
				body = append(body, th.Muted.Render(truncRight(
					"lines "+itoa(d.offset+1)+"–"+itoa(end)+" of "+itoa(len(d.plan.Lines))+" (↑/↓ scroll)", iw)))
			}
		}
		if d.plan.Empty {
			h = th.Help.ShortKey.Render("enter/"+firstKey(ctx.Keys.Back)) + " " + th.Help.ShortDesc.Render("close")
		}
		if d.applying {
			title = "Maintenance — applying…"
			h = ""
		}
	}
	return boxW(ctx, iw, title, body, h)
}
