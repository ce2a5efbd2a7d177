package tui

import (
	"strconv"
	"strings"

	"github.com/clawpit/clawpit/feed"

	"charm.land/lipgloss/v2"
	"github.com/clawpit/clawpit/termtext"
)

// tabForm is one way of writing the pane tabs, widest first.
type tabForm struct {
	pad    bool // a space either side of each label
	short  bool // abbreviated titles (Appr)
	counts int  // 0: every tab's count, 1: the active tab's only, 2: none
}

var tabForms = []tabForm{
	{pad: true}, {}, {counts: 1}, {short: true, counts: 1}, {short: true, counts: 2},
}

// shortTitles are the pane titles where the full ones do not fit (40
// columns): still words, so every pane is named.
var shortTitles = [feed.NumKinds]string{"Tasks", "Runs", "Appr", "Jobs", "Alerts"}

// tabsView renders the pane tabs: "1 Tasks 1,204  2 Runs 3 …", the
// widest form that fits w; at the narrowest, the tabs scroll so the active
// one is always shown, "‹"/"›" marking tabs off either edge. The Alerts
// tab counts unread/total ("5/10": 5 unread of 10).
func (m *Model) tabsView(w int) string {
	for _, f := range tabForms {
		labels := m.tabLabels(f)
		if s := m.joinTabs(labels, 0, len(labels)); lipgloss.Width(s) <= w {
			return s
		}
	}
	return m.scrolledTabs(m.tabLabels(tabForms[len(tabForms)-1]), w)
}

func (m *Model) tabLabels(f tabForm) []string {
	labels := make([]string, feed.NumKinds)
	for k := feed.Kind(0); k < feed.NumKinds; k++ {
		p := m.panes[k]
		title := p.Title()
		if f.short {
			title = shortTitles[k]
		}
		label := firstKey(m.paneBinding(k)) + " " + title
		if f.counts == 0 || f.counts == 1 && k == m.active {
			label += " " + m.tabCount(k)
		}
		if f.pad {
			label = " " + label + " "
		}
		labels[k] = label
	}
	return labels
}

// tabCount is a tab's number: the rows, "shown/total" under a filter, "…"
// before a pane is counted; for alerts unread/total.
func (m *Model) tabCount(k feed.Kind) string {
	p := m.panes[k]
	shown, total := p.Counts()
	switch {
	case !p.CountKnown():
		return "…"
	case k == feed.KindAlert:
		n, known := m.unreadAlerts()
		return alertsCount(n, total, known)
	case p.CountCapped():
		return termtext.Thousands(shown) + "+/" + termtext.Thousands(total)
	case shown != total:
		return termtext.Thousands(shown) + "/" + termtext.Thousands(total)
	}
	return termtext.Thousands(total)
}

// joinTabs styles labels[from:to] and joins them.
func (m *Model) joinTabs(labels []string, from, to int) string {
	th := m.ctx.Theme
	parts := make([]string, 0, to-from)
	for k := from; k < to; k++ {
		if feed.Kind(k) == m.active {
			parts = append(parts, th.TabActive.Render(labels[k]))
		} else {
			parts = append(parts, th.Tab.Render(labels[k]))
		}
	}
	return strings.Join(parts, " ")
}

// scrolledTabs shows the widest run of tabs around the active one that
// fits, with "‹" and "›" where tabs are off screen (tab/shift+tab or the
// digits reach them).
func (m *Model) scrolledTabs(labels []string, w int) string {
	from, to := int(m.active), int(m.active)+1
	fits := func(f, t int) bool {
		n := lipgloss.Width(m.joinTabs(labels, f, t))
		if f > 0 {
			n += 2
		}
		if t < len(labels) {
			n += 2
		}
		return n <= w
	}
	for grew := true; grew; {
		grew = false
		if to < len(labels) && fits(from, to+1) {
			to, grew = to+1, true
		}
		if from > 0 && fits(from-1, to) {
			from, grew = from-1, true
		}
	}
	s := m.joinTabs(labels, from, to)
	muted := m.ctx.Theme.Muted
	if from > 0 {
		s = muted.Render("‹") + " " + s
	}
	if to < len(labels) {
		s += " " + muted.Render("›")
	}
	return clipLine(s, w)
}

// countsLine is the header's first line: the counts in words, the widest
// form that fits w. Narrower, the separators tighten, "pending" and
// "unread" go (the help says what "alerts 5" counts), then whole counts go
// in this order: running, alerts, failures; pending approvals stay last
// (they are why the console is open).
func (m *Model) countsLine(w int, num func(int) string, stat func(string, int) string) string {
	th := m.ctx.Theme
	c := m.counts
	appr := func(pending string) string {
		if c.approvals == 0 {
			return "approvals " + num(0)
		}
		return th.Hot.Render(" " + strconv.Itoa(c.approvals) + pending + pluralS(c.approvals) + " ")
	}
	running := "running " + num(c.tasks) + " task" + pluralS(c.tasks) + " " + num(c.runs) + " run" + pluralS(c.runs) +
		" " + num(c.jobs) + " job" + pluralS(c.jobs)
	failures := "24h " + stat("failed", c.failed) + " failed " + stat("lost", c.lost) + " lost"
	alerts := "alerts " + num(c.unread) + " unread"
	type form struct {
		sep  string
		segs []string
	}
	// Each frame draws the header: the narrow forms' parts are built only
	// when the wide ones do not fit.
	long := appr(" pending approval")
	forms := []form{
		{"  │  ", []string{long, running, failures, alerts}},
		{"   ", []string{long, running, failures, alerts}},
	}
	lead := 0 // forms put before the ones below
	if m.spent.Tokens > 0 {
		lead = 2
		// What the last 24 h cost (What it costs) shows only where every
		// other count fits in full words beside it.
		spent := "spent 24h " + th.Count.Render(feed.SpentText(m.spent))
		forms = append([]form{{"  │  ", []string{long, running, failures, alerts, spent}},
			{"   ", []string{long, running, failures, alerts, spent}}}, forms...)
	}
	if lipgloss.Width(long)+len(running)+len(failures)+len(alerts)+6 > w || m.flashing() {
		short := appr(" approval")
		forms = append(forms, form{"  ", []string{short, running, failures, alerts}},
			form{"  ", []string{short, running, failures, "alerts " + num(c.unread)}},
			form{"  ", []string{short, failures, alerts}},
			form{"  ", []string{short, failures}},
			form{"  ", []string{short}})
	}
	// While the attention note shows, a form with every count in full
	// words that leaves the note room after it comes first: the note
	// then reads on the counts' line instead of covering the path.
	if m.flashing() {
		room := w - 2 - width("◀ "+m.flashText)
		for _, f := range forms[:lead+3] {
			if line := strings.Join(f.segs, th.Muted.Render(f.sep)); lipgloss.Width(line) <= room {
				return line
			}
		}
	}
	var line string
	for _, f := range forms {
		line = strings.Join(f.segs, th.Muted.Render(f.sep))
		if lipgloss.Width(line) <= w {
			break
		}
	}
	return line
}
