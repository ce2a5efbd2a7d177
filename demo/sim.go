// Package demo is the simulated agent runtime behind `clawpit demo` (README "clawpit demo"): a loop that, through the Registry and Jobs APIs only, opens sessions,
// runs sub-agents with mirrored tasks, asks for approvals, kills runs, races a
// kill against a late completion, fires scheduled tasks, and keeps real
// background jobs busy (a dev server it sends HTTP requests to, a failing
// build, a job that prints fake secrets), so every console pane is alive.
//
// The loop is an event queue over a Clock and a seeded RNG: given the seed and
// the times at which Step is called, the simulator's own decisions are
// deterministic (what the operator, the sweeper and real processes do is not).
// Run drives Step from a real ticker; tests call Step with a FakeClock.
package demo

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/supervisor"
)

// The demo's sessions (docs/contract.md "Entities and statuses" Session): the operator's conversation, a
// research assistant and the scheduler that owns cron tasks.
const (
	SessionMain     = "main"
	SessionResearch = "research"
	SessionNightly  = "nightly"
)

// DefaultOperator is the simulated human who decides approvals the real
// operator leaves alone (the journal names it, so it is never mistaken for
// the person at the console).
const DefaultOperator core.Actor = "alice@demo (simulated)"

// DefaultTick is how often Run calls Step.
const DefaultTick = 250 * time.Millisecond

// Config configures a simulator.
type Config struct {
	// Registry is written through; its Clock drives the simulation.
	Registry *core.Registry
	// Jobs starts the background jobs. Nil: no jobs and no HTTP traffic
	// (tests of the registry side alone).
	Jobs *supervisor.Jobs
	// Exe is the clawpit binary that runs the helper processes (argv[0] of
	// the jobs). Default os.Executable().
	Exe string
	// Cwd is the jobs' working directory. Default the registry's directory.
	Cwd string
	// Seed seeds the RNG (same seed, same step times → same decisions).
	Seed uint64
	// Log receives the activity log, one line per notable event. Nil discards.
	Log io.Writer
	// Operator is the actor of the simulator's own approval decisions.
	// Default DefaultOperator.
	Operator core.Actor
	// BuildDuration, when positive, is passed to the build job as --duration
	// (tests shorten it); by default the build runs 20–40 s.
	BuildDuration time.Duration
}

// Stats counts what the simulator did (for the headless summary and tests).
type Stats struct {
	Runs, Tasks, Approvals, Jobs int
	Requests, RequestErrors      int
	Errors                       int // registry calls that failed (logged)
}

// Sim is the simulated runtime. Step and Stop may be called from different
// goroutines; Step calls are serialised.
type Sim struct {
	cfg   Config
	reg   *core.Registry
	jobs  *supervisor.Jobs
	clock core.Clock
	rng   *rand.Rand
	// spend draws the tokens agents spend: its own stream, so the stories'
	// sequence (rng) is the same with or without it.
	spend *rand.Rand
	op    core.Actor

	logMu sync.Mutex
	log   io.Writer

	mu      sync.Mutex // serialises Start, Step and Stop
	started bool
	stopped bool
	t0      time.Time
	vnow    time.Time // due time of the event being run (virtual now)
	q       eventQueue
	seq     int64

	stats   Stats
	statsMu sync.Mutex

	runN     int
	active   int             // live stories (agents and tasks)
	expiring map[string]bool // approvals requested with an expiry: never decided by the simulator
	asking   int             // approval agents that have not asked yet

	client   *http.Client
	httpWG   sync.WaitGroup
	inflight int32
	port     int
	jobIDs   []string
	devJob   string
	secrets  string
	build    string
	tests    string
	restarts map[string]bool // keep-alive restarts already scheduled, by role
	builds   int

	hooks hookProcs // Claude Code story: gated hook processes still waiting
}

