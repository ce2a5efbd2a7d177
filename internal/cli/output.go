package cli

// Shared output helpers for every command (docs/contract.md "Commands: exit codes and JSON"): mutation results as
// {"applied", "reason", "<entity>"}, relative ages, aligned tables, key: value
// blocks and the event journal. Other command files may call these.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
)

// field is one key of a JSON object printed in a fixed order.
type field struct {
	Key   string
	Value any
}

// orderedObject marshals as a JSON object whose keys keep the given order, so
// mutation output always reads "applied", "reason", then the entity.
type orderedObject []field

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// mutationJSON is the documented shape of a mutation: {"applied": bool, "reason":
// "...", "<entity>": {...}} plus any extra fields (a grant, mirrored tasks).
func mutationJSON(res core.Result, entity string, v any, extra ...field) orderedObject {
	o := orderedObject{{"applied", res.Applied}, {"reason", res.Reason}, {entity, v}}
	return append(o, extra...)
}

// printMutation prints a mutation: the documented JSON object with --json, else the
// human line (with " — <reason>" appended when applied with a note, or
// "<subject>: not applied: <reason>" when refused).
func (a *app) printMutation(res core.Result, entity string, v any, subject, done string, extra ...field) error {
	if a.jsonOut {
		return a.printJSON(mutationJSON(res, entity, v, extra...))
	}
	switch {
	case !res.Applied:
		why := res.Reason
		if why == "" {
			why = "nothing changed"
		}
		fmt.Fprintf(a.stdout, "%s: not applied: %s\n", subject, termtext.Exact(why, 300))
	case res.Reason != "":
		fmt.Fprintf(a.stdout, "%s %s (%s)\n", subject, done, termtext.Exact(res.Reason, 300))
	default:
		fmt.Fprintf(a.stdout, "%s %s\n", subject, done)
	}
	return nil
}

// age is the relative age of ts at now (termtext.Age: "12s", "4m", "2h",
// "3d", "in 4m" for a time in the future); "-" when ts is absent.
func age(now time.Time, ts core.Timestamp) string {
	if ts.IsZero() {
		return "-"
	}
	return termtext.Age(now, ts.Time())
}

// stamp is an absolute time with its relative age: "2026-11-22T10:04:05.123Z
// (4m ago)", or "-" when absent.
func stamp(now time.Time, ts core.Timestamp) string {
	if ts.IsZero() {
		return "-"
	}
	a := age(now, ts)
	if strings.HasPrefix(a, "in ") {
		return ts.String() + " (" + a + ")"
	}
	return ts.String() + " (" + a + " ago)"
}

// newTable returns a tabwriter for aligned columns; cells are separated by
// '\t' and the caller must Flush.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
}

// row writes one tab-separated table row.
func row(w io.Writer, cells ...string) {
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

// kv is one "key: value" line of a show block.
type kv struct{ K, V string }

// count renders n with the singular or plural noun: "1 job", "2 jobs".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// printKV prints key: value lines with the values aligned. Values are shown
// exactly, every control character visible (termtext.Exact: a CR is ␍, a
// bidi override <U+202E>), so nothing in a value can hide the rest of it or
// start a line of its own; empty values print as "-".
func printKV(w io.Writer, pairs []kv) {
	width := 0
	for _, p := range pairs {
		width = max(width, len(p.K))
	}
	for _, p := range pairs {
		v := termtext.Exact(p.V, 2000)
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(w, "%-*s  %s\n", width+1, p.K+":", v)
	}
}

// printEvents prints an entity's event journal, oldest first: time, age,
// from → to, actor, "ignored" for refused changes, and the reason.
func printEvents(w io.Writer, now time.Time, evs []core.Event) {
	fmt.Fprintf(w, "\nevents (%d):\n", len(evs))
	tw := newTable(w)
	for _, e := range evs {
		change := e.To
		if e.From != "" && e.From != e.To {
			change = e.From + " → " + e.To
		}
		applied := "applied"
		if !e.Applied {
			applied = "ignored"
		}
		row(tw, "  "+e.At.String(), age(now, e.At), termtext.Exact(change, 60), termtext.Exact(string(e.Actor), 80), applied, termtext.Exact(e.Reason, 300))
	}
	tw.Flush()
}

// yesNo renders a bool for show blocks.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// orDash returns s, or "-" when empty (for table cells).
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
