package adversarial

// ssh_test.go: no one outside the operators list can starve the console.
// Each test drives the real `clawpit serve` as an attacker on loopback
// would: connections that never log in, a flood of them under a small
// descriptor limit, connections beyond the unauthenticated cap, and an
// operator's key holding connections without a session.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/clawpit/clawpit/internal/e2e"
	gossh "golang.org/x/crypto/ssh"
)

// sshOperator registers alice (operator) with a fresh key and returns the
// key's path.
func sshOperator(t *testing.T, c *e2e.CLI) string {
	t.Helper()
	key := e2e.SSHKey(t, "alice")
	e2e.AddOperator(c, "alice", "operator", key)
	return key
}

// sshDial opens a TCP connection to the server, closed when the test ends.
func sshDial(t *testing.T, s *e2e.Server) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sshWaitClosed reads c until the server closes it, at most within; it
// returns what was read and when the close came (0: it did not).
func sshWaitClosed(c net.Conn, within time.Duration) (string, time.Duration) {
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(within))
	b, err := io.ReadAll(c)
	if err != nil { // the deadline, not the server's close
		return string(b), 0
	}
	return string(b), time.Since(start)
}

// sshWatchConn notes when the server ends the connection under an
// x/crypto/ssh client (its read loop sees EOF even while the client is
// stuck in authentication).
type sshWatchConn struct {
	net.Conn
	once   sync.Once
	closed chan struct{}
}

func (w *sshWatchConn) Read(b []byte) (int, error) {
	n, err := w.Conn.Read(b)
	if err != nil {
		w.once.Do(func() { close(w.closed) })
	}
	return n, err
}

// sshStalledClient runs an x/crypto/ssh handshake over a fresh connection
// with auth, which is expected to stall; the returned channel closes when
// the server ends the connection.
func sshStalledClient(t *testing.T, s *e2e.Server, auth gossh.AuthMethod) <-chan struct{} {
	t.Helper()
	w := &sshWatchConn{Conn: sshDial(t, s), closed: make(chan struct{})}
	go func() {
		conn, chans, reqs, err := gossh.NewClientConn(w, s.Addr(), &gossh.ClientConfig{User: "op",
			Auth: []gossh.AuthMethod{auth}, HostKeyCallback: gossh.InsecureIgnoreHostKey()})
		if err == nil { // logged in: it must not, but hold it like an attacker
			c := gossh.NewClient(conn, chans, reqs)
			_ = c.Wait()
		}
	}()
	return w.closed
}

// sshStalledSigner is an operator's real key whose signature never comes:
// the client asks whether the public key would do (the server says yes)
// and stops there. Knowing an operator's public key is not a login.
type sshStalledSigner struct {
	gossh.Signer
	asked chan<- struct{}
	stop  <-chan struct{}
}

func (h sshStalledSigner) Sign(io.Reader, []byte) (*gossh.Signature, error) {
	select {
	case h.asked <- struct{}{}:
	default:
	}
	<-h.stop
	return nil, errors.New("never signed")
}