// New returns a simulator over cfg. Errors: ErrInvalid without a registry.
func New(cfg Config) (*Sim, error) {
	if cfg.Registry == nil {
		return nil, core.Invalidf("demo: a registry is required")
	}
	if cfg.Operator == "" {
		cfg.Operator = DefaultOperator
	}
	if cfg.Jobs != nil && cfg.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("demo: locate the clawpit binary: %w", err)
		}
		cfg.Exe = exe
	}
	if cfg.Cwd == "" {
		cfg.Cwd = filepath.Dir(cfg.Registry.Store().Path())
	}
	log := cfg.Log
	if log == nil {
		log = io.Discard
	}
	return &Sim{
		cfg: cfg, reg: cfg.Registry, jobs: cfg.Jobs, clock: cfg.Registry.Clock(),
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x636c6177706974)), op: cfg.Operator, log: log,
		spend:    rand.New(rand.NewPCG(cfg.Seed, 0x7370656e64)),
		expiring: map[string]bool{}, restarts: map[string]bool{},
		client: &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
			Proxy: nil, DisableKeepAlives: false, MaxIdleConnsPerHost: 4,
			DialContext: (&net.Dialer{Timeout: time.Second}).DialContext,
		}},
	}, nil
}

// Stats returns a copy of the counters.
func (s *Sim) Stats() Stats {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	return s.stats
}

func (s *Sim) count(f func(*Stats)) {
	s.statsMu.Lock()
	f(&s.stats)
	s.statsMu.Unlock()
}

// JobIDs returns the ids of every job the simulator started, oldest first.
func (s *Sim) JobIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.jobIDs...)
}

// DevServerPort returns the loopback port of the current dev server job (0
// before it starts or without jobs).
func (s *Sim) DevServerPort() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.port
}

// logf writes one activity line, stamped with the simulated time since start.
func (s *Sim) logf(format string, args ...any) {
	el := s.vnow.Sub(s.t0).Seconds()
	line := fmt.Sprintf("%7.1fs  %s\n", el, fmt.Sprintf(format, args...))
	s.logMu.Lock()
	io.WriteString(s.log, line)
	s.logMu.Unlock()
}

// fail logs a failed registry call; the simulation goes on.
func (s *Sim) fail(what string, err error) {
	if err == nil {
		return
	}
	s.count(func(st *Stats) { st.Errors++ })
	if errors.Is(err, context.Canceled) {
		return
	}
	s.logf("error: %s: %v", what, err)
}

// event is one scheduled action.
type event struct {
	at  time.Time
	seq int64
	fn  func(ctx context.Context)
}

type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// after schedules fn d after the virtual now (at least 10 ms later, so a
// chain of events always moves time forward).
func (s *Sim) after(d time.Duration, fn func(ctx context.Context)) {
	if d < 10*time.Millisecond {
		d = 10 * time.Millisecond
	}
	s.seq++
	heap.Push(&s.q, &event{at: s.vnow.Add(d), seq: s.seq, fn: fn})
}

// between returns a duration uniformly in [lo, hi].
func (s *Sim) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(s.rng.Int64N(int64(hi-lo)+1))
}

// chance reports true with probability p.
func (s *Sim) chance(p float64) bool { return s.rng.Float64() < p }

func pick[T any](s *Sim, xs []T) T { return xs[s.rng.IntN(len(xs))] }

// Start opens the demo sessions, starts the background jobs and schedules
// the opening scenario (every pane populated within seconds), then runs what
// is due now. Calling it twice is an error.
func (s *Sim) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("demo: already started")
	}
	s.started = true
	s.t0 = s.clock.Now()
	s.vnow = s.t0
	for _, ss := range []struct{ id, label string }{
		{SessionMain, "main conversation (demo)"},
		{SessionResearch, "research assistant (demo)"},
		{SessionNightly, "scheduler (demo)"},
	} {
		if _, _, err := s.reg.OpenSession(ctx, ss.id, ss.label, core.ActorRuntime); err != nil {
			return fmt.Errorf("demo: open session %s: %w", ss.id, err)
		}
	}
	s.logf("sessions open: %s, %s, %s", SessionMain, SessionResearch, SessionNightly)
	if s.jobs != nil {
		if err := s.startDevServer(ctx); err != nil {
			return err
		}
		if err := s.startSecrets(ctx); err != nil {
			return err
		}
		if err := s.startBuild(ctx); err != nil {
			return err
		}
		s.after(time.Second, s.traffic)
		s.after(20*time.Second, s.startTests)
		s.after(3*time.Second, s.claudeSession) // runs the binary's `hook` command
	}
	s.opening()
	s.step(ctx, s.clock.Now())
	return nil
}

