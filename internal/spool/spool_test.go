package spool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeNow is a clock that moves 1 ms per reading, so record names sort in
// append order.
func fakeNow() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

func newSpool(t *testing.T) *Spool {
	t.Helper()
	return &Spool{Dir: filepath.Join(t.TempDir(), "registry.db.spool"), Now: fakeNow()}
}

func appendAll(t *testing.T, s *Spool, recs ...string) []string {
	t.Helper()
	var keys []string
	for _, r := range recs {
		k, err := s.Append([]byte(r))
		if err != nil {
			t.Fatalf("append %q: %v", r, err)
		}
		keys = append(keys, k)
	}
	return keys
}

// collect is an apply that records what it saw.
type collect struct {
	mu   sync.Mutex
	seen []string
	keys map[string]int
}

func (c *collect) apply(_ context.Context, e Entry) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil {
		c.keys = map[string]int{}
	}
	c.keys[e.Key]++
	c.seen = append(c.seen, string(e.Data))
	return nil
}

func TestFoldOrderAndModes(t *testing.T) {
	s := newSpool(t)
	appendAll(t, s, "a", "b", "c")
	fi, err := os.Stat(s.Dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("spool dir mode %v, %v; want 0700", fi.Mode(), err)
	}
	ents, _ := os.ReadDir(s.Dir)
	for _, e := range ents {
		if i, _ := e.Info(); strings.HasSuffix(e.Name(), suffix) && i.Mode().Perm() != 0o600 {
			t.Fatalf("%s mode %v, want 0600", e.Name(), i.Mode())
		}
	}
	var c collect
	rep, err := s.Fold(context.Background(), c.apply, nil, &Own{Data: []byte("own"), Apply: func(context.Context) error {
		c.seen = append(c.seen, "own")
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c", "own"}; !slices.Equal(c.seen, want) {
		t.Fatalf("folded %q, want %q", c.seen, want)
	}
	if rep.Applied != 3 || rep.Own != OwnApplied {
		t.Fatalf("report %+v", rep)
	}
	if n, _ := s.Len(); n != 0 {
		t.Fatalf("%d records left", n)
	}
}

// TestFoldStopsAndKeeps: a busy apply stops the fold with the record kept
// and the own record spooled after it; a DropError drops only its record.
func TestFoldStopsAndKeeps(t *testing.T) {
	s := newSpool(t)
	appendAll(t, s, "a", "bad", "b")
	busy := errors.New("database is locked")
	var seen []string
	failAt := "b"
	apply := func(_ context.Context, e Entry) error {
		switch string(e.Data) {
		case "bad":
			return Drop(errors.New("refused"))
		case failAt:
			return busy
		}
		seen = append(seen, string(e.Data))
		return nil
	}
	rep, err := s.Fold(context.Background(), apply, nil, &Own{Data: []byte("own"), Apply: func(context.Context) error {
		t.Fatal("own applied before the records ahead of it")
		return nil
	}})
	if !errors.Is(err, busy) || rep.Own != OwnSpooled || len(rep.Dropped) != 1 || !strings.Contains(rep.Dropped[0], "refused") {
		t.Fatalf("fold: %+v, %v", rep, err)
	}
	failAt = ""
	if _, err := s.Fold(context.Background(), apply, nil, nil); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "own"}; !slices.Equal(seen, want) {
		t.Fatalf("folded %q, want %q", seen, want)
	}
}

func TestAppendBounds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		entries  int
		bytes    int64
		recs     []string
		wantFull int // index of the first refused record
	}{
		{"count", 2, 0, []string{"a", "b", "c"}, 2},
		{"bytes", 0, 10, []string{"12345", "1234", "12"}, 2},
		{"one over", 0, 4, []string{"12345"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSpool(t)
			s.MaxEntries, s.MaxBytes = tc.entries, tc.bytes
			for i, r := range tc.recs {
				_, err := s.Append([]byte(r))
				if (i >= tc.wantFull) != errors.Is(err, ErrFull) {
					t.Fatalf("record %d: %v", i, err)
				}
			}
		})
	}
}