// A connection that does not log in is closed at --login-grace-time:
// one that sends nothing, one that stops in the middle of the key exchange,
// one that exchanges keys and offers no key, and one that offers an
// operator's public key and never signs.
func TestSSHLoginGraceTime(t *testing.T) {
	t.Parallel()
	e2e.RequireSSHClient(t) // ssh-keygen, for the operator's key
	const grace = 2 * time.Second
	c := newCLI(t)
	key := sshOperator(t, c)
	s := e2e.StartServe(t, c, "--login-grace-time", grace.String())
	start := time.Now()
	var wg sync.WaitGroup
	check := func(name string, closed func() (string, time.Duration)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, after := closed()
			switch {
			case after == 0:
				t.Errorf("%s: still open %s after connecting (login grace time %s); read %q", name, time.Since(start).Round(time.Millisecond), grace, got)
			case after < grace-200*time.Millisecond:
				t.Errorf("%s: closed after %s, before the grace time %s", name, after, grace)
			}
		}()
	}
	within := grace + 8*time.Second
	check("silent TCP", func() (string, time.Duration) { return sshWaitClosed(sshDial(t, s), within) })
	check("banner then half a key exchange", func() (string, time.Duration) {
		conn := sshDial(t, s)
		t0 := time.Now()
		l, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil || !strings.HasPrefix(l, "SSH-2.0-") {
			return "banner: " + l + errString(err), 0
		}
		// Our version line, then the start of a packet that says 1000
		// bytes follow, and nothing more.
		if _, err := conn.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n\x00\x00\x03\xe8\x0a\x14")); err != nil {
			return err.Error(), 0
		}
		got, after := sshWaitClosed(conn, within)
		if after > 0 {
			after = time.Since(t0)
		}
		return got, after
	})
	noKey := make(chan struct{})
	defer close(noKey)
	keyless := sshStalledClient(t, s, gossh.PublicKeysCallback(func() ([]gossh.Signer, error) { <-noKey; return nil, errors.New("none") }))
	asked := make(chan struct{}, 1)
	unsigned := sshStalledClient(t, s, gossh.PublicKeys(sshStalledSigner{e2e.SSHSigner(t, key), asked, noKey}))
	for name, ch := range map[string]<-chan struct{}{"key exchange, no key offered": keyless, "operator's public key, never signed": unsigned} {
		check(name, func() (string, time.Duration) {
			select {
			case <-ch:
				return "", time.Since(start)
			case <-time.After(within):
				return "", 0
			}
		})
	}
	wg.Wait()
	select {
	case <-asked:
	default:
		t.Errorf("the stalled signer was never asked: the server did not accept alice's public key, so that case proved nothing")
	}
	s.WaitLog(t, "every drop logged", regexp.MustCompile(`(?s)(no login within the grace time.*){4}`), 5*time.Second)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

// With --max-startups at N, the N+1st connection not logged in is closed
// before the SSH handshake: not one byte (not the version line) reaches it.
// A freed slot admits again; the refusals are counted in the log.
func TestSSHMaxStartupsRefusesEarly(t *testing.T) {
	t.Parallel()
	const capN = 4
	c := newCLI(t)
	c.OK("session", "open", "S1") // creates the registry
	s := e2e.StartServe(t, c, "--max-startups", "4", "--login-grace-time", "1m")
	var held []net.Conn
	for i := range capN {
		conn := sshDial(t, s)
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		l, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil || !strings.HasPrefix(l, "SSH-2.0-") {
			t.Fatalf("connection %d of %d: read %q %v; want the server's version line", i+1, capN, l, err)
		}
		held = append(held, conn)
	}
	const extra = 20
	for i := range extra {
		got, after := sshWaitClosed(sshDial(t, s), 5*time.Second)
		if after == 0 || got != "" {
			t.Fatalf("connection %d beyond --max-startups %d: read %q, closed after %s; want nothing, then the close at once", i+1, capN, got, after)
		}
		if after > 2*time.Second {
			t.Errorf("connection %d beyond the cap: closed after %s, want at once", i+1, after)
		}
	}
	// One slot freed: the next connection gets the handshake.
	held[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn := sshDial(t, s)
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		l, _ := bufio.NewReader(conn).ReadString('\n')
		if strings.HasPrefix(l, "SSH-2.0-") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no handshake 10 s after a slot was freed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.WaitLog(t, "the refusals logged", regexp.MustCompile(`refusing new connections.* unauthenticated=4 max_startups=4:100:4`), 5*time.Second)
	for _, h := range held[1:] {
		h.Close()
	}
	// At least the 20 above (a retry may have come before the freed slot).
	l := s.WaitLog(t, "the end of refusals logged with their count", regexp.MustCompile(`accepting new connections again"? refused=\d+ `), 10*time.Second)
	m := regexp.MustCompile(`accepting new connections again"? refused=(\d+) `).FindStringSubmatch(l)
	if n, _ := strconv.Atoi(m[1]); n < extra {
		t.Errorf("the log counts %d refusals, want at least %d:\n%s", n, extra, l)
	}
}

// sshRun runs the OpenSSH client for at most within and returns its output
// and exit code (-1: killed at the deadline).
func sshRun(ctx context.Context, argv []string, within time.Duration, until func(out string) bool) (string, int) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out lockedBuf
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err.Error(), -2
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ctx.Err() != nil {
					return out.String(), -1
				}
				return out.String(), ee.ExitCode()
			}
			return out.String(), 0
		case <-tick.C:
			if until != nil && until(out.String()) {
				_ = cmd.Process.Signal(syscall.SIGTERM)
				<-done
				return out.String(), 0
			}
		}
	}
}

