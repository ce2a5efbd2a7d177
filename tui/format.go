package tui

import (
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
)

// age is the relative age of t at now (termtext.Age: 12s, 4m, 2h, 3d, "in
// 4m" for a time in the future); "-" when absent.
func age(now, t core.Timestamp) string {
	if t == 0 {
		return "-"
	}
	return termtext.Age(now.Time(), t.Time())
}

// shortDur formats d as 12s, 4m, 2h or 3d (termtext.Dur).
func shortDur(d time.Duration) string { return termtext.Dur(d) }

// until is the relative time from now to t ("in 4m"), "past" when past,
// "-" when absent.
func until(now, t core.Timestamp) string {
	if t == 0 {
		return "-"
	}
	if t <= now {
		return "past"
	}
	return "in " + termtext.Dur(t.Sub(now))
}

// width is the number of cells s takes (s is sanitised text, no escapes).
func width(s string) int {
	if isPlain(s) {
		return len(s)
	}
	return ansi.StringWidth(s)
}

// fit pads or truncates s (sanitised text) to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := width(s)
	if n > w {
		s = ansi.Truncate(s, w, "…")
		n = width(s)
	}
	if n < w {
		return s + spaces(w-n)
	}
	return s
}

// fitRight right-aligns s in w cells.
func fitRight(s string, w int) string {
	n := width(s)
	if n >= w {
		return fit(s, w)
	}
	return spaces(w-n) + s
}

const blank = "                                                                                                                                "

func spaces(n int) string {
	if n <= 0 {
		return ""
	}
	if n <= len(blank) {
		return blank[:n]
	}
	return strings.Repeat(" ", n)
}

// truncLeft keeps the end of s within w cells ("…/state/clawpit/registry.db").
func truncLeft(s string, w int) string {
	if width(s) <= w {
		return s
	}
	if w <= 1 {
		return ansi.Truncate(s, w, "")
	}
	return "…" + ansi.TruncateLeft(s, width(s)-w+1, "")
}

// column describes a table column. Fixed columns have Width cells; flexible
// ones (Flex > 0) share what is left, at least Width cells. A column is shown
// only when the screen is at least MinScreen cells wide, so narrow terminals
// drop the least important columns first.
type column struct {
	Title     string
	Width     int
	Flex      int
	MinScreen int
	Right     bool
	Command   bool // a command line: cut by fitCommand, keeping verbs and target
	MultiHost bool // shown only while rows of more than one host are loaded (Context.multiHost)
	// Delivery: shown only while a loaded task's delivery status is other
	// than pending or not_applicable (Context.delivers): a column saying
	// "pending" on every row, where nothing delivers, says nothing.
	Delivery bool
}

// layoutColumns returns each column's width at screen width w (0 = hidden).
// Columns are separated by one space.
func layoutColumns(cols []column, w int) []int {
	out := make([]int, len(cols))
	used, flex, shown := 0, 0, 0
	for i, c := range cols {
		if c.MinScreen > w {
			continue
		}
		out[i] = c.Width
		used += c.Width
		flex += c.Flex
		shown++
	}
	if shown > 1 {
		used += shown - 1
	}
	rest := w - used
	if rest > 0 && flex > 0 {
		given := 0
		last := -1
		for i, c := range cols {
			if out[i] == 0 || c.Flex == 0 {
				continue
			}
			add := rest * c.Flex / flex
			out[i] += add
			given += add
			last = i
		}
		if last >= 0 {
			out[last] += rest - given
		}
	}
	return out
}

// shortID is an id cut to minPrefix characters; task ids (12 random base32
// characters) and the other short ids are shown whole. It is the fallback
// before a table has computed the unique prefix (list.prefixOf,
// table.setPrefix); longer ids (a registry's older UUIDv7 task ids) share
// their first 13 characters when created in the same millisecond.
func shortID(id string) string {
	if len(id) > minPrefix {
		return id[:minPrefix]
	}
	return id
}

// intern returns the canonical copy of s from set, so 100,000 rows share one
// string per status instead of one each.
func intern[T ~string](s T, set []T) T {
	for _, v := range set {
		if v == s {
			return v
		}
	}
	return s
}
