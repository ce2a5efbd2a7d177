package core_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/internal/registrytest"
	"github.com/clawpit/clawpit/supervisor"
)

// swNotify stores one notification directly.
func swNotify(f *registrytest.Fixture, kind core.NotificationKind, subject string) core.Notification {
	f.T.Helper()
	n := core.Notification{Session: "ops", Kind: kind, SubjectID: subject, Text: "about " + subject,
		DedupKey: string(kind) + ":" + subject, CreatedAt: f.Now()}
	f.Must(f.DB.Update(f.Ctx, func(tx core.Tx) error { _, err := tx.InsertNotification(&n); return err }))
	return n
}

func swUndelivered(f *registrytest.Fixture) []core.Notification {
	f.T.Helper()
	ns, err := f.Reg.ListNotifications(f.Ctx, core.NotificationFilter{UndeliveredOnly: true})
	f.Must(err)
	return ns
}

// TestNotifierDelivers: the command gets each notification's JSON on stdin
// once; exit 0 marks it delivered, a failure leaves it for a later pass.
func TestNotifierDelivers(t *testing.T) {
	f := registrytest.New(t)
	out := t.TempDir()
	a := swNotify(f, core.NotifyTaskSilent, "task-a")
	swNotify(f, core.NotifyRunTimedOut, "run-b")
	n, err := core.NewNotifier(f.Reg, `cat > "$OUT/$CLAWPIT_NOTIFICATION_ID-$CLAWPIT_NOTIFICATION_KIND.json"`, supervisor.Shell{})
	f.Must(err)
	t.Setenv("OUT", out)
	st, err := n.DeliverPending(f.Ctx)
	f.Must(err)
	if st.Delivered != 2 || st.Failed != 0 || len(swUndelivered(f)) != 0 {
		t.Fatalf("stats %+v, undelivered %d", st, len(swUndelivered(f)))
	}
	b, err := os.ReadFile(filepath.Join(out, "1-task_silent.json"))
	f.Must(err)
	var got core.Notification
	f.Must(json.Unmarshal(b, &got))
	if got.ID != 1 || got.Kind != a.Kind || got.Text != a.Text || got.DedupKey != a.DedupKey {
		t.Errorf("stdin JSON %s", b)
	}
	if st, _ := n.DeliverPending(f.Ctx); st != (core.NotifyStats{}) {
		t.Errorf("second pass redelivered: %+v", st)
	}

	// A failing command: not delivered, retried after the backoff.
	swNotify(f, core.NotifyTaskFailed, "task-c")
	flag := filepath.Join(out, "ok")
	bad, err := core.NewNotifier(f.Reg, `test -e "`+flag+`" || { echo nope >&2; exit 3; }`, supervisor.Shell{})
	f.Must(err)
	bad.RetryMin = time.Hour
	if st, err := bad.DeliverPending(f.Ctx); err != nil || st.Failed != 1 || len(swUndelivered(f)) != 1 {
		t.Fatalf("failing command: %+v %v", st, err)
	}
	if st, _ := bad.DeliverPending(f.Ctx); st.Deferred != 1 || st.Failed != 0 {
		t.Fatalf("retried before the backoff: %+v", st)
	}
	f.Must(os.WriteFile(flag, nil, 0o600))
	bad.RetryMin = time.Nanosecond
	bad2, _ := core.NewNotifier(f.Reg, bad.Command(), supervisor.Shell{}) // a new process: no backoff state
	if st, err := bad2.DeliverPending(f.Ctx); err != nil || st.Delivered != 1 || len(swUndelivered(f)) != 0 {
		t.Fatalf("retry: %+v %v", st, err)
	}
	if _, err := core.NewNotifier(f.Reg, "  ", supervisor.Shell{}); err == nil {
		t.Error("empty command accepted")
	}
}

// TestNotifierRunAndFollow: Run delivers new notifications as they are
// created; FollowNotifications reports only those after its cursor.
func TestNotifierRunAndFollow(t *testing.T) {
	f := registrytest.New(t)
	swNotify(f, core.NotifyTaskSilent, "old")
	cursor, err := core.LastNotificationID(f.Ctx, f.DB)
	f.Must(err)
	if cursor != 1 {
		t.Fatalf("last id %d", cursor)
	}
	ctx, cancel := context.WithTimeout(f.Ctx, 20*time.Second)
	defer cancel()
	seen := make(chan core.Notification, 10)
	done := make(chan error, 1)
	go func() {
		done <- core.FollowNotifications(ctx, f.DB, cursor, "", 5*time.Millisecond, func(n core.Notification) error {
			seen <- n
			return nil
		})
	}()
	n, err := core.NewNotifier(f.Reg, "cat >/dev/null", supervisor.Shell{})
	f.Must(err)
	n.Poll = 5 * time.Millisecond
	ran := make(chan error, 1)
	go func() { ran <- n.Run(ctx) }()
	swNotify(f, core.NotifyJobLost, "job-1")
	select {
	case got := <-seen:
		if got.SubjectID != "job-1" {
			t.Errorf("followed %+v, want job-1 (not the old one)", got)
		}
	case <-ctx.Done():
		t.Fatal("follow saw nothing")
	}
	for len(swUndelivered(f)) != 0 {
		if ctx.Err() != nil {
			t.Fatal("Run did not deliver")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
	if err := <-ran; err != nil {
		t.Error(err)
	}
}