// sshConsoleUp reports whether the client's output shows the console
// taking the screen (the alternate screen: ssh -t -t without a local
// terminal has no size, so nothing more is drawn).
func sshConsoleUp(out string) bool { return strings.Contains(out, "\x1b[?1049h") }

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Logged-in connections without a session count toward --max-sessions and
// are closed at the grace time: with two of them (a real `ssh -N` and an
// x/crypto/ssh client that opens no channel) at --max-sessions 2, an
// operator's console is told to come back later; both are closed at the
// grace time, and then the operator gets in.
func TestSSHLoggedInWithoutSession(t *testing.T) {
	t.Parallel()
	e2e.RequireSSHClient(t)
	// Long enough for two clients to log in and a third to be refused
	// before the first two are closed, on a loaded machine.
	const grace = 5 * time.Second
	c := newCLI(t)
	key := sshOperator(t, c)
	s := e2e.StartServe(t, c, "--max-sessions", "2", "--login-grace-time", grace.String())
	ctx := context.Background()

	start := time.Now()
	goClient, err := gossh.Dial("tcp", s.Addr(), &gossh.ClientConfig{User: "op",
		Auth: []gossh.AuthMethod{gossh.PublicKeys(e2e.SSHSigner(t, key))}, HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer goClient.Close()
	goEnded := make(chan time.Duration, 1)
	go func() { _ = goClient.Wait(); goEnded <- time.Since(start) }()

	// A real `ssh -N`: LocalCommand prints once it is logged in.
	nArgs := s.SSHArgs(key, "-N", "-o", "PermitLocalCommand=yes", "-o", "LocalCommand=echo logged-in")
	nOut := make(chan string, 1)
	nEnded := make(chan time.Duration, 1)
	var loggedIn atomic.Bool
	go func() {
		out, _ := sshRun(ctx, nArgs, grace+15*time.Second, func(o string) bool {
			if strings.Contains(o, "logged-in") {
				loggedIn.Store(true)
			}
			return false
		})
		nEnded <- time.Since(start)
		nOut <- out
	}()
	for !loggedIn.Load() {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("ssh -N did not log in within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Both slots are taken by connections with no session.
	out, code := sshRun(ctx, s.SSHArgs(key, "-t"), 15*time.Second, func(o string) bool { return sshConsoleUp(o) })
	if !strings.Contains(out, "too many sessions (2)") || sshConsoleUp(out) {
		t.Errorf("an operator's console beside two logged-in connections at --max-sessions 2: exit %d, output %q; want told to try later", code, tailOf(out))
	}
	for name, ch := range map[string]chan time.Duration{"x/crypto/ssh client with no channel": goEnded, "ssh -N": nEnded} {
		select {
		case d := <-ch:
			if d < grace {
				t.Errorf("%s: closed after %s, before the grace time %s", name, d, grace)
			}
		case <-time.After(grace + 10*time.Second - time.Since(start)):
			t.Errorf("%s: still open %s after logging in (grace time %s)", name, time.Since(start).Round(time.Millisecond), grace)
		}
	}
	// Now the operator gets in.
	out, _ = sshRun(ctx, s.SSHArgs(key, "-t"), 15*time.Second, func(o string) bool { return sshConsoleUp(o) })
	if !sshConsoleUp(out) {
		t.Errorf("after the idle connections were closed, no console: %q", tailOf(out))
	}
	s.WaitLog(t, "both drops logged", regexp.MustCompile(`(?s)(no session within the grace time.*){2}`), 5*time.Second)
	s.WaitLog(t, "the connections counted", regexp.MustCompile(`logged in .*authenticated=2`), 5*time.Second)
}

func tailOf(s string) string {
	if len(s) > 600 {
		return "…" + s[len(s)-600:]
	}
	return s
}

// sshFlood opens n idle TCP connections to addr with a few dozen dialers,
// each dial bounded by a timeout and the whole by within; it returns the
// connections (open on our side, whatever the server did with them) and
// how many dials failed.
func sshFlood(addr string, n int, within time.Duration) ([]net.Conn, int) {
	var (
		mu     sync.Mutex
		conns  []net.Conn
		failed int
		next   atomic.Int64
		wg     sync.WaitGroup
	)
	deadline := time.Now().Add(within)
	for range 48 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) && time.Now().Before(deadline) {
				c, err := net.DialTimeout("tcp", addr, 2*time.Second)
				mu.Lock()
				if err != nil {
					failed++
				} else {
					conns = append(conns, c)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return conns, failed
}

// A flood of idle connections (6,000: more than the server's 4,096
// descriptors) neither locks an operator out nor bloats the server: the
// real OpenSSH client logs in while every flood connection is still open
// on the attacker's side, the server's peak RSS stays under 200 MB, and
// its descriptors come back once the flood is over.
func TestSSHPreAuthFlood(t *testing.T) {
	e2e.RequireSSHClient(t)
	const (
		noFile = 4096
		flood  = 6000
		grace  = 3 * time.Second
		maxRSS = 200 << 20
	)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < flood+500 {
		t.Skipf("this test process may open %d descriptors (%v); the flood needs %d", lim.Cur, err, flood+500)
	}
	c := newCLI(t)
	key := sshOperator(t, c)
	s := e2e.StartServeWith(t, c, e2e.ServeOptions{NoFile: noFile}, "--login-grace-time", grace.String())
	pid := s.PID()
	if n, err := e2e.NoFileLimit(pid); err != nil || n != noFile {
		t.Fatalf("the server's descriptor limit is %d (%v), want %d", n, err, noFile)
	}
	base, err := e2e.OpenFDs(pid)
	if err != nil {
		t.Fatal(err)
	}

	t0 := time.Now()
	conns, failed := sshFlood(s.Addr(), flood, time.Minute)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	t.Logf("flood: %d connections open on our side, %d dials failed, in %s", len(conns), failed, time.Since(t0).Round(time.Millisecond))

	// The operator, while the flood's connections are held.
	ctx := context.Background()
	start, attempts, out := time.Now(), 0, ""
	for time.Since(start) < grace+30*time.Second {
		attempts++
		out, _ = sshRun(ctx, s.SSHArgs(key, "-t", "-o", "ConnectTimeout=5"), 10*time.Second,
			func(o string) bool { return sshConsoleUp(o) })
		if sshConsoleUp(out) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !sshConsoleUp(out) {
		fds, _ := e2e.OpenFDs(pid)
		t.Fatalf("the operator did not get in within %s (%d attempts) during the flood; server descriptors %d; last output %q",
			time.Since(start).Round(time.Millisecond), attempts, fds, tailOf(out))
	}
	t.Logf("the operator got in after %s (%d attempts)", time.Since(start).Round(time.Millisecond), attempts)
	s.WaitLog(t, "the operator's session", regexp.MustCompile(`session start.*operator=alice`), 5*time.Second)

	rss, hwm, err := e2e.ProcMem(pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server memory: VmRSS %d MB, VmHWM %d MB", rss>>20, hwm>>20)
	if hwm > maxRSS {
		t.Errorf("the server's peak RSS is %d MB under the flood, want under %d MB", hwm>>20, maxRSS>>20)
	}

	for _, c := range conns {
		c.Close()
	}
	deadline := time.Now().Add(grace + 10*time.Second)
	for {
		n, err := e2e.OpenFDs(pid)
		if err != nil {
			t.Fatal(err)
		}
		if n <= base+4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d descriptors open after the flood ended, %d before it", n, base)
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.WaitLog(t, "the refusals logged", regexp.MustCompile(`refusing new connections`), 5*time.Second)
}
