package e2e

// `clawpit serve` under test: start it (optionally under a descriptor
// limit), read its log, its memory and its descriptors from /proc, and
// connect with the OpenSSH client or with x/crypto/ssh. The names shared
// with the console tests' helpers (RequireSSH, SSHKey, Server, StartServe,
// SSHArgs, AddOperator) keep their signatures.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// RequireSSH skips the test when tmux or the OpenSSH client (ssh,
// ssh-keygen) is not installed.
func RequireSSH(t testing.TB) {
	t.Helper()
	RequireTmux(t)
	RequireSSHClient(t)
}

// RequireSSHClient skips the test when the OpenSSH client (ssh, ssh-keygen)
// is not installed; unlike RequireSSH it does not need tmux.
func RequireSSHClient(t testing.TB) {
	t.Helper()
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

// SSHSigner reads the private key at path (SSHKey's) for an x/crypto/ssh
// client.
func SSHSigner(t testing.TB, path string) gossh.Signer {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.ParsePrivateKey(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// AddOperator registers name with role and the public half of key.
func AddOperator(c *CLI, name, role, key string) {
	c.T.Helper()
	c.OK("operator", "add", name, "--role", role, "--key", key+".pub")
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

// ServeOptions say how StartServeWith runs the server's process.
type ServeOptions struct {
	// NoFile, when > 0, is the server's descriptor limit (RLIMIT_NOFILE,
	// soft and hard), set by `ulimit -n` in a shell that then execs the
	// server (so the process is the server's).
	NoFile int
}

// StartServe runs `clawpit serve` for c's registry on a free loopback port
// (a fresh host key, no sweeper or watchdog unless args say so) and waits
// up to UITimeout until it listens. It is stopped (SIGTERM, then killed
// after 10 s) when the test ends.
func StartServe(t testing.TB, c *CLI, args ...string) *Server {
	t.Helper()
	return StartServeWith(t, c, ServeOptions{}, args...)
}

// StartServeWith is StartServe with options for the process.
func StartServeWith(t testing.TB, c *CLI, o ServeOptions, args ...string) *Server {
	t.Helper()
	argv := append([]string{"serve", "--listen", "127.0.0.1:0", "--host-key", filepath.Join(t.TempDir(), "host_key"),
		"--sweep-interval", "0", "--watchdog-interval", "0"}, args...)
	s := &Server{cmd: c.Command(nil, argv...), done: make(chan error, 1)}
	if o.NoFile > 0 {
		sh, err := exec.LookPath("sh")
		if err != nil {
			t.Skipf("no sh to set the descriptor limit with: %v", err)
		}
		s.cmd.Args = append([]string{"sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, o.NoFile)}, s.cmd.Args...)
		s.cmd.Path = sh
	}
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
	s.Port = waitListening(t, s, stdout)
	return s
}

// waitListening reads the server's stdout until it says where it listens
// and returns the port; the rest of stdout is drained.
func waitListening(t testing.TB, s *Server, stdout io.Reader) string {
	t.Helper()
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
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("clawpit serve exited before listening: %q\n%s", head, s.Logs())
			}
			head = append(head, l)
			if m := listeningRe.FindStringSubmatch(l); m != nil {
				go func() {
					for range lines {
					}
				}()
				return m[1]
			}
		case <-deadline:
			t.Fatalf("clawpit serve not listening after %s: %q\n%s", UITimeout, head, s.Logs())
		}
	}
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + s.Port }

// PID is the server process's id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// WaitLog waits up to within for the server's log to match re and returns
// the log; it fails the test naming what it waited for.
func (s *Server) WaitLog(t testing.TB, what string, re *regexp.Regexp, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		l := s.Logs()
		if re.MatchString(l) {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: server log has no match for %q after %s:\n%s", what, re, within, l)
		}
		time.Sleep(20 * time.Millisecond)
	}
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

// ProcMem is a process's resident memory now (VmRSS) and at its peak
// (VmHWM), in bytes, from /proc/PID/status.
func ProcMem(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		f := strings.Fields(v) // "12345 kB"
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("/proc/%d/status: %q", pid, l)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/%d/status: %q: %w", pid, l, err)
		}
		if k == "VmRSS" {
			rss = n * 1024
		} else {
			hwm = n * 1024
		}
	}
	if rss == 0 || hwm == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/status: no VmRSS or VmHWM", pid)
	}
	return rss, hwm, nil
}

// OpenFDs is how many descriptors a process has open (/proc/PID/fd).
func OpenFDs(pid int) (int, error) {
	es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(es), err
}

// NoFileLimit is a process's soft descriptor limit (/proc/PID/limits).
func NoFileLimit(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "Max open files"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				return strconv.Atoi(f[0])
			}
		}
	}
	return 0, fmt.Errorf("/proc/%d/limits: no Max open files", pid)
}
