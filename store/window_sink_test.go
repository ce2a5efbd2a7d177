package store

import (
	"slices"
	"testing"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store/storetest"
)

// readingSink reads in the window's transaction for every row, as the
// console's feed does (each task's usage).
type readingSink struct {
	idSink
	tx  core.Tx
	err error
}

func (s *readingSink) Task(k *core.Task) {
	if _, err := s.tx.ListUsage(core.UsageFilter{Scope: core.UsageTask, IDs: []string{k.ID}}); err != nil && s.err == nil {
		s.err = err
	}
	s.idSink.Task(k)
}

// TestWindowSinkMayRead: a sink may read in the window's transaction while
// the window is sent (on PostgreSQL a connection serves one result at a
// time), forwards and backwards, and the rows still come in window order.
func TestWindowSinkMayRead(t *testing.T) { storetest.Each(t, testWindowSinkMayRead) }

func testWindowSinkMayRead(t *testing.T) {
	db := windowFixture(t, 40)
	for _, q := range []core.WindowQuery{{Entity: core.EntityTask, After: 10}, {Entity: core.EntityTask, End: true, After: 10},
		{Entity: core.EntityTask, Sort: "label", After: 50}} {
		var plain idSink
		view(t, db, func(tx core.Tx) error { _, err := tx.(core.WindowTx).Window(q, &plain); return err })
		s := &readingSink{}
		view(t, db, func(tx core.Tx) error {
			s.tx = tx
			_, err := tx.(core.WindowTx).Window(q, s)
			return err
		})
		if s.err != nil {
			t.Fatalf("%+v: a read in the sink: %v", q, s.err)
		}
		if len(plain.ids) == 0 || !slices.Equal(s.ids, plain.ids) {
			t.Fatalf("%+v: %v, want %v", q, s.ids, plain.ids)
		}
	}
}
