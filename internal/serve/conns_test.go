package serve

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
	gossh "golang.org/x/crypto/ssh"
)

// rawConn is a TCP connection that sends nothing.
func (f *fixture) rawConn() net.Conn {
	f.t.Helper()
	c, err := net.Dial("tcp", f.addr)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	return c
}

// readAll reads c until EOF or within, returning what arrived and whether
// the server closed it.
func readAll(c net.Conn, within time.Duration) (string, bool) {
	_ = c.SetReadDeadline(time.Now().Add(within))
	b, err := io.ReadAll(c)
	return string(b), err == nil
}

// hungSigner is an operator's key whose signature never comes: the client
// asks whether the key would do (the server says yes) and then stalls.
type hungSigner struct {
	gossh.Signer
	signing chan<- struct{}
	stop    <-chan struct{}
}

func (h hungSigner) Sign(io.Reader, []byte) (*gossh.Signature, error) {
	select {
	case h.signing <- struct{}{}:
	default:
	}
	<-h.stop
	return nil, io.EOF
}

// A connection that never logs in is closed at the login grace time,
// whether it sends nothing or offers an operator's public key without the
// signature; a console session outlives the grace time.
func TestLoginGraceTime(t *testing.T) {
	const grace = 300 * time.Millisecond
	f := newFixture(t, Config{LoginGraceTime: grace}, nil)
	alice := f.operator("alice", core.RoleOperator)
	ok := f.mustDial(alice)
	ok.waitOut("operator alice")

	start := time.Now()
	silent := f.rawConn()
	got, closed := readAll(silent, 5*time.Second)
	if !closed || !strings.HasPrefix(got, "SSH-2.0-clawpit") {
		t.Fatalf("silent connection: read %q, closed %v; want the banner then the close", got, closed)
	}
	if d := time.Since(start); d < grace || d > grace+2*time.Second {
		t.Errorf("silent connection closed after %s, want about %s", d, grace)
	}

	// The signer is asked only after the server said the key would do.
	signing, stop := make(chan struct{}, 1), make(chan struct{})
	defer close(stop)
	go func() {
		c, err := gossh.Dial("tcp", f.addr, &gossh.ClientConfig{User: "op",
			Auth:            []gossh.AuthMethod{gossh.PublicKeys(hungSigner{alice, signing, stop})},
			HostKeyCallback: gossh.InsecureIgnoreHostKey()})
		if err == nil {
			c.Close()
		}
	}()
	select {
	case <-signing:
	case <-time.After(5 * time.Second):
		t.Fatal("the client was not asked to sign: the server did not accept the operator's public key")
	}
	waitUntil(t, "both connections dropped", func() bool {
		st := f.srv.ConnStats()
		return st.Dropped == 2 && st.Unauthenticated == 0 && st.Authenticated == 1 && st.Sessions == 1
	})
	select {
	case err := <-ok.done:
		t.Fatalf("a console session was closed by the login grace time: %v", err)
	default:
	}
	if l := f.logs.String(); !strings.Contains(l, "no login within the grace time") {
		t.Errorf("no drop in the log:\n%s", l)
	}
}

// Beyond the cap, a new connection is closed before the SSH handshake:
// not one byte of it (not the version line) is sent. A slot freed admits
// again.
func TestMaxStartupsRefusesBeforeHandshake(t *testing.T) {
	f := newFixture(t, Config{MaxStartups: Startups{Start: 2, Rate: 100, Full: 2}}, nil)
	a, b := f.rawConn(), f.rawConn()
	for _, c := range []net.Conn{a, b} {
		l, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || !strings.HasPrefix(l, "SSH-2.0-") {
			t.Fatalf("admitted connection: %q %v", l, err)
		}
	}
	got, closed := readAll(f.rawConn(), 5*time.Second)
	if !closed || got != "" {
		t.Fatalf("third connection: read %q, closed %v; want nothing and the close", got, closed)
	}
	a.Close()
	waitUntil(t, "the slot freed", func() bool { return f.srv.ConnStats().Unauthenticated == 1 })
	l, err := bufio.NewReader(f.rawConn()).ReadString('\n')
	if err != nil || !strings.HasPrefix(l, "SSH-2.0-") {
		t.Fatalf("after a slot freed: %q %v", l, err)
	}
	st := f.srv.ConnStats()
	if st.Refused != 1 || st.Accepted != 3 || st.Unauthenticated != 2 {
		t.Errorf("stats %+v; want 1 refused, 3 accepted, 2 open", st)
	}
	if l := f.logs.String(); !strings.Contains(l, "refusing new connections") || !strings.Contains(l, "max_startups=2:100:2") {
		t.Errorf("the refusal is not logged:\n%s", l)
	}
}

// A logged-in connection with no session counts toward MaxSessions (the
// next operator's session is told to come back later) and is closed at
// the grace time.
func TestLoggedInWithoutSession(t *testing.T) {
	const grace = 1500 * time.Millisecond
	f := newFixture(t, Config{MaxSessions: 1, LoginGraceTime: grace}, nil)
	alice := f.operator("alice", core.RoleOperator)
	start := time.Now()
	idle, err := gossh.Dial("tcp", f.addr, &gossh.ClientConfig{User: "op", Auth: []gossh.AuthMethod{gossh.PublicKeys(alice)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	ended := make(chan struct{})
	go func() { idle.Wait(); close(ended) }()

	b := f.mustDial(alice)
	if code := b.waitEnd(); code != 1 || !strings.Contains(b.out.String(), "too many sessions (1)") {
		t.Errorf("a session beside a logged-in connection at --max-sessions 1: exit %d, %q", code, b.out.String())
	}
	select {
	case <-ended:
		if d := time.Since(start); d < grace {
			t.Errorf("closed after %s, before the grace time %s", d, grace)
		}
	case <-time.After(grace + 3*time.Second):
		t.Fatalf("a logged-in connection with no session is open after %s", grace+3*time.Second)
	}
	// Its slot is free again.
	waitUntil(t, "the slot freed", func() bool { st := f.srv.ConnStats(); return st.Authenticated == 0 && st.Unauthenticated == 0 })
	f.mustDial(alice).waitOut("operator alice")
	if l := f.logs.String(); !strings.Contains(l, "no session within the grace time") || !strings.Contains(l, "logged in beyond --max-sessions") {
		t.Errorf("log:\n%s", l)
	}
}
