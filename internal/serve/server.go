// Package serve serves the console over SSH (README "Serve the console over SSH"): operators connect
// with their own public key, get the role they were given (enforced here,
// not only in the console), and are journaled by name and address. One
// watcher polls the registry for every session.
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"charm.land/wish/v2"
	"github.com/charmbracelet/ssh"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/feed"
	"github.com/clawpit/clawpit/maintain"
	"github.com/clawpit/clawpit/tui"
	gossh "golang.org/x/crypto/ssh"
)

// Defaults of Config.
const (
	DefaultListen       = "127.0.0.1:2222"
	DefaultMaxSessions  = 32
	DefaultIdleTimeout  = 30 * time.Minute
	DefaultPollInterval = 100 * time.Millisecond
	// DefaultLoginGraceTime is how long a connection may take to log in,
	// and how long a logged-in one may hold no session (sshd's
	// LoginGraceTime is 120 s; hardened configurations use 30 s).
	DefaultLoginGraceTime = 30 * time.Second
	// DefaultFPS caps each session's frame rate (Bubble Tea's default is
	// 60): frames in a burst are drawn at most this often. The renderer
	// rests while nothing changes (third_party/bubbletea), and the first
	// frame after a rest is drawn at once.
	DefaultFPS = 20
	// DrainTimeout bounds a graceful stop: sessions get their closing
	// message and the server is gone within it.
	DrainTimeout = 5 * time.Second
)

// Config configures a Server. Zero fields take the defaults above.
type Config struct {
	HostKey *HostKey
	// Prices overrides the prices the console costs tokens at (config.toml
	// [prices]), over the defaults and those stored with the budgets.
	Prices core.Prices
	// MaxSessions caps both the concurrent sessions and the logged-in
	// connections (a connection with no session counts too); more are told
	// to retry later.
	MaxSessions int
	// MaxStartups caps the connections not logged in yet (sshd's
	// MaxStartups); the zero value is DefaultStartups.
	MaxStartups Startups
	// LoginGraceTime closes a connection not logged in within it, and a
	// logged-in one that holds no session for it; ≤ 0 is
	// DefaultLoginGraceTime.
	LoginGraceTime time.Duration
	IdleTimeout    time.Duration // without a key press; < 0 disables
	// PollInterval is the watcher's data_version poll (one for all
	// sessions) when the store gives no change hints; with them (SQLite,
	// PostgreSQL) it reads at each hint and every 5 s besides.
	PollInterval time.Duration
	// FPS is each session's maximum frame rate.
	FPS int
	// SweepInterval and WatchdogInterval run one embedded sweeper and
	// watchdog for the server (0 disables), like the local console's.
	SweepInterval    time.Duration
	WatchdogInterval time.Duration

	Theme     string // theme name; "" is the default (NO_COLOR from the client selects mono)
	Keys      tui.KeyMap
	Attention tui.Attention // per session unless the client sends CLAWPIT_QUIET=1
	Logger    *slog.Logger

	// LogView builds the job log view of every session (tui.Options.LogView).
	LogView func(ctx *tui.Context, job tui.Target) tui.LogComponent
}

// Server is `clawpit serve`.
type Server struct {
	cfg   Config
	reg   *core.Registry
	jobs  tui.JobActions
	maint tui.Maintenance
	src   feed.Source
	w     *watcher
	log   *slog.Logger
	srv   *ssh.Server
	conns *conns

	active   atomic.Int32
	mu       sync.Mutex
	sessions map[*session]struct{}
	draining bool
	nextID   atomic.Int64

	// panicKey, when set, makes a session panic on that key (tests only).
	panicKey string
}

