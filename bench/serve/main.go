// Command serve measures `clawpit serve` with many SSH sessions (README "Serve the console over SSH"):
// the server's memory per extra session, its CPU with every session idle,
// and the latency from an external write to every session's screen.
//
//	go run -tags sqlite_fts5 ./bench/serve [-sessions 20] [-n 10] [-tasks 1000] [-age 0] [-idle 10s] [-bin PATH] [-keep]
//
// It builds clawpit (or uses -bin), seeds a registry with -tasks tasks
// (created -age ago: with an age of an hour or more, no visible age changes
// during the idle window, as on a registry left alone),
// registers an operator with a fresh key, starts `clawpit serve` on a free
// port of 127.0.0.1 (sweeper and watchdog off), and opens the sessions with
// the real OpenSSH client, each in its own window (120×40) of one private
// tmux server.
//
//   - RSS: the server's VmRSS (from /proc) after the first session and after
//     all of them; per extra session = the difference / (sessions − 1).
//   - Idle CPU: the server's utime+stime (from /proc) over -idle with every
//     session connected and no key pressed, as a share of one core.
//   - Latency: -n times, a task with a unique label is created by this
//     process through its own connection to the registry (another writer, as
//     a runtime would be); from its commit, one tmux invocation captures every
//     window about every 10 ms until each shows the label. Per session it
//     records the first capture that shows it, so figures are upper bounds
//     (they include tmux and the capture round, reported beside them).
//
// Connects only to 127.0.0.1. Needs tmux and ssh.
package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"flag"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/clawpit/clawpit/bench/internal/benchbin"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/store"
	"github.com/clawpit/clawpit/termtext"
	gossh "golang.org/x/crypto/ssh"
)

func main() {
	sessions := flag.Int("sessions", 20, "concurrent SSH sessions")
	n := flag.Int("n", 10, "timed external writes")
	tasks := flag.Int("tasks", 1000, "tasks in the registry")
	idle := flag.Duration("idle", 10*time.Second, "CPU measurement window with every session idle")
	age := flag.Duration("age", 0, "how long ago the seeded tasks were created")
	bin := flag.String("bin", "", "clawpit binary (default: go build)")
	keep := flag.Bool("keep", false, "keep the temporary directory (and print it)")
	flag.Parse()
	if err := run(*sessions, *n, *tasks, *age, *idle, *bin, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "bench/serve:", err)
		os.Exit(1)
	}
}

var listeningRe = regexp.MustCompile(`listening on 127\.0\.0\.1:(\d+)`)

