package store

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

func TestFilterProbe(t *testing.T) {
	path := os.Getenv("CLAWPIT_FILTER_DB")
	if path == "" {
		t.Skip()
	}
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w, _ := winTableOf(core.EntityTask)
	s := w.sorts[0]
	for _, q := range strings.Split(os.Getenv("CLAWPIT_FILTER_Q"), ",") {
		for i := 1; i <= len(q); i++ {
			p := q[:i]
			var mode int
			var n []int64
			t0 := time.Now()
			var plan time.Duration
			var rows int
			err := db.View(context.Background(), func(ctx core.Tx) error {
				pl, err := ctx.(*tx).planFilter(taskFilter, s, p, false)
				if err != nil {
					return err
				}
				plan = time.Since(t0)
				mode, n = pl.text, pl.n
				var sk idSink
				_, err = ctx.Window(core.WindowQuery{Entity: core.EntityTask, Filter: p, After: 60}, &sk)
				rows = len(sk.ids)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%-12q mode %d n %v plan %v total %v rows %d", p, mode, n, plan.Round(time.Microsecond), time.Since(t0).Round(time.Microsecond), rows)
		}
	}
}
