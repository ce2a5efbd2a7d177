package tui

// gutter is the cells left of the first column: the cursor mark on the
// selected row ("▸ "), blank on the others. The header's first title spans
// it, so the title line starts at the left edge.
const (
	gutter     = 2
	cursorMark = "▸ "
)

// blankCell reports whether a cell shows nothing. The "-" placeholder is
// not blank: it says something ("no exit code yet", "not pending").
func blankCell(s string) bool { return s == "" }

// frameWidths fits the columns to what the rows on screen hold (README "The console":
// the table uses the width it has). base is the layout's widths (0 =
// hidden at this screen width), cells the visible rows' cells, avail the
// cells left for columns and their one-space separators. It returns the
// widths for this frame in out (reused):
//   - a column takes no more than its widest cell (or its title) needs, so
//     a short or blank column gives its room to the others (the id, status
//     and right-aligned columns keep their width: steady while scrolling);
//   - a column whose cells are all blank is hidden while another column
//     would be cut (the id and status columns always stay);
//   - the room left goes first to columns whose text would be cut, shared
//     by their Flex weight (at least 1), up to what they need; what is
//     still left goes to the flexible columns, so the table fills the line.
func frameWidths(cols []column, base []int, cells [][]string, keep [2]int, avail int, out []int) []int {
	out = append(out[:0], base...)
	need, blank := columnNeeds(cols, base, cells, keep)
	for i, c := range cols {
		// The id, status and right-aligned (ages, counts) columns keep
		// their width, so the table shifts little as the operator scrolls.
		if out[i] > 0 && !c.Right && i != keep[0] && i != keep[1] {
			out[i] = max(1, min(out[i], need[i]))
		}
	}
	rest, cut := shareRoom(cols, need, avail, out)
	if cut && hideBlank(out, blank) {
		rest, _ = shareRoom(cols, need, avail, out)
	}
	padFlex(cols, rest, out)
	return out
}

// columnNeeds returns, for each column shown in base, the cells its widest
// cell (or its title) needs, and whether all its cells in the rows are
// blank (never for the columns in keep).
func columnNeeds(cols []column, base []int, cells [][]string, keep [2]int) (need []int, blank []bool) {
	need = make([]int, len(cols))
	blank = make([]bool, len(cols))
	for i, c := range cols {
		if base[i] == 0 {
			continue
		}
		need[i] = width(c.Title)
		blank[i] = true
		for _, row := range cells {
			if i >= len(row) {
				continue
			}
			if !blankCell(row[i]) {
				blank[i] = false
			}
			need[i] = max(need[i], width(row[i]))
		}
		if i == keep[0] || i == keep[1] {
			blank[i] = false
		}
	}
	return need, blank
}

// shareRoom gives the room in avail that the shown columns of out and their
// one-space separators leave to the columns short of their need, by their
// Flex weight (at least 1), each up to its need. It returns the room still
// left and whether a column is still short (its text would be cut).
func shareRoom(cols []column, need []int, avail int, out []int) (rest int, cut bool) {
	used, shown := 0, 0
	for i := range cols {
		if out[i] == 0 {
			continue
		}
		used += out[i]
		shown++
	}
	rest = avail - used - max(0, shown-1)
	for rest > 0 {
		wt, short := 0, 0
		for i, c := range cols {
			if out[i] > 0 && need[i] > out[i] {
				wt += max(1, c.Flex)
				short++
			}
		}
		if short == 0 {
			break
		}
		given := 0
		for i, c := range cols {
			if out[i] == 0 || need[i] <= out[i] {
				continue
			}
			add := min(need[i]-out[i], max(1, rest*max(1, c.Flex)/wt), rest-given)
			out[i] += add
			given += add
			if given == rest {
				break
			}
		}
		rest -= given
	}
	for i := range cols {
		if out[i] > 0 && need[i] > out[i] {
			cut = true
		}
	}
	return rest, cut
}

// hideBlank hides (width 0) the shown columns whose cells are all blank and
// reports whether it hid one.
func hideBlank(out []int, blank []bool) bool {
	hid := false
	for i := range out {
		if out[i] > 0 && blank[i] {
			out[i] = 0
			hid = true
		}
	}
	return hid
}

// padFlex shares rest among the shown flexible columns by their Flex weight,
// so the table fills the line; the last one takes what rounding leaves.
func padFlex(cols []column, rest int, out []int) {
	if rest <= 0 {
		return
	}
	flex, last := 0, -1
	for i, c := range cols {
		if out[i] > 0 && c.Flex > 0 {
			flex += c.Flex
			last = i
		}
	}
	if last < 0 {
		return
	}
	given := 0
	for i, c := range cols {
		if out[i] > 0 && c.Flex > 0 {
			add := rest * c.Flex / flex
			out[i] += add
			given += add
		}
	}
	out[last] += rest - given
}
