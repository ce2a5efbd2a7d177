package serve

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
	gossh "golang.org/x/crypto/ssh"
)

// fixture is a server over a fresh registry on a loopback port.
type fixture struct {
	t    *testing.T
	reg  *core.Registry
	srv  *Server
	addr string
	logs *syncBuf
	stop func()
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newFixture(t *testing.T, cfg Config, tweak func(*Server)) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "r.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
	hk, err := LoadOrCreateHostKey(filepath.Join(dir, "hk"))
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuf{}
	cfg.HostKey, cfg.Logger = hk, slog.New(slog.NewTextHandler(logs, nil))
	srv, err := New(reg, nil, nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tweak != nil {
		tweak(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	f := &fixture{t: t, reg: reg, srv: srv, addr: ln.Addr().String(), logs: logs}
	var once sync.Once
	f.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(DrainTimeout + time.Second):
				t.Errorf("Serve did not return within %s of the stop", DrainTimeout+time.Second)
			}
		})
	}
	t.Cleanup(f.stop)
	return f
}

// operator registers name with a fresh key and returns its signer.
func (f *fixture) operator(name string, role core.Role) gossh.Signer {
	f.t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		f.t.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.reg.AddOperator(context.Background(), name, role, gossh.MarshalAuthorizedKey(signer.PublicKey()), "test"); err != nil {
		f.t.Fatal(err)
	}
	return signer
}

// client is one SSH session with a PTY.
type client struct {
	t    *testing.T
	conn *gossh.Client
	sess *gossh.Session
	in   io.WriteCloser
	out  *syncBuf
	done chan error
}

