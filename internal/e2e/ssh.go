package e2e

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RequireSSH skips the test when tmux or the OpenSSH client (ssh,
// ssh-keygen) is not installed.
func RequireSSH(t testing.TB) {
	t.Helper()
	RequireTmux(t)
	for _, b := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s is not installed (apt-get install openssh-client): the serve end-to-end tests need it", b)
		}
	}
}

// SSHKey generates an ed25519 client key in the test's temp dir and returns
// the private key's path (the public key is path+".pub").
func SSHKey(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", p).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	return p
}

// Server is a running `clawpit serve` on a loopback port.
type Server struct {
	Port   string
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan error
}

// Logs returns what the server has written to stderr so far.
func (s *Server) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

type serverLog struct{ s *Server }

func (w serverLog) Write(b []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.stderr.Write(b)
}

var listeningRe = regexp.MustCompile(`listening on 127\.0\.0\.1:(\d+)`)

// StartServe runs `clawpit serve` for c's registry on a free loopback port
// (a fresh host key, no sweeper or watchdog unless args say so) and waits
// up to UITimeout until it listens. It is stopped (SIGTERM, then killed
// after 10 s) when the test ends.
func StartServe(t testing.TB, c *CLI, args ...string) *Server {
	t.Helper()
	argv := append([]string{"serve", "--listen", "127.0.0.1:0", "--host-key", filepath.Join(t.TempDir(), "host_key"),
		"--sweep-interval", "0", "--watchdog-interval", "0"}, args...)
	s := &Server{cmd: c.Command(nil, argv...), done: make(chan error, 1)}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stderr = serverLog{s}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(UITimeout)
	var head []string
	for s.Port == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("clawpit serve exited before listening: %q\n%s", head, s.Logs())
			}
			head = append(head, l)
			if m := listeningRe.FindStringSubmatch(l); m != nil {
				s.Port = m[1]
			}
		case <-deadline:
			t.Fatalf("clawpit serve not listening after %s: %q\n%s", UITimeout, head, s.Logs())
		}
	}
	go func() {
		for range lines {
		}
	}()
	return s
}

// SSHArgs is the OpenSSH client's command line for key on the server (no
// config, no known hosts, batch mode, a tty).
func (s *Server) SSHArgs(key string, extra ...string) []string {
	a := []string{"ssh", "-t", "-p", s.Port, "-i", key, "-F", "/dev/null",
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes",
		"-o", "LogLevel=ERROR", "-o", "BatchMode=yes"}
	a = append(a, extra...)
	return append(a, "op@127.0.0.1")
}

// Connect opens an SSH session with key in a tmux terminal of w×h and waits
// for the console's first frame (WaitConsole). The ssh runs under a shell
// that outlives it, so a closing session's last words stay on screen.
func (s *Server) Connect(t testing.TB, key string, w, h int, env []string, extra ...string) *Term {
	t.Helper()
	script := strings.TrimPrefix(ShellJoin(s.SSHArgs(key, extra...)), "exec ") + `; echo "[ssh exited $?]"; exec sleep 600`
	tm := StartTerm(t, w, h, env, "sh", "-c", script)
	tm.WaitConsole()
	return tm
}

// AddOperator registers name with role and the public half of key.
func AddOperator(c *CLI, name, role, key string) {
	c.T.Helper()
	c.OK("operator", "add", name, "--role", role, "--key", key+".pub")
}

// StartConsole runs the local console (`clawpit --db …`) for c's registry
// in a w×h tmux terminal and waits for its first frame.
func StartConsole(t testing.TB, c *CLI, w, h int, args ...string) *Term {
	t.Helper()
	env := append([]string{"CLAWPIT_HOME=" + c.Home}, c.Env...)
	tm := StartTerm(t, w, h, env, append([]string{c.Bin, "--db", c.DB}, args...)...)
	tm.WaitConsole()
	return tm
}

// headerRe matches the start of the console header's first line in each
// of its forms: "approvals 0", " 2 pending approvals ", " appr 3 ".
var headerRe = regexp.MustCompile(`^(approvals \d|\s*\d+ (pending )?approvals? |\s*appr \d)`)

// WaitConsole waits for the console's first frame with the registry
// loaded: the header, the tabs and the idle "operator …" status line.
func (tm *Term) WaitConsole() []string {
	tm.t.Helper()
	return tm.WaitFor("the console's first frame", func(s []string) bool {
		return len(s) >= 3 && headerRe.MatchString(s[0]) && strings.HasPrefix(s[1], "clawpit") &&
			strings.Contains(s[2], "1 Tasks") && strings.HasPrefix(s[len(s)-2], "operator ")
	})
}

// paneMarker is a column title of each pane's table header (row 4).
var paneMarker = map[string]string{"1": "RUNTIME", "2": "STATE", "3": "TOOL", "4": "EXIT", "5": "KIND"}

// SwitchPane presses a pane key ("1"–"5") and waits for its table header.
func (tm *Term) SwitchPane(k string) []string {
	tm.t.Helper()
	tm.Keys(k)
	return tm.WaitFor("pane "+k, func(s []string) bool {
		return len(s) > 3 && strings.Contains(s[3], paneMarker[k]) && (k != "2" || strings.HasPrefix(s[3], "RUN"))
	})
}

// SelectRow filters the active pane down to the row with id (/ id enter).
func (tm *Term) SelectRow(id string) {
	tm.t.Helper()
	tm.Keys("/")
	tm.WaitText("filter: ")
	tm.TypeText(id)
	tm.Keys("Enter")
	tm.WaitFor("the filter on "+id, func(s []string) bool {
		return ScreenHas(s, "filter: "+id) && ScreenHas(s, "(esc clears)") && ScreenHas(s, "1/")
	})
}

// WaitStatus waits until the status line (second row from the bottom)
// contains text.
func (tm *Term) WaitStatus(text string) []string {
	tm.t.Helper()
	return tm.WaitFor("status line "+text, func(s []string) bool {
		return len(s) >= 2 && strings.Contains(s[len(s)-2], text)
	})
}
