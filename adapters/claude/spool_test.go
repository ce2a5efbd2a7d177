package claude

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/spool"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/store/storetest"
)

const fixtureSession = "5f1c9a2e-4b7d-4e21-9c3a-1d2e3f4a5b6c"

func spoolFixture(t *testing.T) (*core.Registry, *spool.Spool) {
	t.Helper()
	db, err := store.Open(context.Background(), storetest.Location(t, "r.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clock := core.NewFakeClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	return core.NewRegistry(db, clock, core.DefaultThresholds()), &spool.Spool{Dir: filepath.Join(t.TempDir(), "r.db.spool")}
}

func spoolEvent(t *testing.T, sp *spool.Spool, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePayload(b)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := EncodeSpoolRecord(p, Config{RunInactivity: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Append(rec); err != nil {
		t.Fatal(err)
	}
}

func sessionJournal(t *testing.T, reg *core.Registry) []string {
	t.Helper()
	_, evs, err := reg.GetSession(context.Background(), fixtureSession)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Reason)
	}
	return out
}

// TestFoldSpool: spooled events are applied in order, each once, even when
// their records survive the fold (a crash between commit and delete).
func TestFoldSpool(t *testing.T) {
	ctx := context.Background()
	reg, sp := spoolFixture(t)
	events := []string{"session_start", "post_tool_use", "subagent_start", "subagent_stop", "notification", "stop", "session_end"}
	for _, ev := range events {
		spoolEvent(t, sp, ev)
	}
	saved := map[string][]byte{}
	ents, _ := os.ReadDir(sp.Dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".rec") {
			saved[e.Name()], _ = os.ReadFile(filepath.Join(sp.Dir, e.Name()))
		}
	}
	rep, err := FoldSpool(ctx, reg, sp, nil, Config{})
	if err != nil || rep.Applied != len(events) || len(rep.Dropped) != 0 {
		t.Fatalf("fold: %+v %v", rep, err)
	}
	want := []string{"opened", "activity: PostToolUse Write", "activity: SubagentStart test-runner", "activity: Stop", "closed"}
	got := sessionJournal(t, reg)
	if !slices.Equal(got, want) {
		t.Fatalf("session journal %q, want %q", got, want)
	}
	// The records come back as if the deletes never happened: nothing is
	// applied again.
	for name, b := range saved {
		if err := os.WriteFile(filepath.Join(sp.Dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := FoldSpool(ctx, reg, sp, nil, Config{}); err != nil {
		t.Fatal(err)
	}
	if got := sessionJournal(t, reg); !slices.Equal(got, want) {
		t.Fatalf("after a second fold of the same records: %q", got)
	}
	ns, err := reg.ListNotifications(ctx, core.NotificationFilter{})
	if err != nil || len(ns) != 1 {
		t.Fatalf("notifications %+v %v, want one", ns, err)
	}
	run, _, err := reg.GetRun(ctx, "agent-7f3a9c21")
	if err != nil || run.Outcome != core.OutcomeOK {
		t.Fatalf("run %+v %v", run, err)
	}
	if n, _ := sp.Len(); n != 0 {
		t.Fatalf("%d records left", n)
	}
}

// TestFoldSpoolDropsBadRecords: a record that can never apply is dropped and
// reported; the fold goes on. PreToolUse is never spooled.
func TestFoldSpoolDropsBadRecords(t *testing.T) {
	reg, sp := spoolFixture(t)
	if _, err := sp.Append([]byte("not a record")); err != nil {
		t.Fatal(err)
	}
	spoolEvent(t, sp, "subagent_stop") // its start was never recorded
	spoolEvent(t, sp, "session_start")
	rep, err := FoldSpool(context.Background(), reg, sp, nil, Config{})
	if err != nil || rep.Applied != 1 || len(rep.Dropped) != 2 || len(SpoolReportLines(rep)) != 2 {
		t.Fatalf("fold: %+v %v", rep, err)
	}
	p, _ := ParsePayload([]byte(`{"hook_event_name":"PreToolUse","session_id":"s"}`))
	if _, err := EncodeSpoolRecord(p, Config{}); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("PreToolUse spooled: %v", err)
	}
	if _, _, err := decodeSpoolRecord([]byte(`{"v":1,"payload":{"HookEventName":"PreToolUse"}}`)); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("PreToolUse record folded: %v", err)
	}
}

// TestFoldSpoolOwnAndDropNote: the caller's own event lands after the
// spooled ones; events given up are told once in Alerts.
func TestFoldSpoolOwnAndDropNote(t *testing.T) {
	ctx := context.Background()
	reg, sp := spoolFixture(t)
	spoolEvent(t, sp, "session_start")
	sp.NoteDropped()
	sp.NoteDropped()
	b, _ := os.ReadFile(filepath.Join("testdata", "stop.json"))
	own, _ := ParsePayload(b)
	rep, err := FoldSpool(ctx, reg, sp, own, Config{})
	if err != nil || rep.Own != spool.OwnApplied {
		t.Fatalf("fold: %+v %v", rep, err)
	}
	if got := sessionJournal(t, reg); !slices.Equal(got, []string{"opened", "activity: Stop"}) {
		t.Fatalf("journal %q", got)
	}
	ns, _ := reg.ListNotifications(ctx, core.NotificationFilter{})
	if len(ns) != 1 || !strings.HasPrefix(ns[0].Text, "2 Claude Code hook events were lost") {
		t.Fatalf("notifications %+v", ns)
	}
}
