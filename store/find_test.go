package store

import (
	"errors"
	"reflect"
	"testing"

	"github.com/clawpit/clawpit/core"
)

// TestOptionalReads: the reads where absence is an answer return nothing
// and no error for a missing row, the stored row otherwise;
// OperatorByFingerprint's absence is a core.ErrNotFound naming the key.
func TestOptionalReads(t *testing.T) {
	eachStore(t, func(t *testing.T) {
		db := openTest(t)
		view(t, db, func(w core.Tx) error {
			tx := w.(*tx)
			if b, ok, err := tx.GetBudget("session:s"); ok || err != nil || b != (core.BudgetRecord{Key: "session:s"}) {
				t.Errorf("GetBudget(absent) = %+v, %v, %v; want the key alone, false, nil", b, ok, err)
			}
			if s, err := tx.GetUsageSource("/t.jsonl"); s != nil || err != nil {
				t.Errorf("GetUsageSource(absent) = %+v, %v; want nil, nil", s, err)
			}
			if g, err := tx.FindGrant("Bash", "make", "s"); g != nil || err != nil {
				t.Errorf("FindGrant(absent) = %+v, %v; want nil, nil", g, err)
			}
			o, err := tx.OperatorByFingerprint("SHA256:nobody")
			if o != nil || !errors.Is(err, core.ErrNotFound) || err.Error() != "not found: no operator with key SHA256:nobody" {
				t.Errorf("OperatorByFingerprint(absent) = %+v, %v; want nil, ErrNotFound naming the key", o, err)
			}
			return nil
		})
		budget := core.BudgetRecord{Key: "session:s", Spec: `{"usd":1}`, SetBy: core.Actor("op@host"), SetAt: 7}
		src := core.UsageSource{Path: "/t.jsonl", Session: "s", RunID: "r", Offset: 42, Head: "h", LastMessage: "m",
			LastModel: "claude", Note: "n", ReadAt: 9}
		src.Last.Input, src.Last.Output, src.Last.CacheWrite, src.Last.CacheRead = 1, 2, 3, 4
		op := core.Operator{Name: "ada", Role: core.RoleOperator, CreatedBy: core.Actor("op@host"), CreatedAt: 5,
			Keys: []core.OperatorKey{{Fingerprint: "SHA256:ada", Line: "ssh-ed25519 AAAA ada"}}}
		update(t, db, func(w core.Tx) error {
			tx := w.(*tx)
			if err := tx.PutBudget(budget); err != nil {
				return err
			}
			if err := tx.PutUsageSource(&src); err != nil {
				return err
			}
			return tx.InsertOperator(&op)
		})
		view(t, db, func(w core.Tx) error {
			tx := w.(*tx)
			if b, ok, err := tx.GetBudget("session:s"); !ok || err != nil || b != budget {
				t.Errorf("GetBudget = %+v, %v, %v; want %+v, true, nil", b, ok, err, budget)
			}
			if s, err := tx.GetUsageSource("/t.jsonl"); err != nil || s == nil || *s != src {
				t.Errorf("GetUsageSource = %+v, %v; want %+v", s, err, src)
			}
			if o, err := tx.OperatorByFingerprint("SHA256:ada"); err != nil || !reflect.DeepEqual(*o, op) {
				t.Errorf("OperatorByFingerprint = %+v, %v; want %+v", o, err, op)
			}
			return nil
		})
	})
}