func run(sessions, n, tasks int, age, idle time.Duration, bin string, keep bool) error {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		return fmt.Errorf("tmux is needed (apt-get install -y tmux)")
	}
	if _, err := exec.LookPath("ssh"); err != nil {
		return fmt.Errorf("ssh is needed (apt-get install -y openssh-client)")
	}
	dir, bin, done, err := benchbin.Workdir("clawpit-bench-serve-", bin, keep)
	if err != nil {
		return err
	}
	defer done()
	ctx := context.Background()
	dbPath := filepath.Join(dir, "registry.db")
	db, err := store.Open(ctx, dbPath, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	reg := core.NewRegistry(db, core.SystemClock{}, core.DefaultThresholds())
	if _, _, err := reg.OpenSession(ctx, "bench", "", "bench"); err != nil {
		return err
	}
	seedReg := core.NewRegistry(db, core.NewFakeClock(time.Now().Add(-age)), core.DefaultThresholds())
	for i := range tasks {
		if _, err := seedReg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "bench", Label: fmt.Sprintf("seed-%d", i)}, "bench"); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	keyPath := filepath.Join(dir, "id_ed25519")
	pub, err := writeKey(keyPath)
	if err != nil {
		return err
	}
	if _, err := reg.AddOperator(ctx, "bench", core.RoleOperator, pub, "bench"); err != nil {
		return err
	}

	// The server.
	srv := exec.Command(bin, "--db", dbPath, "serve", "--listen", "127.0.0.1:0", "--host-key", filepath.Join(dir, "host_key"),
		"--sweep-interval", "0", "--watchdog-interval", "0", "--idle-timeout", "0")
	srv.Env = append(os.Environ(), "CLAWPIT_HOME="+filepath.Join(dir, "home"))
	out, err := srv.StdoutPipe()
	if err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	srv.Stderr = logf
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() {
		_ = srv.Process.Signal(syscall.SIGTERM)
		_ = srv.Wait()
	}()
	port := ""
	sc := bufio.NewScanner(out)
	for port == "" && sc.Scan() {
		if m := listeningRe.FindStringSubmatch(sc.Text()); m != nil {
			port = m[1]
		}
	}
	if port == "" {
		return fmt.Errorf("clawpit serve did not start (log in %s)", logf.Name())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	pid := srv.Process.Pid
	rss0 := rssKB(pid)

	// The clients, one tmux window each.
	sock := fmt.Sprintf("clawpit-bench-serve-%d", os.Getpid())
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g status off\nset -g remain-on-exit on\nset -g default-terminal screen-256color\n"), 0o600); err != nil {
		return err
	}
	tm := func(args ...string) (string, error) {
		cmd := exec.Command(tmux, append([]string{"-L", sock}, args...)...)
		cmd.Env = append(os.Environ(), "TMUX=")
		b, err := cmd.CombinedOutput()
		if err != nil {
			return string(b), fmt.Errorf("tmux %v: %v: %s", args, err, b)
		}
		return string(b), nil
	}
	defer func() {
		sp, _ := tm("display-message", "-p", "#{socket_path}")
		tm("kill-server")
		if sp = strings.TrimSpace(sp); sp != "" {
			os.Remove(sp)
		}
	}()
	sshCmd := fmt.Sprintf("exec env TERM=screen-256color ssh -t -p %s -i '%s' -F /dev/null -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes -o LogLevel=ERROR bench@127.0.0.1", port, keyPath)
	loaded := " 1 Tasks " + termtext.Thousands(tasks) + " "
	var rss1 int64
	for i := range sessions {
		var err error
		if i == 0 {
			_, err = tm("-f", conf, "new-session", "-d", "-s", "b", "-n", "w0", "-x", "120", "-y", "40", sshCmd)
		} else {
			_, err = tm("new-window", "-d", "-t", "b", "-n", fmt.Sprintf("w%d", i), sshCmd)
		}
		if err != nil {
			return err
		}
		if err := waitFor(func() (string, error) { return tm("capture-pane", "-p", "-t", fmt.Sprintf("b:w%d", i)) }, loaded, 30*time.Second); err != nil {
			return fmt.Errorf("session %d: %w", i, err)
		}
		if i == 0 {
			time.Sleep(time.Second)
			rss1 = rssKB(pid)
		}
	}
	time.Sleep(2 * time.Second)
	rssN := rssKB(pid)

	// Idle CPU.
	c0, t0 := cpuTicks(pid), time.Now()
	time.Sleep(idle)
	c1, el := cpuTicks(pid), time.Since(t0)
	cpuShare := float64(c1-c0) / clkTck / el.Seconds()

	// Latency: one tmux call captures every window.
	captureAll := func() ([]string, error) {
		var args []string
		for i := range sessions {
			if i > 0 {
				args = append(args, ";")
			}
			args = append(args, "display-message", "-p", "@@window", ";", "capture-pane", "-p", "-t", fmt.Sprintf("b:w%d", i))
		}
		s, err := tm(args...)
		if err != nil {
			return nil, err
		}
		parts := strings.Split(s, "@@window\n")
		if len(parts) != sessions+1 {
			return nil, fmt.Errorf("capture: %d parts", len(parts))
		}
		return parts[1:], nil
	}
	var lat, all, capCost []time.Duration
	for i := range n {
		time.Sleep(200*time.Millisecond + mrand.N(300*time.Millisecond))
		label := fmt.Sprintf("sv%d-%08x", i, mrand.Uint32())
		if _, err := reg.CreateTask(ctx, core.NewTask{Runtime: core.RuntimeCLI, OwnerSession: "bench", Label: label}, "bench"); err != nil {
			return err
		}
		committed := time.Now()
		seen := make([]time.Duration, sessions)
		left := sessions
		for left > 0 {
			c := time.Now()
			screens, err := captureAll()
			if err != nil {
				return err
			}
			capCost = append(capCost, time.Since(c))
			for j, s := range screens {
				if seen[j] == 0 && strings.Contains(s, label) {
					seen[j] = time.Since(committed)
					left--
				}
			}
			if time.Since(committed) > 10*time.Second {
				return fmt.Errorf("write %d: %d sessions did not show it within 10 s", i, left)
			}
			time.Sleep(10 * time.Millisecond)
		}
		lat = append(lat, seen...)
		all = append(all, slices.Max(seen))
	}

	fmt.Printf("clawpit serve: %d SSH sessions (OpenSSH under tmux, 120×40), registry of %d tasks, load average %s\n", sessions, tasks, loadAvg())
	fmt.Printf("  server RSS: started %.1f MB, 1 session %.1f MB, %d sessions %.1f MB → %.2f MB per extra session\n",
		mb(rss0), mb(rss1), sessions, mb(rssN), mb(rssN-rss1)/float64(sessions-1))
	fmt.Printf("  server CPU, all %d sessions idle for %s: %.2f%% of one core\n", sessions, idle, 100*cpuShare)
	fmt.Printf("  external write → one session's screen: median %.1f ms, p90 %.1f ms, max %.1f ms (%d samples)\n",
		ms(pct(lat, 50)), ms(pct(lat, 90)), ms(slices.Max(lat)), len(lat))
	fmt.Printf("  external write → every session's screen: median %.1f ms, max %.1f ms (%d writes)\n", ms(pct(all, 50)), ms(slices.Max(all)), len(all))
	fmt.Printf("  capture of all %d windows (one tmux call): median %.1f ms — included in the figures above\n", sessions, ms(pct(capCost, 50)))
	verdict := "met"
	if slices.Max(all) >= 500*time.Millisecond {
		verdict = "MISSED"
	}
	fmt.Printf("  target: a change on every screen within 500 ms → %s\n", verdict)
	return nil
}

// writeKey writes an ed25519 private key (OpenSSH PEM, 0600) and returns
// the public key in authorized_keys form.
func writeKey(path string) ([]byte, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	blk, err := gossh.MarshalPrivateKey(priv, "bench")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(blk), 0o600); err != nil {
		return nil, err
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		return nil, err
	}
	return gossh.MarshalAuthorizedKey(signer.PublicKey()), nil
}

func waitFor(capture func() (string, error), text string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		s, err := capture()
		if err != nil {
			return err
		}
		if strings.Contains(s, text) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%q not on screen after %s:\n%s", text, d, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rssKB is VmRSS of pid in KiB.
func rssKB(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// clkTck is USER_HZ, the unit of /proc/PID/stat times (100 on Linux).
const clkTck = 100

// cpuTicks is utime+stime of pid in clock ticks.
func cpuTicks(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(b)
	// Fields after the command (which may hold spaces) start after ')'.
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		f := strings.Fields(s[i+1:])
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			k, _ := strconv.ParseInt(f[12], 10, 64)
			return u + k
		}
	}
	return 0
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mb(kb int64) float64        { return float64(kb) / 1024 }
