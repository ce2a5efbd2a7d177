package openclaw

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/maintain/sweep"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixtureNow is the fixture's clock: every row is relative to it.
var fixtureNow = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func shapesDB(t *testing.T, wal bool) (stateDir, path string) {
	t.Helper()
	stateDir = t.TempDir()
	path = filepath.Join(stateDir, filepath.FromSlash(DBFile))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFixture(context.Background(), path, FixtureSpec{Now: fixtureNow, Shapes: true, WAL: wal}); err != nil {
		t.Fatal(err)
	}
	return stateDir, path
}

func openShapes(t *testing.T) *DB {
	t.Helper()
	dir, _ := shapesDB(t, true)
	d, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func auditText(r *AuditReport) string {
	var b strings.Builder
	for _, f := range r.Findings {
		age := "-"
		if f.AgeMs != nil {
			age = fmt.Sprint(*f.AgeMs / 1000)
		}
		fmt.Fprintf(&b, "%s %s %s %s %s %s age=%ss: %s\n", f.Severity, f.Code, f.Source, f.Entity, f.ID, f.Status, age, f.Detail)
	}
	fmt.Fprintf(&b, "total=%d errors=%d warnings=%d\n", r.Summary.Total, r.Summary.Errors, r.Summary.Warnings)
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n--- got\n%s--- want\n%s", name, got, want)
	}
}

func TestAuditGolden(t *testing.T) {
	d := openShapes(t)
	r, err := d.Audit(context.Background(), Options{Now: fixtureNow})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "audit.golden", auditText(r))
}

func TestPreviewGolden(t *testing.T) {
	d := openShapes(t)
	var b strings.Builder
	c, err := d.Preview(context.Background(), Options{Now: fixtureNow}, func(a sweep.Action) error {
		fmt.Fprintf(&b, "%s %s %s: %s → %s — %s\n", a.Rule, a.Entity, a.ID, a.From, a.To, a.Reason)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "reconciled=%d recovered=%d cleanup_stamped=%d pruned=%d\n", c.Reconciled, c.Recovered, c.CleanupStamped, c.Pruned)
	golden(t, "maintenance.golden", b.String())
}
