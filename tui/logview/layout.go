package logview

import (
	"github.com/charmbracelet/x/ansi"

	"github.com/clawpit/clawpit/termtext"
)

// Geometry of one log line on screen. Lines in the ring are already
// sanitised (no escape sequences, no control characters, tabs expanded), so
// widths are those of plain text: one cell per ASCII byte, wide graphemes two.

// textWidth is the width of s in cells.
func textWidth(s string) int {
	if termtext.IsASCII(s) {
		return len(s)
	}
	return ansi.StringWidth(s)
}

// lineRows returns the number of screen rows s takes when hard-wrapped at
// width cells (at least 1, also for an empty line).
func lineRows(s string, width int) int {
	if width < 1 {
		return 1
	}
	if termtext.IsASCII(s) {
		if len(s) <= width {
			return 1
		}
		return (len(s) + width - 1) / width
	}
	return len(wrapStarts(s, width, nil))
}

// wrapStarts appends to dst the byte offset at which each wrapped row of s
// starts when hard-wrapped at width cells, and returns it. The first offset
// is always 0. A grapheme wider than the whole width gets a row of its own.
func wrapStarts(s string, width int, dst []int) []int {
	dst = append(dst, 0)
	if width < 1 {
		return dst
	}
	if termtext.IsASCII(s) {
		for off := width; off < len(s); off += width {
			dst = append(dst, off)
		}
		return dst
	}
	col := 0
	for i := 0; i < len(s); {
		cl, w := ansi.FirstGraphemeCluster(s[i:], ansi.GraphemeWidth)
		if len(cl) == 0 {
			break
		}
		if col > 0 && col+w > width {
			dst = append(dst, i)
			col = 0
		}
		col += w
		i += len(cl)
	}
	return dst
}

// cellSpan returns the byte range of s covering cells [from, from+width).
// A wide grapheme cut by either edge is left out, so the result never
// exceeds width cells.
func cellSpan(s string, from, width int) (int, int) {
	if termtext.IsASCII(s) {
		lo := min(from, len(s))
		hi := min(from+width, len(s))
		return lo, hi
	}
	lo, hi := -1, len(s)
	col := 0
	for i := 0; i < len(s); {
		cl, w := ansi.FirstGraphemeCluster(s[i:], ansi.GraphemeWidth)
		if len(cl) == 0 {
			break
		}
		if lo < 0 && col >= from {
			lo = i
		}
		if col+w > from+width {
			hi = i
			break
		}
		col += w
		i += len(cl)
	}
	if lo < 0 {
		return len(s), len(s)
	}
	return lo, max(lo, hi)
}
