package tui

import "strings"

// cmdUnit is one part of a command line as fitCommand cuts it: the program,
// a word, a flag alone, or a flag with the word after it (its value, as far
// as the text tells).
type cmdUnit struct {
	text string
	flag bool
}

// cmdUnits splits words into units. A flag (a word starting with "-") takes
// the next word as its value unless it carries one ("--seed=101") or the
// next word is a flag too: "--test --seed 101 --duration 12s" is
// [--test] [--seed 101] [--duration 12s]. Which word is a value cannot be
// told from the text, so a flag and the word after it are kept or dropped
// together: a shown value always has its flag.
func cmdUnits(words []string) []cmdUnit {
	out := []cmdUnit{{text: words[0]}}
	for i := 1; i < len(words); i++ {
		wd := words[i]
		if !strings.HasPrefix(wd, "-") {
			out = append(out, cmdUnit{text: wd})
			continue
		}
		if !strings.Contains(wd, "=") && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
			wd += " " + words[i+1]
			i++
		}
		out = append(out, cmdUnit{text: wd, flag: true})
	}
	return out
}

// joinUnits joins the kept units; each run of dropped ones shows as "…".
func joinUnits(units []cmdUnit, keep []bool) string {
	var b strings.Builder
	gap := false
	for i, u := range units {
		if !keep[i] {
			gap = true
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
			if gap {
				b.WriteString("… ")
			}
		}
		gap = false
		b.WriteString(u.text)
	}
	if gap {
		b.WriteString(" …")
	}
	return b.String()
}

// fitCommand fits a command line into w cells keeping what identifies it:
// the verb chain (the program and its words that are not flags) and the
// target (the last unit). A flag and its value go together (cmdUnits).
//
//  1. Flags are dropped (each run shown as "…"), then as many as fit are
//     put back from the left.
//
//  2. The verb chain and the target, verbs dropped from the chain's end.
//
//  3. The program and as much of the target as fits; else the line cut.
//
//     clawpit __demo-build --test --seed 101 --duration 12s   (w=36)
//     → clawpit __demo-build --test …
func fitCommand(s string, w int) string {
	if width(s) <= w {
		return fit(s, w)
	}
	words := strings.Fields(s)
	if len(words) < 3 {
		return fit(s, w)
	}
	units := cmdUnits(words)
	keep := make([]bool, len(units))
	for i, u := range units {
		keep[i] = !u.flag
	}
	if width(joinUnits(units, keep)) <= w {
		for i, u := range units {
			if u.flag {
				keep[i] = true
				if width(joinUnits(units, keep)) > w {
					keep[i] = false
				}
			}
		}
		return fit(joinUnits(units, keep), w)
	}
	// 2. The chain and the target; a target that is a flag may go too.
	last := len(units) - 1
	if t, ok := fitChain(units, true, w); ok {
		return fit(t, w)
	}
	if units[last].flag {
		if t, ok := fitChain(units, false, w); ok {
			return fit(t, w)
		}
		return fit(s, w)
	}
	// 3. The program and as much of the target as fits.
	head := words[0] + " … "
	if room := w - width(head); room >= 4 {
		return fit(head+truncLeft(units[last].text, room), w)
	}
	return fit(s, w)
}

// fitChain joins the program, the words that are not flags and (withLast)
// the last unit, dropping words from the chain's end until it fits in w.
func fitChain(units []cmdUnit, withLast bool, w int) (string, bool) {
	last := len(units) - 1
	keep := make([]bool, len(units))
	for i := range keep {
		keep[i] = (i == last && withLast) || (i < last && !units[i].flag)
	}
	for {
		if t := joinUnits(units, keep); width(t) <= w {
			return t, true
		}
		j := last - 1
		for j > 0 && !keep[j] {
			j--
		}
		if j == 0 {
			return "", false
		}
		keep[j] = false
	}
}
