package p1data_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/bench/p1data"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/maintain/sweep"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/supervisor"
)

// want is the rows Build writes for sh by kind and status, counted in Go
// row by row (each row's number i) from the rules Shape documents and the
// splits of decided approvals (1 in 5 denied) and finished jobs (1 in 4
// failed): an independent count, not a reading of the SQL.
func want(sh p1data.Shape) map[string]int {
	w := map[string]int{}
	for i := 1; i <= sh.Terminal; i++ {
		switch i % 20 {
		case 0:
			w["task failed"]++
		case 1:
			w["task lost"]++
		case 2:
			w["task cancelled"]++
		case 3:
			w["task timed_out"]++
		default:
			w["task succeeded"]++
		}
	}
	for i := 1; i <= sh.Active; i++ {
		switch i % 10 {
		case 7:
			w["task queued"]++
		case 0, 1, 2, 3:
			w["task running"]++
			w["run running"]++
		case 8:
			w["task running"]++
			w["job running"]++
		default:
			w["task running"]++
		}
	}
	w["task running"] += sh.Due
	w["run ended"] = sh.Terminal / 4
	for i := 1; i <= sh.Terminal/50; i++ {
		if i%4 == 0 {
			w["job failed"]++
		} else {
			w["job completed"]++
		}
	}
	for i := 1; i <= sh.Terminal/10; i++ {
		if i%5 == 0 {
			w["approval denied"]++
		} else {
			w["approval approved"]++
		}
	}
	w["notification delivered"] = sh.Terminal / 20
	w["event task"] = sh.Terminal
	w["session active"] = 500
	w["session closed"] = p1data.Sessions - 500
	for k, v := range w {
		if v == 0 {
			delete(w, k)
		}
	}
	return w
}

// TestBuildReadsBack builds small registries, reads every row back through
// core.Tx (a column the store cannot scan fails the test), counts them by
// status against Shape's documentation, and checks that a dry sweep finds
// exactly the Due tasks to mark lost and nothing else to do.
func TestBuildReadsBack(t *testing.T) {
	start, err := supervisor.ProcStartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, sh := range []p1data.Shape{
		{Terminal: 2000, Active: 200, Due: 10},
		// Fewer history rows than one per 10, 20 or 50 tasks: none of
		// those kinds is written, and no due task.
		{Terminal: 7, Active: 3},
	} {
		t.Run(fmt.Sprintf("terminal=%d,active=%d,due=%d", sh.Terminal, sh.Active, sh.Due), func(t *testing.T) {
			ctx := context.Background()
			sh.PID, sh.PIDStart, sh.Now = os.Getpid(), start, time.Now()
			path := filepath.Join(t.TempDir(), "registry.db")
			if err := p1data.Build(ctx, path, sh); err != nil {
				t.Fatal(err)
			}
			db, err := store.Open(ctx, path, store.Options{MustExist: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			got := map[string]int{}
			var due []string
			err = db.View(ctx, func(tx core.Tx) error {
				tasks, err := tx.ListTasks(core.TaskFilter{})
				if err != nil {
					return err
				}
				for _, k := range tasks {
					got["task "+string(k.Status)]++
					if strings.HasPrefix(k.Label, "orphan ") {
						due = append(due, k.ID)
					}
					if k.Kind != "work" || k.Rev != 1 || k.LastActivity() == 0 {
						return fmt.Errorf("task %s: kind %q rev %d activity %d: want the template's work, 1, set", k.ID, k.Kind, k.Rev, k.LastActivity())
					}
				}
				runs, err := tx.ListRuns(core.RunFilter{})
				if err != nil {
					return err
				}
				for _, r := range runs {
					if r.Running() {
						got["run running"]++
					} else {
						got["run ended"]++
					}
				}
				jobs, err := tx.ListJobs(core.JobFilter{})
				if err != nil {
					return err
				}
				for _, j := range jobs {
					got["job "+string(j.Status)]++
					if len(j.Command) < 2 {
						return fmt.Errorf("job %s: command %q", j.ID, j.Command)
					}
				}
				aps, err := tx.ListApprovals(core.ApprovalFilter{})
				if err != nil {
					return err
				}
				for _, a := range aps {
					got["approval "+string(a.Status)]++
					if a.Tool != "Bash" || a.Command != "git push origin main" {
						return fmt.Errorf("approval %s: tool %q command %q: want the template's", a.ID, a.Tool, a.Command)
					}
				}
				ns, err := tx.ListNotifications(core.NotificationFilter{})
				if err != nil {
					return err
				}
				for _, n := range ns {
					if n.DeliveredAt == 0 {
						got["notification undelivered"]++
					} else {
						got["notification delivered"]++
					}
				}
				evs, err := tx.EventsSince(0, 0)
				if err != nil {
					return err
				}
				for _, e := range evs {
					got["event "+e.Entity]++
				}
				ss, err := tx.ListSessions(core.SessionFilter{})
				if err != nil {
					return err
				}
				for _, s := range ss {
					got["session "+string(s.State)]++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			w := want(sh)
			keys := maps.Clone(w)
			maps.Copy(keys, got)
			for _, k := range slices.Sorted(maps.Keys(keys)) {
				if got[k] != w[k] {
					t.Errorf("%s: %d rows, want %d", k, got[k], w[k])
				}
			}
			if len(due) != sh.Due {
				t.Fatalf("%d orphan tasks, want %d", len(due), sh.Due)
			}

			reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
			jobs := supervisor.NewJobs(reg, supervisor.JobsOptions{Dir: t.TempDir()})
			reg.SetJobController(jobs)
			rep, err := sweep.New(reg, jobs).Sweep(ctx, true)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Counts.Lost != sh.Due {
				t.Errorf("dry sweep: %d lost, want %d (%s)", rep.Counts.Lost, sh.Due, rep.Summary())
			}
			var lost []string
			for _, a := range rep.Actions {
				if !slices.Contains(due, a.ID) {
					t.Errorf("dry sweep: %s %s %s → %s: only the due tasks have work", a.Rule, a.Entity, a.ID, a.To)
				}
				if a.Rule == sweep.RuleGraceLost {
					lost = append(lost, a.ID)
				}
			}
			slices.Sort(lost)
			slices.Sort(due)
			if !slices.Equal(lost, due) {
				t.Errorf("dry sweep marks %v lost (grace_lost), want the due tasks %v", lost, due)
			}
		})
	}
}
