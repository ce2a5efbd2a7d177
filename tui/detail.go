package tui

import (
	"context"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
)

// detailView shows one entity: every field, then its event journal (README "The console"). It scrolls; actions apply to its entity.
type detailView struct {
	ctx     *Context
	target  Target
	loading bool
	err     error
	fields  []feed.Field // sanitised
	events  []core.Event
	subject string // alerts: whose journal is shown

	lines  []string
	offset int
	w, h   int
}

func newDetailView(ctx *Context, t Target) *detailView {
	return &detailView{ctx: ctx, target: t, loading: true}
}

// set installs a loaded detail, sanitising every value once.
func (d *detailView) set(det *feed.Detail, err error) {
	d.loading = false
	d.err = err
	if err != nil {
		d.build()
		return
	}
	d.fields = make([]feed.Field, len(det.Fields))
	for i, f := range det.Fields {
		d.fields[i] = feed.Field{Name: f.Name, Value: sanitize(f.Value), TS: f.TS}
	}
	d.events = make([]core.Event, len(det.Events))
	for i, e := range det.Events {
		e.Entity, e.EntityID = oneLine(e.Entity), oneLine(e.EntityID)
		e.From, e.To, e.Actor, e.Reason = oneLine(e.From), oneLine(e.To), core.Actor(oneLine(string(e.Actor))), sanitize(e.Reason)
		d.events[i] = e
	}
	d.subject = ""
	if det.Kind == feed.KindAlert && len(det.Events) > 0 {
		d.subject = d.events[0].Entity + " " + d.events[0].EntityID
	}
	d.build()
}

// SetSize sets the view's size (h rows including its title line).
func (d *detailView) SetSize(w, h int) {
	d.w, d.h = w, h
	d.build()
}

func (d *detailView) page() int { return max(1, d.h-1) }

