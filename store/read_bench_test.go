package store

import (
	"fmt"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// BenchmarkReads times the store's single-row and list reads, one read per
// read transaction (a console refresh or a CLI `show`), over 20,000 tasks
// and 1,000 approvals, grants and jobs:
//
//	go test -tags sqlite_fts5 -run '^$' -bench Reads ./store
func BenchmarkReads(b *testing.B) {
	db := openTest(b)
	const n = 1000
	update(b, db, func(w core.Tx) error {
		t := w.(*tx)
		for i := range 20 * n {
			if err := t.InsertTask(benchTask(i)); err != nil {
				return err
			}
		}
		for i := range n {
			id := fmt.Sprintf("%012x", i)
			if err := t.InsertApproval(&core.Approval{ID: id, Session: "s", Tool: "Bash", Command: "make",
				Status: core.ApprovalPending, RequestedAt: core.Timestamp(i + 1)}); err != nil {
				return err
			}
			if err := t.InsertGrant(&core.Grant{ID: id, Tool: "Bash", Pattern: fmt.Sprintf("make %d", i),
				Scope: core.ScopeAlways, CreatedAt: core.Timestamp(i + 1)}); err != nil {
				return err
			}
			if err := t.InsertJob(&core.Job{ID: id, Session: "s", Command: []string{"make"}, Status: core.JobRunning,
				CreatedAt: core.Timestamp(i + 1)}); err != nil {
				return err
			}
		}
		if err := t.PutBudget(core.BudgetRecord{Key: "session:s", Spec: `{"usd":1}`, SetAt: 1}); err != nil {
			return err
		}
		if err := t.PutUsageSource(&core.UsageSource{Path: "/t.jsonl", Session: "s", ReadAt: 1}); err != nil {
			return err
		}
		return t.InsertOperator(&core.Operator{Name: "ada", Role: core.RoleOperator, CreatedAt: 1,
			Keys: []core.OperatorKey{{Fingerprint: "SHA256:ada", Line: "ssh-ed25519 AAAA ada"}}})
	})
	reads := []struct {
		name string
		read func(t *tx) error
	}{
		{"GetTask", func(t *tx) error { _, err := t.GetTask(benchTask(4321).ID); return err }},
		{"ListTasks100", func(t *tx) error { _, err := t.ListTasks(core.TaskFilter{Limit: 100}); return err }},
		{"GetApproval", func(t *tx) error { _, err := t.GetApproval(fmt.Sprintf("%012x", 432)); return err }},
		{"ListApprovalsPending", func(t *tx) error {
			_, err := t.ListApprovals(core.ApprovalFilter{Statuses: []core.ApprovalStatus{core.ApprovalPending}})
			return err
		}},
		{"ListJobs100", func(t *tx) error { _, err := t.ListJobs(core.JobFilter{Limit: 100}); return err }},
		{"FindGrant", func(t *tx) error { _, err := t.FindGrant("Bash", "make 432", "s"); return err }},
		{"GetBudget", func(t *tx) error { _, _, err := t.GetBudget("session:s"); return err }},
		{"GetUsageSource", func(t *tx) error { _, err := t.GetUsageSource("/t.jsonl"); return err }},
		{"OperatorByFingerprint", func(t *tx) error { _, err := t.OperatorByFingerprint("SHA256:ada"); return err }},
	}
	for _, r := range reads {
		b.Run(r.name, func(b *testing.B) {
			for b.Loop() {
				if err := db.View(b.Context(), func(t core.Tx) error { return r.read(t.(*tx)) }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