func (f *fixture) dial(signer gossh.Signer) (*client, error) {
	conn, err := gossh.Dial("tcp", f.addr, &gossh.ClientConfig{
		User: "op", Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	sess, err := conn.NewSession()
	if err != nil {
		conn.Close()
		return nil, err
	}
	c := &client{t: f.t, conn: conn, sess: sess, out: &syncBuf{}, done: make(chan error, 1)}
	f.t.Cleanup(func() { conn.Close() })
	if err := sess.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{}); err != nil {
		return nil, err
	}
	sess.Stdout, sess.Stderr = c.out, c.out
	if c.in, err = sess.StdinPipe(); err != nil {
		return nil, err
	}
	if err := sess.Shell(); err != nil {
		return nil, err
	}
	go func() { c.done <- sess.Wait() }()
	return c, nil
}

func (f *fixture) mustDial(signer gossh.Signer) *client {
	f.t.Helper()
	c, err := f.dial(signer)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// waitOut waits until the session's output contains text.
func (c *client) waitOut(text string) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(c.out.String(), text) {
		if time.Now().After(deadline) {
			c.t.Fatalf("no %q in the session's output after 10 s; got %q", text, tail(c.out.String()))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitEnd waits for the session to end and returns its exit status.
func (c *client) waitEnd() int {
	c.t.Helper()
	select {
	case err := <-c.done:
		var ee *gossh.ExitError
		if errors.As(err, &ee) {
			return ee.ExitStatus()
		}
		if err != nil {
			return -1
		}
		return 0
	case <-time.After(10 * time.Second):
		c.t.Fatalf("session still open after 10 s; output %q", tail(c.out.String()))
		return -1
	}
}

func tail(s string) string {
	if len(s) > 400 {
		return s[len(s)-400:]
	}
	return s
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A panic in one session ends that session only: the other keeps working
// and new sessions are accepted.
func TestPanicEndsOneSession(t *testing.T) {
	f := newFixture(t, Config{}, func(s *Server) { s.panicKey = "!" })
	alice := f.operator("alice", core.RoleOperator)
	a, b := f.mustDial(alice), f.mustDial(alice)
	a.waitOut("operator alice")
	b.waitOut("operator alice")
	if _, err := a.in.Write([]byte("!")); err != nil {
		t.Fatal(err)
	}
	if code := a.waitEnd(); code != 1 {
		t.Errorf("panicked session exit status %d, want 1", code)
	}
	if !strings.Contains(a.out.String(), "this session failed") {
		t.Errorf("no closing message: %q", tail(a.out.String()))
	}
	if !strings.Contains(f.logs.String(), "session panicked") {
		t.Errorf("panic not logged:\n%s", f.logs.String())
	}
	// The other session still reacts to keys and to the registry.
	if _, err := b.in.Write([]byte("3")); err != nil {
		t.Fatal(err)
	}
	b.waitOut("TOOL")
	f.mustDial(alice).waitOut("operator alice")
	waitUntil(t, "two sessions open", func() bool { return f.srv.Sessions() == 2 })
}

// More sessions than --max-sessions are told to come back later.
func TestMaxSessions(t *testing.T) {
	f := newFixture(t, Config{MaxSessions: 1}, nil)
	alice := f.operator("alice", core.RoleOperator)
	a := f.mustDial(alice)
	a.waitOut("operator alice")
	b := f.mustDial(alice)
	if code := b.waitEnd(); code != 1 {
		t.Errorf("refused session exit status %d, want 1", code)
	}
	if !strings.Contains(b.out.String(), "too many sessions (1)") {
		t.Errorf("refusal says %q", b.out.String())
	}
}

// A session without a key press for the idle timeout is closed with a
// message; key presses keep it open.
func TestIdleTimeout(t *testing.T) {
	f := newFixture(t, Config{IdleTimeout: 400 * time.Millisecond}, nil)
	alice := f.operator("alice", core.RoleOperator)
	busy, idle := f.mustDial(alice), f.mustDial(alice)
	busy.waitOut("operator alice")
	start := time.Now()
	for time.Since(start) < 900*time.Millisecond {
		if _, err := busy.in.Write([]byte("j")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code := idle.waitEnd(); code != 0 {
		t.Errorf("idle session exit status %d", code)
	}
	if !strings.Contains(idle.out.String(), "no key pressed for 400ms; disconnected.") {
		t.Errorf("idle session's last words: %q", tail(idle.out.String()))
	}
	select {
	case err := <-busy.done:
		t.Fatalf("a session with key presses was closed: %v", err)
	default:
	}
}

// A session without a terminal is refused with a message.
func TestNoPTY(t *testing.T) {
	f := newFixture(t, Config{}, nil)
	alice := f.operator("alice", core.RoleOperator)
	conn, err := gossh.Dial("tcp", f.addr, &gossh.ClientConfig{User: "op", Auth: []gossh.AuthMethod{gossh.PublicKeys(alice)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sess, err := conn.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := sess.CombinedOutput("")
	if err == nil || !strings.Contains(string(out), "needs a terminal") {
		t.Fatalf("no-pty session: %v %q", err, out)
	}
}

// The watcher polls once per interval whatever the number of sessions.
func TestOnePollerForAllSessions(t *testing.T) {
	f := newFixture(t, Config{PollInterval: 50 * time.Millisecond}, nil)
	alice := f.operator("alice", core.RoleOperator)
	for range 10 {
		f.mustDial(alice).waitOut("operator alice")
	}
	p0 := f.srv.Polls()
	time.Sleep(time.Second)
	if n := f.srv.Polls() - p0; n > 25 {
		t.Fatalf("%d data_version polls in 1 s with 10 sessions at a 50 ms interval: not one poller", n)
	}
}

// TestWatcherRestsWhenIdle: with the store's change hints the watcher
// reads nothing while the registry is idle (at most the 5 s safety net's
// one read), where it polled every 100 ms; a write still reaches every
// session.
func TestWatcherRestsWhenIdle(t *testing.T) {
	f := newFixture(t, Config{}, nil)
	alice := f.operator("alice", core.RoleOperator)
	var cs []*client
	for range 3 {
		c := f.mustDial(alice)
		c.waitOut("operator alice")
		cs = append(cs, c)
	}
	time.Sleep(200 * time.Millisecond)
	p0 := f.srv.Polls()
	time.Sleep(time.Second)
	if n := f.srv.Polls() - p0; n > 1 {
		t.Fatalf("%d data_version reads in an idle second, want at most the safety net's one", n)
	}
	if _, _, err := f.reg.OpenSession(context.Background(), "S1", "", "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.reg.CreateTask(context.Background(), core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "S1", Label: "written-while-idle"}, "test"); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		c.waitOut("written-while-idle")
	}
}

// hintStore is a store with change hints whose data_version the test
// moves.
type hintStore struct {
	core.Store
	mu    sync.Mutex
	v     int64
	hints chan struct{}
}

func (s *hintStore) DataVersion(context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.v, nil
}

func (s *hintStore) ChangeHints() (<-chan struct{}, func(), bool) { return s.hints, func() {}, true }

// TestWatcherHintBeforeCommit: a hint can come before its commit is
// visible (the first of a commit's writes); the watcher reads again shortly
// after, so the sessions are woken well before the 5 s safety net.
func TestWatcherHintBeforeCommit(t *testing.T) {
	st := &hintStore{hints: make(chan struct{}, 1)}
	w := newWatcher(st, DefaultPollInterval, slog.New(slog.NewTextHandler(io.Discard, nil)))
	woken, cancel := w.subscribe()
	defer cancel()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go w.run(ctx)
	st.hints <- struct{}{}
	time.Sleep(25 * time.Millisecond)
	st.mu.Lock()
	st.v++
	st.mu.Unlock()
	select {
	case <-woken:
	case <-time.After(time.Second):
		t.Fatal("a change committed just after its hint woke no session within 1 s")
	}
}

// TestWatcherBurstAtPollRate: a burst of writes, each hinted, is read and
// pushed to the sessions at most once per PollInterval, as the poll did.
func TestWatcherBurstAtPollRate(t *testing.T) {
	f := newFixture(t, Config{}, nil)
	alice := f.operator("alice", core.RoleOperator)
	f.mustDial(alice).waitOut("operator alice")
	ctx := context.Background()
	if _, _, err := f.reg.OpenSession(ctx, "S1", "", "test"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	p0, start, writes := f.srv.Polls(), time.Now(), 0
	for time.Since(start) < time.Second {
		if _, err := f.reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "S1", Label: "burst"}, "test"); err != nil {
			t.Fatal(err)
		}
		writes++
	}
	elapsed := time.Since(start)
	// One read per poll interval; a few more are the follow-ups of a hint
	// whose commit was not visible yet (10 to 300 ms later). Without the
	// limit it is one read per write (hundreds here); with hints limited
	// by broadcasts only, 25 (a hint that found nothing new let the next
	// hint read at once).
	n, most := f.srv.Polls()-p0, int64(elapsed/DefaultPollInterval)+5
	if n > most {
		t.Fatalf("%d data_version reads during %d writes in %s, want at most %d (one per %s, and follow-ups)", n, writes, elapsed.Round(time.Millisecond), most, DefaultPollInterval)
	}
	t.Logf("%d writes, %d reads in %s", writes, n, elapsed.Round(time.Millisecond))
}

// The guard refuses every action of a readonly or removed operator, and
// journals an operator's action under the session's actor.
func TestGuard(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Config{}, nil)
	ro := f.operator("bob", core.RoleReadonly)
	rw := f.operator("alice", core.RoleOperator)
	if _, _, err := f.reg.OpenSession(ctx, "S1", "", "test"); err != nil {
		t.Fatal(err)
	}
	ap, err := f.reg.RequestApproval(ctx, core.NewApproval{Session: "S1", Tool: "Bash", Command: "make deploy"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	g := &guard{reg: f.reg, fp: fingerprint(ro.PublicKey()), actor: core.SSHActor("bob", "1.2.3.4:5"), log: log, actions: f.reg}
	if _, _, _, err := g.ApproveApproval(ctx, ap.ID, core.ScopeOnce, "forged"); !errors.Is(err, ErrForbidden) {
		t.Fatalf("readonly approve: %v", err)
	}
	if _, _, err := g.DenyApproval(ctx, ap.ID, "", "forged"); !errors.Is(err, ErrForbidden) {
		t.Fatalf("readonly deny: %v", err)
	}
	if _, err := g.ReapSession(ctx, "S1", "forged"); !errors.Is(err, ErrForbidden) {
		t.Fatalf("readonly reap: %v", err)
	}
	g2 := &guard{reg: f.reg, fp: fingerprint(rw.PublicKey()), actor: core.SSHActor("alice", "1.2.3.4:5"), log: log, actions: f.reg}
	got, _, res, err := g2.ApproveApproval(ctx, ap.ID, core.ScopeOnce, "forged")
	if err != nil || !res.Applied || got.DecidedBy != "alice (ssh 1.2.3.4:5)" {
		t.Fatalf("operator approve: %+v %+v %v", got, res, err)
	}
	if err := f.reg.RemoveOperator(ctx, "alice", "test"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := g2.KillRun(ctx, "r1", "", "forged"); !errors.Is(err, ErrForbidden) {
		t.Fatalf("removed operator: %v", err)
	}
}

func TestHostKey(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", "hk")
	k1, err := LoadOrCreateHostKey(p)
	if err != nil || !k1.Created || !strings.HasPrefix(k1.Fingerprint, "SHA256:") {
		t.Fatalf("create: %+v %v", k1, err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("host key mode %v %v", fi.Mode(), err)
	}
	k2, err := LoadOrCreateHostKey(p)
	if err != nil || k2.Created || k2.Fingerprint != k1.Fingerprint {
		t.Fatalf("reload: %+v %v", k2, err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateHostKey(p); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("exposed key: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateHostKey(bad); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("bad key: %v", err)
	}
}

func TestSweepNote(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{0, "sweeper off"}, {time.Minute, "server sweeps every 1m"}, {90 * time.Second, "server sweeps every 1m30s"}, {time.Hour, "server sweeps every 1h"}, {30 * time.Second, "server sweeps every 30s"}} {
		s := &Server{cfg: Config{SweepInterval: c.d}, maint: &guard{}}
		if got := s.sweepNote(); got != c.want {
			t.Errorf("%s: %q, want %q", c.d, got, c.want)
		}
	}
}