// build lays out the lines for the current width.
func (d *detailView) build() {
	th := d.ctx.Theme
	d.lines = d.lines[:0]
	switch {
	case d.loading:
		d.lines = append(d.lines, "loading…")
		return
	case d.err != nil:
		d.lines = append(d.lines, th.StatusErr.Render(truncRight("cannot show "+d.target.Kind.String()+" "+d.target.Short+": "+errText(d.err), d.w)))
		return
	}
	nameW := 0
	for _, f := range d.fields {
		if internalField(f.Name) {
			continue
		}
		nameW = max(nameW, len(f.Name))
	}
	nameW = min(nameW, 24)
	valW := max(10, d.w-nameW-3)
	now := d.ctx.now()
	for _, f := range d.fields {
		if internalField(f.Name) {
			continue
		}
		v := f.Value
		if f.TS != 0 {
			v += "  (" + d.ctx.age(now, f.TS) + " ago)"
			if f.TS > now {
				v = f.Value + "  (" + d.ctx.until(now, f.TS) + ")"
			}
		}
		if v == "" || v == "null" {
			v = "-" // absent, as the CLI shows it
		}
		var wrapped []string
		for _, part := range strings.Split(v, "\n") {
			wrapped = append(wrapped, wrapText(part, valW)...)
		}
		for i, l := range wrapped {
			name := ""
			if i == 0 {
				name = f.Name
			}
			d.lines = append(d.lines, " "+th.Field.Render(fit(name, nameW))+"  "+l)
		}
	}
	d.lines = append(d.lines, "")
	count := strconv.Itoa(len(d.events)) + " event" + pluralS(len(d.events))
	title := "Journal (" + count + ")"
	if d.subject != "" {
		title = "Journal of " + d.subject + " (" + count + ")"
	}
	d.lines = append(d.lines, " "+th.Section.Render(title))
	if len(d.events) == 0 {
		d.lines = append(d.lines, th.Muted.Render(" no events"))
	}
	for _, e := range d.events {
		change := e.To
		if e.From != "" || e.To != "" {
			change = orDash(e.From) + " → " + orDash(e.To)
		}
		head := " " + e.At.Time().Format("2006-01-02 15:04:05.000") + "  " + change + "  " + string(e.Actor)
		if !e.Applied {
			head += "  " + th.StatusWarn.Render("[ignored]")
		}
		d.lines = append(d.lines, clipLine(head, d.w))
		if e.Reason != "" {
			for _, l := range wrapText(strings.ReplaceAll(e.Reason, "\n", " "), max(10, d.w-6)) {
				d.lines = append(d.lines, "      "+th.Muted.Render(l))
			}
		}
	}
	d.offset = max(0, min(d.offset, len(d.lines)-d.page()))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// update scrolls; it reports whether the key was used.
func (d *detailView) update(k tea.KeyPressMsg) bool {
	keys := d.ctx.Keys
	maxOff := max(0, len(d.lines)-d.page())
	switch {
	case key.Matches(k, keys.Up):
		d.offset--
	case key.Matches(k, keys.Down):
		d.offset++
	case key.Matches(k, keys.PageUp):
		d.offset -= d.page()
	case key.Matches(k, keys.PageDown):
		d.offset += d.page()
	case key.Matches(k, keys.Top):
		d.offset = 0
	case key.Matches(k, keys.Bottom):
		d.offset = maxOff
	default:
		return false
	}
	d.offset = max(0, min(d.offset, maxOff))
	return true
}

// View renders exactly h lines: a title, then the visible lines.
func (d *detailView) View() string {
	th := d.ctx.Theme
	t := d.target
	title := strings.ToUpper(t.Kind.String()[:1]) + t.Kind.String()[1:] + " " + t.ID
	if t.Name != "" {
		title += " — " + t.Name
	}
	var b strings.Builder
	b.WriteString(th.TableHead.Render(fit(title, d.w)))
	end := min(len(d.lines), d.offset+d.page())
	for _, l := range d.lines[d.offset:end] {
		b.WriteByte('\n')
		b.WriteString(clipLine(l, d.w))
	}
	for i := end - d.offset; i < d.page(); i++ {
		b.WriteByte('\n')
	}
	return b.String()
}

func (d *detailView) infoLine(w int) string {
	th := d.ctx.Theme
	pos := ""
	if n := len(d.lines); n > d.page() {
		pos = "  lines " + strconv.Itoa(d.offset+1) + "–" + strconv.Itoa(min(n, d.offset+d.page())) + " of " + strconv.Itoa(n)
	}
	return th.Muted.Render(truncRight("detail of "+d.target.Kind.String()+" "+d.target.Short+pos, w))
}

// shortHelp lists the detail view's keys: back, scroll, the actions that
// apply to its entity.
func (d *detailView) shortHelp(m *Model) []key.Binding {
	k := m.ctx.Keys
	out := []key.Binding{k.Back, k.Down, k.Up}
	if d.target.Kind == feed.KindJob {
		out = append(out, k.Log)
	}
	if !m.ctx.ReadOnly {
		out = append(out, m.panes[d.target.Kind].(interface{ actionKeys() []key.Binding }).actionKeys()...)
	}
	return append(out, k.Help, closeKey(k))
}

// closeKey is the quit key as the detail view uses it: it closes the view
// (Model.detailKey), so its help says "close", not "quit".
func closeKey(k *KeyMap) key.Binding {
	return key.NewBinding(key.WithKeys(k.Quit.Keys()...), key.WithHelp(k.Quit.Help().Key, "close"))
}

// fullHelp groups every key of the detail view.
func (d *detailView) fullHelp(m *Model) [][]key.Binding {
	k := m.ctx.Keys
	g := [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Back, k.Help, closeKey(k)}}
	if d.target.Kind == feed.KindJob {
		g[1] = append(g[1], k.Log)
	}
	if !m.ctx.ReadOnly {
		if acts := m.panes[d.target.Kind].(interface{ actionKeys() []key.Binding }).actionKeys(); len(acts) > 0 {
			g = append(g, acts)
		}
	}
	return g
}

func itoa(n int) string { return strconv.Itoa(n) }

// internalField reports a field the detail view leaves out: bookkeeping that
// means nothing to an operator (a job supervisor's process start time in
// clock ticks, kept to tell a reused pid). JSON output still has it.
func internalField(name string) bool {
	return name == "supervisor_start"
}

type detailMsg struct {
	target Target
	d      *feed.Detail
	err    error
}

func detailCmd(ctx context.Context, src feed.Source, t Target) tea.Cmd {
	return func() tea.Msg {
		d, err := src.Detail(ctx, t.Kind, t.ID)
		return detailMsg{target: t, d: d, err: err}
	}
}

func (m *Model) openDetail(t Target) tea.Cmd {
	m.detail = newDetailView(m.ctx, t)
	m.resize()
	return detailCmd(m.bg, m.src, t)
}

func (m *Model) onDetail(msg detailMsg) tea.Cmd {
	if m.detail == nil || m.detail.target.Kind != msg.target.Kind || m.detail.target.ID != msg.target.ID {
		return nil
	}
	m.detail.set(msg.d, msg.err)
	return nil
}