// Step runs every event due at the clock's current time. After Stop it does
// nothing.
func (s *Sim) Step(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.stopped {
		return
	}
	s.step(ctx, s.clock.Now())
}

func (s *Sim) step(ctx context.Context, now time.Time) {
	for s.q.Len() > 0 && !s.q[0].at.After(now) && ctx.Err() == nil {
		ev := heap.Pop(&s.q).(*event)
		s.vnow = ev.at
		ev.fn(ctx)
	}
	s.vnow = now
}

// Run starts the simulator (unless started) and calls Step every tick
// (DefaultTick when 0) until ctx is done; it returns nil then. It does not
// stop the jobs: call Stop.
func (s *Sim) Run(ctx context.Context, tick time.Duration) error {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if !started {
		if err := s.Start(ctx); err != nil {
			return err
		}
	}
	if tick <= 0 {
		tick = DefaultTick
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			s.Step(ctx)
		}
	}
}

// StopReport says how Stop ended the demo's processes.
type StopReport struct {
	Cancelled []string // jobs Stop cancelled (the rest had already ended)
	Killed    []int    // supervisor pids or process groups that needed SIGKILL
	Leftovers []string // processes still alive after everything ("job <id>: …"); empty when clean
}

// Stop ends the simulation: no further events run, in-flight HTTP requests
// finish, every job the simulator started that is still active is cancelled
// (docs/contract.md "Background jobs: Ending": SIGTERM to its process group, SIGKILL after the grace), and Stop
// waits — at most about 10 s — until no supervisor and no process group of
// those jobs is alive, SIGKILLing what is left. It only touches the jobs it
// started, never other jobs of the same sessions (a --db registry may hold
// the operator's own). Safe to call more than once.
func (s *Sim) Stop(ctx context.Context) StopReport {
	s.mu.Lock()
	s.stopped = true
	ids := append([]string(nil), s.jobIDs...)
	s.mu.Unlock()
	s.httpWG.Wait()
	s.hooks.stop()
	var rep StopReport
	if s.jobs == nil {
		return rep
	}
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for _, id := range ids {
		job, _, err := s.jobs.GetJob(ctx, id)
		if err != nil || !job.Status.Active() {
			continue
		}
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			_, res, err := s.jobs.CancelJob(ctx, id, core.ActorRuntime)
			if err == nil && res.Applied {
				mu.Lock()
				rep.Cancelled = append(rep.Cancelled, id)
				mu.Unlock()
			}
		}(id)
	}
	wg.Wait()

	alive := func() []core.Job {
		var out []core.Job
		for _, id := range ids {
			job, _, err := s.jobs.GetJob(ctx, id)
			if err != nil {
				continue
			}
			if jobAlive(job) {
				out = append(out, *job)
			}
		}
		return out
	}
	deadline := time.Now().Add(10 * time.Second)
	left := alive()
	for len(left) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		left = alive()
	}
	for _, job := range left {
		if job.SupervisorPID > 0 && supervisor.ProcessAlive(job.SupervisorPID, job.SupervisorStart) {
			syscall.Kill(job.SupervisorPID, syscall.SIGKILL)
			rep.Killed = append(rep.Killed, job.SupervisorPID)
		}
		if job.PGID > 1 && supervisor.GroupAlive(job.PGID) {
			supervisor.SignalGroup(job.PGID, syscall.SIGKILL)
			rep.Killed = append(rep.Killed, -job.PGID)
		}
	}
	if len(left) > 0 {
		time.Sleep(time.Second)
		for _, job := range alive() {
			rep.Leftovers = append(rep.Leftovers, fmt.Sprintf("job %s: supervisor pid %d, process group %d still alive", job.ID, job.SupervisorPID, job.PGID))
		}
	}
	return rep
}

