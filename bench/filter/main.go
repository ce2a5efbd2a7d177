// Command filter times the Tasks pane's `/` filter in the store alone, one
// keystroke at a time, in every sort: the Window read a keystroke starts
// (core.WindowTx.Window with the console's span, 86 rows before the cursor's
// row and 172 from it), without the console around it.
//
//	go run -tags sqlite_fts5 ./bench/filter [-db /tmp/clawpit-p9/10000000.db | postgres://…/p9_1000000…] [-q 'task 4242,sess-4242,failed,zzz,cron']
//	                         [-sorts urgency,recent,created,label] [-passes 2] [-cpuprofile FILE]
//
// The registry is one bench/p9 built (bench/p1's shape: labels "history task
// N" and sessions "sess-N+1" number the tasks in time order, so a prefix of a
// number is common, and its matches lie deep in the newest-first orders).
// Each query is typed from its first character; each keystroke's window is
// placed at the first row the previous keystroke's window sent (in the
// console, the cursor's row: near it), reading 86 rows before it and 172
// from it; when the previous window began at the top of its matches, the
// console reads only from that row on (no match of the longer query lies
// before it), and so does this. Each pass opens the registry
// afresh; the first reads pages the OS may not hold yet, later ones mostly
// from its cache. It prints, per query and sort, every keystroke's time in
// ms and the slowest.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/view"
)

// firstID keeps the first task id a window sends (the cursor's row).
type firstID struct{ id string }

func (s *firstID) Task(t *core.Task) {
	if s.id == "" {
		s.id = t.ID
	}
}
func (s *firstID) Run(*core.Run)            {}
func (s *firstID) Approval(*core.Approval)  {}
func (s *firstID) Job(*core.Job)            {}
func (s *firstID) Alert(*core.Notification) {}

func main() {
	path := flag.String("db", "/tmp/clawpit-p9/10000000.db", "registry (built by bench/p9)")
	queries := flag.String("q", "task 4242,sess-4242,failed,zzz,cron", "queries, comma-separated")
	sorts := flag.String("sorts", strings.Join(view.SortNames(core.EntityTask), ","), "sorts, comma-separated")
	passes := flag.Int("passes", 2, "passes, each on a fresh open")
	narrow := flag.Bool("narrow", true, "read a lengthened query from the previous window's first row when that window began at the top (as the console does); false: always around it")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of every pass to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "filter:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*path, strings.Split(*queries, ","), strings.Split(*sorts, ","), *passes, *narrow); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "filter:", err)
		os.Exit(1)
	}
}

func run(path string, queries, sorts []string, passes int, narrow bool) error {
	ctx := context.Background()
	if strings.HasPrefix(path, "postgres://") || strings.HasPrefix(path, "postgresql://") {
		// A PostgreSQL registry (bench/p9 -pg copies each size into p9_<N>).
	} else if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%w (build it with go run -tags sqlite_fts5 ./bench/p9)", err)
	}
	for pass := 1; pass <= passes; pass++ {
		db, err := store.Open(ctx, path, store.Options{ReadOnly: true})
		if err != nil {
			return err
		}
		fmt.Printf("pass %d\n", pass)
		for _, q := range queries {
			for _, s := range sorts {
				var times []string
				worst := 0.0
				anchor := ""
				top := false // the previous window began at the top of its matches
				for i := 1; i <= len(q); i++ {
					sink := &firstID{}
					t0 := time.Now()
					err := db.View(ctx, func(tx core.Tx) error {
						w := core.WindowQuery{Entity: core.EntityTask, Sort: s, Filter: q[:i], Anchor: anchor, After: 172}
						if anchor != "" && (!top || !narrow) {
							w.Before = 86
						}
						page, err := tx.Window(w, sink)
						top = !page.MoreBefore
						return err
					})
					if err != nil {
						db.Close()
						return fmt.Errorf("%q by %s: %w", q[:i], s, err)
					}
					ms := float64(time.Since(t0).Microseconds()) / 1000
					worst = max(worst, ms)
					times = append(times, fmt.Sprintf("%.0f", ms))
					if sink.id != "" {
						anchor = sink.id
					}
				}
				fmt.Printf("  %-12q %-8s slowest %7.1f ms   per key %s\n", q, s, worst, strings.Join(times, " "))
			}
		}
		db.Close()
	}
	return nil
}