// New builds a server over reg. jobs (may be nil) cancels and reaps jobs;
// maint (may be nil) is the maintenance of `m` and the embedded sweeper.
func New(reg *core.Registry, jobs tui.JobActions, maint tui.Maintenance, cfg Config) (*Server, error) {
	if cfg.HostKey == nil {
		return nil, core.Invalidf("serve: no host key")
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.MaxStartups == (Startups{}) {
		cfg.MaxStartups = DefaultStartups
	}
	if err := cfg.MaxStartups.validate(); err != nil {
		return nil, core.Invalidf("serve: max startups %s: %v", cfg.MaxStartups, err)
	}
	if cfg.LoginGraceTime <= 0 {
		cfg.LoginGraceTime = DefaultLoginGraceTime
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.FPS <= 0 {
		cfg.FPS = DefaultFPS
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if len(cfg.Keys.Quit.Keys()) == 0 {
		cfg.Keys = tui.DefaultKeyMap()
	}
	s := &Server{cfg: cfg, reg: reg, jobs: jobs, maint: maint, log: cfg.Logger,
		src: feed.NewPricedStoreSource(reg.Store(), cfg.Prices), sessions: map[*session]struct{}{}}
	s.w = newWatcher(reg.Store(), cfg.PollInterval, cfg.Logger)
	s.conns = newConns(cfg.MaxStartups, cfg.LoginGraceTime, cfg.MaxSessions, rand.IntN, cfg.Logger)
	srv, err := wish.NewServer(
		wish.WithHostKeyPEM(cfg.HostKey.PEM),
		wish.WithPublicKeyAuth(s.authenticate),
		wish.WithVersion("clawpit"),
	)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	srv.Handler = s.handle
	srv.ConnCallback = connCallback
	srv.ServerConfigCallback = s.serverConfig
	s.srv = srv
	return s, nil
}

type ctxKey int

const (
	keyOperator ctxKey = iota
	keyFingerprint
	keyConn
)

// connCallback hands the SSH context its connection's accounting, for the
// server configuration and the session handler.
func connCallback(ctx ssh.Context, c net.Conn) net.Conn {
	if tc, ok := c.(*trackedConn); ok {
		ctx.SetValue(keyConn, tc)
	}
	return c
}

// serverConfig is one connection's SSH configuration: a successful
// authentication (AuthLogCallback with no error: the signature verified)
// moves the connection to the logged-in count.
func (s *Server) serverConfig(ctx ssh.Context) *gossh.ServerConfig {
	tc, _ := ctx.Value(keyConn).(*trackedConn)
	return &gossh.ServerConfig{
		AuthLogCallback: func(_ gossh.ConnMetadata, _ string, err error) {
			if err == nil {
				op, _ := ctx.Value(keyOperator).(*core.Operator)
				name := ""
				if op != nil {
					name = op.Name
				}
				s.conns.loggedIn(tc, name)
			}
		},
	}
}

// authenticate admits a key that belongs to an operator; every other key is
// refused before a session (and any screen) exists.
func (s *Server) authenticate(ctx ssh.Context, key ssh.PublicKey) bool {
	fp := fingerprint(key)
	op, err := s.reg.OperatorByFingerprint(ctx, fp)
	if err != nil {
		if !errors.Is(err, core.ErrNotFound) {
			s.log.Error("operator lookup failed", "addr", ctx.RemoteAddr().String(), "key", fp, "err", err)
		} else {
			s.log.Info("key refused", "addr", ctx.RemoteAddr().String(), "user", ctx.User(), "key", fp)
		}
		return false
	}
	ctx.SetValue(keyOperator, op)
	ctx.SetValue(keyFingerprint, fp)
	return true
}

// Serve serves on ln until ctx ends, then drains: every session is told
// the server is closing and ends, and Serve returns within DrainTimeout.
// The listener is closed on return.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.w.prime(ctx); err != nil {
		ln.Close()
		if ctx.Err() != nil {
			return nil // stopped before it started
		}
		return fmt.Errorf("serve: reading the registry: %w", err)
	}
	wctx, stopWatch := context.WithCancel(context.Background())
	var bg sync.WaitGroup
	bg.Add(2)
	go func() { defer bg.Done(); s.w.run(wctx) }()
	go func() { defer bg.Done(); s.maintain(wctx) }()
	defer func() { stopWatch(); bg.Wait() }()

	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(listener{Listener: ln, c: s.conns}) }()
	select {
	case err := <-errc:
		if errors.Is(err, ssh.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	return s.drain(errc)
}

// drain stops accepting, asks every session to close with a message, and
// forces what is left closed at the deadline.
func (s *Server) drain(errc <-chan error) error {
	start := time.Now()
	s.mu.Lock()
	s.draining = true
	open := make([]*session, 0, len(s.sessions))
	for ss := range s.sessions {
		open = append(open, ss)
	}
	s.mu.Unlock()
	s.log.Info("draining", "sessions", len(open))
	s.conns.drain(false) // connections without a session have nothing to say goodbye to
	for _, ss := range open {
		ss.close("clawpit serve is shutting down; bye.")
	}
	// Shutdown closes the listener and waits for the connections to end;
	// the sessions end as soon as their programs have quit.
	sctx, cancel := context.WithTimeout(context.Background(), DrainTimeout-500*time.Millisecond)
	defer cancel()
	err := s.srv.Shutdown(sctx)
	if err != nil {
		s.log.Warn("sessions still open at the deadline: closing them", "err", err)
		s.srv.Close()
	}
	<-errc
	s.conns.drain(true)
	st := s.ConnStats()
	s.log.Info("stopped", "took", time.Since(start).Round(time.Millisecond).String(),
		"accepted", st.Accepted, "refused", st.Refused, "dropped", st.Dropped)
	return nil
}

// maintain runs the server's one embedded sweeper and watchdog on the
// maintenance service's schedule (the first sweep as the server starts),
// logging the passes that failed or wrote.
func (s *Server) maintain(ctx context.Context) {
	if s.maint == nil || (s.cfg.SweepInterval <= 0 && s.cfg.WatchdogInterval <= 0) {
		return
	}
	svc := &maintain.Service[tui.SweepResult]{
		Sweep:    s.maint.Sweep,
		Watchdog: s.maint.Watchdog,
		Settings: maintain.Settings{SweepInterval: s.cfg.SweepInterval, WatchdogInterval: s.cfg.WatchdogInterval},
		Report: func(p maintain.Pass[tui.SweepResult]) {
			what, done := "sweep", "swept"
			if p.Kind == maintain.KindWatchdog {
				what, done = "watchdog", "watchdog"
			}
			if p.Err != nil {
				s.log.Warn(what+" failed", "err", p.Err)
			} else if p.Result.Wrote {
				s.log.Info(done, "result", p.Result.Short)
			}
		},
	}
	svc.Run(ctx)
}

// Sessions is the number of open sessions.
func (s *Server) Sessions() int { return int(s.active.Load()) }

// ConnStats counts the server's connections now and since it started.
func (s *Server) ConnStats() ConnStats {
	st := s.conns.stats()
	st.Sessions = s.Sessions()
	return st
}

// Polls is how many times the watcher read data_version (tests, bench).
func (s *Server) Polls() int64 { return s.w.polls.Load() }

func (s *Server) add(ss *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return false
	}
	s.sessions[ss] = struct{}{}
	return true
}

func (s *Server) remove(ss *session) {
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
}