// TestDropNote: records given up are counted, handed to the next fold once.
func TestDropNote(t *testing.T) {
	s := newSpool(t)
	s.MaxEntries = 1
	appendAll(t, s, "a")
	var c collect
	own := &Own{Data: []byte("b"), Apply: func(context.Context) error { return errors.New("busy") }}
	// The fold lock is held elsewhere: own is spooled without it, and the
	// spool is full.
	held := holdLock(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	rep, err := s.Fold(ctx, c.apply, nil, own)
	cancel()
	held()
	if err == nil || rep.Own != OwnLost || !errors.Is(rep.OwnErr, ErrFull) {
		t.Fatalf("fold under another's lock: %+v, %v", rep, err)
	}
	s.NoteDropped()
	if n, _ := s.DropNote(); n != 2 {
		t.Fatalf("drop note %d, want 2", n)
	}
	var told []int
	dropped := func(_ context.Context, n int) error { told = append(told, n); return nil }
	if _, err := s.Fold(context.Background(), c.apply, dropped, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fold(context.Background(), c.apply, dropped, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(told, []int{2}) || !slices.Equal(c.seen, []string{"a"}) {
		t.Fatalf("told %v, folded %q", told, c.seen)
	}
}

// holdLock takes the spool's fold lock as another process would; the
// returned func releases it.
func holdLock(t *testing.T, s *Spool) func() {
	t.Helper()
	if err := s.ensureDir(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return func() { f.Close() }
}

// TestConcurrentFolders: folders and appenders at once (run with -race):
// every record applied exactly once, each appender's records in its order.
func TestConcurrentFolders(t *testing.T) {
	s := newSpool(t)
	const writers, per, folders = 4, 25, 4
	var c collect
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if _, err := s.Append(fmt.Appendf(nil, "%d-%03d", w, i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var fg sync.WaitGroup
	for range folders {
		fg.Add(1)
		go func() {
			defer fg.Done()
			for {
				if _, err := s.Fold(context.Background(), c.apply, nil, nil); err != nil {
					t.Error(err)
					return
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	fg.Wait()
	if _, err := s.Fold(context.Background(), c.apply, nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(c.seen) != writers*per {
		t.Fatalf("applied %d records, want %d", len(c.seen), writers*per)
	}
	for k, n := range c.keys {
		if n != 1 {
			t.Fatalf("record %s applied %d times", k, n)
		}
	}
	last := map[string]string{}
	for _, r := range c.seen {
		w := strings.SplitN(r, "-", 2)[0]
		if r <= last[w] {
			t.Fatalf("record %s after %s", r, last[w])
		}
		last[w] = r
	}
}

// TestStaleTemp: an appender that died mid-write leaves a temporary file no
// fold reads; it is removed once old.
func TestStaleTemp(t *testing.T) {
	s := newSpool(t)
	appendAll(t, s, "a")
	tmp := filepath.Join(s.Dir, tmpPrefix+"00000000000000000001-dead")
	if err := os.WriteFile(tmp, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * staleTmp)
	os.Chtimes(tmp, old, old)
	s.Now = time.Now
	var c collect
	if _, err := s.Fold(context.Background(), c.apply, nil, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.seen, []string{"a"}) {
		t.Fatalf("folded %q", c.seen)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale temporary file kept: %v", err)
	}
}

// TestFoldNoDirectory: a spool path that cannot be a directory still applies
// the own record directly.
func TestFoldNoDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Spool{Dir: file}
	applied := false
	rep, err := s.Fold(context.Background(), (&collect{}).apply, nil, &Own{Data: []byte("x"), Apply: func(context.Context) error { applied = true; return nil }})
	if err == nil || !applied || rep.Own != OwnApplied {
		t.Fatalf("fold: %+v %v applied %v", rep, err, applied)
	}
}