// jobAlive reports whether a job's supervisor or process group still runs.
func jobAlive(job *core.Job) bool {
	if job.SupervisorPID > 0 && supervisor.ProcessAlive(job.SupervisorPID, job.SupervisorStart) {
		return true
	}
	return job.PGID > 1 && supervisor.GroupAlive(job.PGID)
}

// ---- background jobs --------------------------------------------------------

// runJob starts one helper job and records its id.
func (s *Sim) runJob(ctx context.Context, session, rationale string, args ...string) (*core.Job, error) {
	job, err := s.jobs.Run(ctx, supervisor.JobSpec{
		Session: session, Cwd: s.cfg.Cwd, Rationale: rationale,
		Command: append([]string{s.cfg.Exe}, args...),
	}, core.ActorRuntime)
	if job != nil {
		s.jobIDs = append(s.jobIDs, job.ID)
	}
	if err != nil {
		return job, fmt.Errorf("demo: start job %q: %w", rationale, err)
	}
	s.count(func(st *Stats) { st.Jobs++ })
	return job, nil
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (s *Sim) startDevServer(ctx context.Context) error {
	port, err := freePort()
	if err != nil {
		return fmt.Errorf("demo: find a free loopback port: %w", err)
	}
	job, err := s.runJob(ctx, SessionMain, "dev server (demo)", DevServerCommand, "--port", strconv.Itoa(port))
	if err != nil {
		return err
	}
	s.devJob, s.port = job.ID, port
	s.logf("job %s started: dev server on http://127.0.0.1:%d", job.ID, port)
	return nil
}

func (s *Sim) startSecrets(ctx context.Context) error {
	job, err := s.runJob(ctx, SessionResearch, "deploy with production credentials (demo; secrets are fake)", SecretsCommand)
	if err != nil {
		return err
	}
	s.secrets = job.ID
	s.logf("job %s started: deploy script printing (fake) secrets", job.ID)
	return nil
}

func (s *Sim) startBuild(ctx context.Context) error {
	s.builds++
	args := []string{BuildCommand, "--target", "./cmd/api", "--seed", strconv.Itoa(s.builds)}
	if s.cfg.BuildDuration > 0 {
		args = append(args, "--duration", s.cfg.BuildDuration.String())
	}
	job, err := s.runJob(ctx, SessionMain, "release build (demo)", args...)
	if err != nil {
		return err
	}
	s.build = job.ID
	s.logf("job %s started: release build (it will fail)", job.ID)
	return nil
}

func (s *Sim) startTests(ctx context.Context) {
	args := []string{BuildCommand, "--test", "--seed", strconv.Itoa(100 + s.builds)}
	if s.cfg.BuildDuration > 0 {
		args = append(args, "--duration", s.cfg.BuildDuration.String())
	} else {
		args = append(args, "--duration", "12s")
	}
	job, err := s.runJob(ctx, SessionResearch, "unit tests (demo)", args...)
	if err != nil {
		s.fail("start test job", err)
		return
	}
	s.tests = job.ID
	s.logf("job %s started: unit tests (they pass)", job.ID)
}

// keepJobsAlive watches the helper jobs: when the dev server or the secrets
// job ends (the operator cancelled or reaped it) it is started again after a
// pause; a finished build is reported and re-run a minute or two later; the
// tests re-run every few minutes. A passivated session is resumed first, as a
// runtime would; a closed session stays closed and its job is not restarted.
func (s *Sim) keepJobsAlive(ctx context.Context) {
	check := func(role, session, id string, restart func(ctx context.Context), pause time.Duration, report func(*core.Job)) {
		if id == "" || s.restarts[role] {
			return
		}
		job, _, err := s.jobs.GetJob(ctx, id)
		if err != nil {
			s.fail("get job "+id, err)
			return
		}
		if job.Status.Active() {
			return
		}
		if report != nil {
			report(job)
		}
		s.restarts[role] = true
		s.after(pause, func(ctx context.Context) {
			if !s.sessionReady(ctx, session) {
				s.logf("session %s is closed: the %s job is not restarted", session, role)
				return // restarts[role] stays set: never again
			}
			s.restarts[role] = false
			restart(ctx)
		})
	}
	check("dev server", SessionMain, s.devJob, func(ctx context.Context) { s.fail("restart dev server", s.startDevServer(ctx)) },
		10*time.Second, func(j *core.Job) {
			s.port = 0
			s.logf("job %s (dev server) ended %s; restarting it in 10s", j.ID, j.Status)
		})
	check("deploy", SessionResearch, s.secrets, func(ctx context.Context) { s.fail("restart secrets job", s.startSecrets(ctx)) },
		30*time.Second, func(j *core.Job) { s.logf("job %s (deploy) ended %s; restarting it in 30s", j.ID, j.Status) })
	check("build", SessionMain, s.build, func(ctx context.Context) { s.fail("restart build", s.startBuild(ctx)) },
		s.between(60*time.Second, 120*time.Second), func(j *core.Job) {
			code := "-"
			if j.ExitCode != nil {
				code = strconv.Itoa(*j.ExitCode)
			}
			s.logf("job %s (build) ended %s, exit code %s", j.ID, j.Status, code)
		})
	check("tests", SessionResearch, s.tests, s.startTests, s.between(120*time.Second, 180*time.Second), func(j *core.Job) {
		s.logf("job %s (tests) ended %s", j.ID, j.Status)
	})
}

// sessionReady reports whether jobs can start in session: active, or
// passivated and resumed now (as a runtime resumes the session it needs).
func (s *Sim) sessionReady(ctx context.Context, session string) bool {
	sess, _, err := s.reg.GetSession(ctx, session)
	if err != nil {
		s.fail("get session "+session, err)
		return false
	}
	switch sess.State {
	case core.SessionClosed:
		return false
	case core.SessionPassivated:
		if _, _, _, err := s.reg.ResumeSession(ctx, session, core.ActorRuntime); err != nil {
			s.fail("resume session "+session, err)
			return false
		}
		s.logf("session %s resumed", session)
	}
	return true
}

// devPaths are the requests the simulated browser sends, weighted by
// repetition.
var devPaths = []string{
	"/", "/", "/health", "/api/tasks", "/api/tasks", "/api/tasks?status=running", "/api/runs/42",
	"/api/search?q=sweeper", "/static/app.css", "/static/app.js", "/favicon.ico", "/api/admin",
	"/api/crash", "/api/tasks?page=2", "/oauth/callback?code=4f1d9c&state=xyz", "/docs/missing",
}

// traffic sends one GET to the dev server about every second, in the
// background, and reschedules itself.
func (s *Sim) traffic(ctx context.Context) {
	defer s.after(s.between(400*time.Millisecond, 1400*time.Millisecond), s.traffic)
	if s.port == 0 || s.inflight >= 4 {
		return
	}
	url := fmt.Sprintf("http://127.0.0.1:%d%s", s.port, pick(s, devPaths))
	s.inflight++
	s.httpWG.Add(1)
	go func() {
		defer s.httpWG.Done()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err == nil {
			req.Header.Set("User-Agent", "clawpit-demo/1 (simulated browser)")
			var resp *http.Response
			if resp, err = s.client.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		s.count(func(st *Stats) {
			st.Requests++
			if err != nil {
				st.RequestErrors++
			}
		})
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
	}()
}
