package tui

import (
	"fmt"
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/termtext"
)

// Alerts are read (acknowledged) from the console as from `clawpit
// notifications --ack`: a read alert stays listed, dimmed, until retention
// prunes it, the way a mail client or k9s's event list keeps what was seen.
// The header says "alerts N unread"; the Alerts tab "unread/total".

var ackBinding = actionBinding{
	name:      "mark read",
	binding:   func(k *KeyMap) key.Binding { return k.Ack },
	kinds:     []feed.Kind{feed.KindAlert},
	wrongKind: func(k *KeyMap) string { return "mark read applies to alerts (pane " + firstKey(k.Alerts) + ")" },
	disabled:  (*Model).ackDisabled,
	open:      (*Model).ackOpen,
}

var ackAllBinding = actionBinding{
	name:     "mark all read",
	binding:  func(k *KeyMap) key.Binding { return k.AckAll },
	disabled: (*Model).ackAllDisabled,
	open:     (*Model).ackAllDialog,
}

func (m *Model) ackDisabled(t Target) refusal {
	if t.Status == "read" {
		return info("alert " + t.Short + " is already read")
	}
	if m.opts.Actions == nil {
		return warn("mark read is not available in this console")
	}
	return refusal{}
}

// ackOpen marks the alert read at once: no dialog for one alert, as a mail
// client marks one message read.
func (m *Model) ackOpen(t Target) (dialog, tea.Cmd) {
	act, op, ctx := m.opts.Actions, m.ctx.Operator, m.bg
	id, err := strconv.ParseInt(t.ID, 10, 64)
	if err != nil {
		return nil, func() tea.Msg { return actionMsg{"mark read failed: alert id " + t.ID + " is not a number", lvlErr} }
	}
	return nil, func() tea.Msg {
		res, err := act.ReadNotification(ctx, id, op)
		return outcome("mark alert "+t.Short+" read", res, err, "alert "+t.Short+" marked read")
	}
}

// ackAllDisabled refuses "mark all read" outside the Alerts pane (where
// its key would surprise) and when nothing is unread.
func (m *Model) ackAllDisabled(Target) refusal {
	if m.active != feed.KindAlert && (m.detail == nil || m.detail.target.Kind != feed.KindAlert) {
		return info("mark all read applies to alerts (pane " + firstKey(m.ctx.Keys.Alerts) + ")")
	}
	if n, known := m.unreadAlerts(); known && n == 0 {
		return info("no unread alerts")
	}
	if m.opts.Actions == nil {
		return warn("mark all read is not available in this console")
	}
	return refusal{}
}

func (m *Model) ackAllDialog(Target) (dialog, tea.Cmd) {
	act, op, ctx := m.opts.Actions, m.ctx.Operator, m.bg
	title := "Mark every unread alert read?"
	if n, known := m.unreadAlerts(); known {
		title = fmt.Sprintf("Mark all %d unread alert%s read?", n, pluralS(n))
	}
	return &confirmDialog{
		title: title,
		lines: []string{"Read alerts stay listed, dimmed, until retention prunes them;",
			"the journal records who read them."},
		yes: "mark read", no: "keep unread",
		run: func() tea.Msg {
			n, err := act.ReadAllNotifications(ctx, op)
			switch {
			case err != nil:
				return actionMsg{"mark all read failed: " + errText(err), lvlErr}
			case n == 0:
				return actionMsg{"no unread alerts: nothing marked", lvlInfo}
			}
			return actionMsg{fmt.Sprintf("marked %d alert%s read", n, pluralS(n)), lvlOK}
		},
	}, nil
}

// unreadAlerts is the number of unread alerts the header counted; known is
// false until the counts are read.
func (m *Model) unreadAlerts() (n int, known bool) { return m.counts.unread, m.headerKnown }

// alertsCount is the Alerts tab's number: "unread/total" while some are
// unread, else the total (the help explains it).
func alertsCount(unread, total int, known bool) string {
	if !known || unread == 0 {
		return termtext.Thousands(total)
	}
	return termtext.Thousands(unread) + "/" + termtext.Thousands(total)
}

// unreadNote is the Alerts pane's info line part: "5 unread of 10".
func unreadNote(c *Context, total int) string {
	if c.unread == nil {
		return ""
	}
	n, known := c.unread()
	if !known {
		return ""
	}
	return termtext.Thousands(n) + " unread of " + termtext.Thousands(total)
}

// delivers reports whether a task of the Tasks window has a delivery
// outcome (a status other than pending and not_applicable): the Tasks pane
// then shows its DELIVERY column.
func delivers(t table[taskRow]) bool {
	for i := range t.rows {
		switch t.rows[i].delivery {
		case core.DeliveryPending, core.DeliveryNotApplicable, "":
		default:
			return true
		}
	}
	return false
}
