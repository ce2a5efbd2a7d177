package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

// randomTasks is a registry of n tasks whose fields are short random
// strings over a small alphabet (case pairs, a space, a hyphen, a digit,
// non-ASCII letters, LIKE's "_"), so a query's trigrams often lie in
// different fields of one row, and the fields' texts (for queries).
func randomTasks(t *testing.T, n int, seed uint64) (*DB, []string) {
	db := openTest(t)
	r := rand.New(rand.NewPCG(seed, 7))
	alpha := []rune("abcAB -1éÉ_")
	word := func(k int) string {
		var b strings.Builder
		for range r.IntN(k) {
			b.WriteRune(alpha[r.IntN(len(alpha))])
		}
		return b.String()
	}
	var texts []string
	statuses := []core.TaskStatus{core.TaskRunning, core.TaskQueued, core.TaskLost, core.TaskFailed, core.TaskSucceeded}
	update(t, db, func(tx core.Tx) error {
		for i := range n {
			st := statuses[r.IntN(len(statuses))]
			k := &core.Task{ID: fmt.Sprintf("%s%04d", word(3), i), Runtime: []core.Runtime{"cli", "cron", "acp"}[r.IntN(3)], Status: st,
				DeliveryStatus: core.DeliveryPending, NotifyPolicy: core.NotifyDoneOnly,
				Label: word(6), Task: word(5), Kind: word(3), OwnerSession: word(5), ChildSession: word(3),
				CreatedAt: core.Timestamp(1000 + r.IntN(5)), LastEventAt: core.Timestamp(2000 + r.IntN(5))}
			if !st.Active() {
				k.EndedAt = core.Timestamp(1990 + r.IntN(20))
			}
			if st == core.TaskFailed || r.IntN(4) == 0 {
				k.Error = word(6)
			}
			texts = append(texts, k.ID, k.Label, k.Task, k.OwnerSession, k.ChildSession, k.Error)
			if err := tx.InsertTask(k); err != nil {
				return err
			}
		}
		return nil
	})
	return db, texts
}

// TestTaskFilterRandom: every window of a random query (some spanning two
// fields), around a random anchor with random spans both ways, equals the
// LIKE answer with its more-before/after flags, in every sort, under caps
// that force each way of reading the text (the budgeted probe finishing,
// interrupted, or skipped; the probe; the candidates sorted; LIKE), and the
// count agrees. (A reviewer's test.)
func TestTaskFilterRandom(t *testing.T) {
	ctx := context.Background()
	w, _ := winTableOf(core.EntityTask)
	seeds := uint64(2)
	if raceEnabled || testing.Short() {
		seeds = 1
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		db, texts := randomTasks(t, 700, seed)
		r := rand.New(rand.NewPCG(seed, 9))
		var queries []string
		for range 40 {
			// A substring of two fields' texts joined: sometimes across.
			a := []rune(texts[r.IntN(len(texts))] + texts[r.IntN(len(texts))])
			if len(a) < 3 {
				continue
			}
			i := r.IntN(len(a) - 2)
			j := i + 3 + r.IntN(min(4, len(a)-i-2))
			queries = append(queries, string(a[i:min(j, len(a))]))
		}
		queries = append(queries, "abc", "b-1", "AB ", "a a", "1 a", "c-b", "éÉ", "ÉÉa", "a_b", "é", "_", "ab")
		capsList := []filterCaps{{},
			{index: 3, near: 5, probe: 1000},                                                   // budgeted probe (default budget)
			{index: 3, near: 5, probe: 1000, sort: 1000, budget: int64(time.Hour)},             // it always finishes
			{index: 3, near: 5, probe: 1000, sort: 1000, budget: 1},                            // it never does: sorted
			{index: 3, near: 5, probe: 20, sort: 1000, budget: int64(time.Hour)},               // over the probe cap: LIKE
			{index: 1, near: 2, probe: 100000, sort: 100000, budget: int64(time.Hour)},         // every candidate count
			{index: 3, near: 5, probe: 1000, sort: 1},                                          // the probe, unbudgeted
			{index: 3, near: 5, probe: 1000, sort: 1000, budget: int64(50 * time.Microsecond)}, // either, by timing
		}
		for _, s := range w.sorts {
			full := allInOrder(t, db, core.EntityTask, s, "")
			for _, fc := range capsList {
				db.filterCap = fc
				for _, q := range queries {
					want := allInOrder(t, db, core.EntityTask, s, q)
					match := map[string]bool{}
					for _, id := range want {
						match[id] = true
					}
					for k := 0; k < 6; k++ {
						ai := r.IntN(len(full))
						before, after := 1+r.IntN(30), 1+r.IntN(30)
						var exp []string
						var pre, post []string
						for _, id := range full[:ai] {
							if match[id] {
								pre = append(pre, id)
							}
						}
						for _, id := range full[ai:] {
							if match[id] {
								post = append(post, id)
							}
						}
						exp = append(exp, pre[max(0, len(pre)-before):]...)
						exp = append(exp, post[:min(len(post), after)]...)
						var sk idSink
						var page core.WindowPage
						err := db.View(ctx, func(tx core.Tx) error {
							var err error
							page, err = tx.(core.WindowTx).Window(core.WindowQuery{Entity: core.EntityTask, Sort: s.name, Filter: q,
								Anchor: full[ai], Before: before, After: after}, &sk)
							return err
						})
						if err != nil {
							t.Fatal(err)
						}
						if !slices.Equal(sk.ids, exp) || page.MoreBefore != (len(pre) > before) || page.MoreAfter != (len(post) > after) {
							t.Fatalf("seed %d sort %s caps %+v q %q anchor %s b%d a%d:\n got %v (more %v %v)\nwant %v (more %v %v)",
								seed, s.name, fc, q, full[ai], before, after, sk.ids, page.MoreBefore, page.MoreAfter,
								exp, len(pre) > before, len(post) > after)
						}
					}
					// The count, exact (no cap reached).
					var n int64
					if err := db.View(ctx, func(tx core.Tx) error {
						var err error
						n, _, err = tx.(core.WindowTx).CountWindow(core.WindowQuery{Entity: core.EntityTask, Filter: q}, 100000)
						return err
					}); err != nil {
						t.Fatal(err)
					}
					if n != int64(len(want)) {
						t.Fatalf("count %q caps %+v: %d want %d", q, fc, n, len(want))
					}
				}
			}
		}
	}
}
