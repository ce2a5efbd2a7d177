package demo

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/supervisor"
)

// Summary counts what a registry holds, pane by pane (the headless demo
// prints it; tests assert on it).
type Summary struct {
	Tasks         map[core.TaskStatus]int
	RunsRunning   int
	RunsEnded     map[core.RunOutcome]int
	Approvals     map[core.ApprovalStatus]int
	Jobs          map[core.JobStatus]int
	Notifications map[core.NotificationKind]int
}

// Summarise reads the counts of reg (and of jobs, when not nil).
func Summarise(ctx context.Context, reg *core.Registry, jobs *supervisor.Jobs) (Summary, error) {
	sum := Summary{
		Tasks: map[core.TaskStatus]int{}, RunsEnded: map[core.RunOutcome]int{},
		Approvals: map[core.ApprovalStatus]int{}, Jobs: map[core.JobStatus]int{},
		Notifications: map[core.NotificationKind]int{},
	}
	tasks, err := reg.ListTasks(ctx, core.TaskFilter{})
	if err != nil {
		return sum, err
	}
	for _, t := range tasks {
		sum.Tasks[t.Status]++
	}
	runs, err := reg.ListRuns(ctx, core.RunFilter{})
	if err != nil {
		return sum, err
	}
	for _, r := range runs {
		if r.Running() {
			sum.RunsRunning++
		} else {
			sum.RunsEnded[r.Outcome]++
		}
	}
	aps, err := reg.ListApprovals(ctx, core.ApprovalFilter{})
	if err != nil {
		return sum, err
	}
	for _, a := range aps {
		sum.Approvals[a.Status]++
	}
	if jobs != nil {
		js, err := jobs.ListJobs(ctx, core.JobFilter{})
		if err != nil {
			return sum, err
		}
		for _, j := range js {
			sum.Jobs[j.Status]++
		}
	}
	ns, err := reg.ListNotifications(ctx, core.NotificationFilter{})
	if err != nil {
		return sum, err
	}
	for _, n := range ns {
		sum.Notifications[n.Kind]++
	}
	return sum, nil
}

// counts renders a map as "a 1 · b 2" in key order ("none" when empty).
func counts[K ~string](m map[K]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[K(k)]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " · ")
}

// String is a few lines, one per pane.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tasks:         %s\n", counts(s.Tasks))
	fmt.Fprintf(&b, "runs:          running %d; ended: %s\n", s.RunsRunning, counts(s.RunsEnded))
	fmt.Fprintf(&b, "approvals:     %s\n", counts(s.Approvals))
	fmt.Fprintf(&b, "jobs:          %s\n", counts(s.Jobs))
	fmt.Fprintf(&b, "notifications: %s\n", counts(s.Notifications))
	return b.String()
}
