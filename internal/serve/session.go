package serve

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/wish/v2"
	bm "charm.land/wish/v2/bubbletea"
	"github.com/charmbracelet/ssh"
	"github.com/clawpit/clawpit/core"
	"github.com/clawpit/clawpit/termtext"
	"github.com/clawpit/clawpit/themes"
	"github.com/clawpit/clawpit/tui"
	gossh "golang.org/x/crypto/ssh"
)

func fingerprint(k ssh.PublicKey) string { return gossh.FingerprintSHA256(k) }

// session is one connected operator's console.
type session struct {
	p       *tea.Program
	closeMu sync.Once
}

// closeMsg ends a session with a message printed after the console.
type closeMsg struct{ text string }

// close asks the session's console to quit with text as its last words.
// It never blocks the caller.
func (ss *session) close(text string) {
	ss.closeMu.Do(func() { go ss.p.Send(closeMsg{text}) })
}

// handle runs one SSH session: checks the limits and the terminal, builds
// the operator's console and runs it until the operator quits, goes idle,
// the connection drops or the server drains.
func (s *Server) handle(sess ssh.Session) {
	start := time.Now()
	ctx := sess.Context()
	op, _ := ctx.Value(keyOperator).(*core.Operator)
	fp, _ := ctx.Value(keyFingerprint).(string)
	addr := sess.RemoteAddr().String()
	if op == nil { // cannot happen: authentication sets it
		wish.Fatalln(sess, "clawpit serve: not authenticated")
		return
	}
	log := s.log.With("session", s.nextID.Add(1), "operator", op.Name, "role", string(op.Role), "addr", addr)
	end := "quit"
	defer func() {
		if r := recover(); r != nil {
			end = "panic"
			log.Error("session panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			fmt.Fprint(sess, "\r\nclawpit serve: this session failed; the server is still up.\r\n")
			_ = sess.Exit(1)
		}
		log.Info("session end", "reason", end, "duration", time.Since(start).Round(time.Millisecond).String())
	}()

	tc, _ := ctx.Value(keyConn).(*trackedConn)
	release, ok := s.takeSession(tc)
	if !ok {
		end = "too many sessions"
		log.Warn("session refused: too many sessions", "max", s.cfg.MaxSessions)
		wish.Fatalf(sess, "clawpit serve: too many sessions (%d); try again later\r\n", s.cfg.MaxSessions)
		return
	}
	defer release()
	pty, winCh, ok := sess.Pty()
	if !ok {
		end = "no terminal"
		wish.Fatalln(sess, "clawpit serve: the console needs a terminal: connect with ssh -t")
		return
	}
	st := s.ConnStats()
	log.Info("session start", "key", fp, "term", pty.Term, "size", fmt.Sprintf("%dx%d", pty.Window.Width, pty.Window.Height),
		"sessions", st.Sessions, "authenticated", st.Authenticated, "unauthenticated", st.Unauthenticated)

	actor := core.SSHActor(op.Name, addr)
	g := &guard{reg: s.reg, fp: fp, actor: actor, log: log, actions: s.reg, jobs: s.jobs, maint: s.maint}
	readOnly := op.Role != core.RoleOperator
	opts := s.consoleOptions(op, g, sessionEnv(sess.Environ()))
	sm := &sessionModel{inner: tui.New(opts), g: g, readOnly: readOnly, idle: s.cfg.IdleTimeout,
		lastKey: time.Now(), log: log, panicKey: s.panicKey}
	p := tea.NewProgram(sm, append(bm.MakeOptions(sess), tea.WithoutSignalHandler(), tea.WithFPS(s.cfg.FPS))...)
	sm.quit = func() { go p.Quit() }
	ss := &session{p: p}
	if !s.add(ss) {
		end = "draining"
		wish.Fatalln(sess, "clawpit serve is shutting down; bye.")
		return
	}
	defer s.remove(ss)

	wake, unsubscribe := s.w.subscribe()
	defer unsubscribe()
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go forwardEvents(pctx, p, winCh, wake)
	if _, err := p.Run(); err != nil && ctx.Err() == nil {
		log.Warn("console ended with an error", "err", err)
	}
	p.Kill()
	end = closeSession(sess, sm)
}

// sessionEnv returns a getenv over an SSH session's environment (KEY=value
// strings, as sess.Environ gives them): the last assignment of a key wins, as
// in a shell, and an unset key reads "".
func sessionEnv(env []string) func(string) string {
	return func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
}

// consoleOptions are the console options of operator op's session: the
// shared source without polling (the shared watcher pushes every change as a
// RefreshMsg), the server's theme resolved against the client's environment
// (the default theme when that fails), read-only unless op is an operator, and
// every action through guard g. CLAWPIT_QUIET set to anything but "0" in the
// client's environment turns the attention signal off.
func (s *Server) consoleOptions(op *core.Operator, g *guard, getenv func(string) string) tui.Options {
	th, err := themes.Resolve(s.cfg.Theme, getenv)
	if err != nil {
		th, _ = themes.Get(themes.Default)
	}
	readOnly := op.Role != core.RoleOperator
	opts := tui.Options{
		Source:    sharedSource{Source: s.src, w: s.w},
		Theme:     th,
		Keys:      s.cfg.Keys,
		ReadOnly:  readOnly,
		Operator:  g.actor,
		NoPoll:    true, // the shared watcher pushes every change (RefreshMsg)
		LogView:   s.cfg.LogView,
		SweepNote: s.sweepNote(),
	}
	// Belt and braces: a readonly session's console offers no action
	// (ReadOnly), and every action path goes through the guard, which
	// refuses a readonly or removed operator whatever reaches it.
	opts.Actions, opts.Jobs = g, g
	if readOnly {
		opts.ReadOnlyWhy = "operator " + op.Name + " is " + string(op.Role)
	}
	if s.maint != nil {
		opts.Maintenance = g
	}
	if q := getenv("CLAWPIT_QUIET"); q == "" || q == "0" {
		opts.Attention = s.cfg.Attention
	}
	return opts
}

// forwardEvents feeds program p what happens outside it until ctx ends, then
// quits it: the client's window size changes (winCh) and the shared
// watcher's wake-ups (a RefreshMsg each).
func forwardEvents(ctx context.Context, p *tea.Program, winCh <-chan ssh.Window, wake <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			p.Quit()
			return
		case w := <-winCh:
			p.Send(tea.WindowSizeMsg{Width: w.Width, Height: w.Height})
		case <-wake:
			p.Send(tui.RefreshMsg{})
		}
	}
}

// closeSession ends sess after its console program stopped and returns the
// reason the session log records: "panic" (exit 1, with a note), the reason
// the console gave for closing it (its message shown, exit 0),
// "disconnected" when the client went away, else "quit" (exit 0).
func closeSession(sess ssh.Session, sm *sessionModel) string {
	switch {
	case sm.panicked:
		fmt.Fprint(sess, "clawpit serve: this session failed and was closed; the server is still up.\r\n")
		_ = sess.Exit(1)
		return "panic"
	case sm.closing != "":
		fmt.Fprint(sess, sm.closing+"\r\n")
		_ = sess.Exit(0)
		return sm.reason
	case sess.Context().Err() != nil:
		return "disconnected"
	default:
		_ = sess.Exit(0)
		return "quit"
	}
}

// takeSession counts a session on tc and reports whether it may run; when
// it may, release uncounts it. A connection logged in beyond
// --max-sessions gets no session either, so the cap holds whether clients
// open sessions or only connections.
func (s *Server) takeSession(tc *trackedConn) (release func(), ok bool) {
	if !s.conns.sessionStart(tc) {
		return nil, false
	}
	if int(s.active.Add(1)) > s.cfg.MaxSessions {
		s.active.Add(-1)
		s.conns.sessionEnd(tc)
		return nil, false
	}
	return func() { s.active.Add(-1); s.conns.sessionEnd(tc) }, true
}

// sessionModel wraps one session's console: it notes key presses for the
// idle timeout, ends the session on a closeMsg, and turns a panic in the
// console into the end of this session only.
type sessionModel struct {
	inner    tea.Model
	g        *guard
	readOnly bool
	idle     time.Duration
	lastKey  time.Time
	log      *slog.Logger
	panicKey string
	quit     func() // asks the program to quit from outside its loop

	closing, reason string
	panicked        bool
}

type idleMsg struct{}

// idleEvery is how often the idle timeout is checked: a tenth of it, at
// least every 10 s.
func (m *sessionModel) idleCheck() tea.Cmd {
	if m.idle <= 0 {
		return nil
	}
	every := min(max(m.idle/10, 10*time.Millisecond), 10*time.Second)
	return tea.Tick(every, func(time.Time) tea.Msg { return idleMsg{} })
}

func (m *sessionModel) Init() tea.Cmd { return tea.Batch(m.inner.Init(), m.idleCheck()) }

// recovered logs a panic recovered in where (recover must be called by the
// deferred function itself, so the caller passes its result).
func (m *sessionModel) recovered(where string, r any) {
	if r != nil {
		m.log.Error("session panicked", "in", where, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		m.panicked = true
	}
}

func (m *sessionModel) Update(msg tea.Msg) (_ tea.Model, cmd tea.Cmd) {
	defer func() {
		m.recovered("update", recover())
		if m.panicked {
			cmd = tea.Quit
		}
	}()
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		m.lastKey = time.Now()
		if m.panicKey != "" && msg.String() == m.panicKey {
			panic("test panic key")
		}
	case idleMsg:
		if time.Since(m.lastKey) >= m.idle {
			m.closing, m.reason = fmt.Sprintf("clawpit serve: no key pressed for %s; disconnected.", m.idle), "idle"
			return m, tea.Quit
		}
		return m, m.idleCheck()
	case closeMsg:
		m.closing, m.reason = msg.text, "server shutting down"
		return m, tea.Quit
	case tea.SuspendMsg:
		return m, nil // ctrl+z has no meaning over SSH
	}
	var c tea.Cmd
	m.inner, c = m.inner.Update(msg)
	return m, c
}

func (m *sessionModel) View() (v tea.View) {
	defer func() {
		m.recovered("view", recover())
		if m.panicked {
			v = tea.NewView("")
			if m.quit != nil {
				m.quit()
			}
		}
	}()
	if m.panicked {
		return tea.NewView("")
	}
	return m.inner.View()
}

// sweepNote is what a session's header says about the server's sweeper.
func (s *Server) sweepNote() string {
	if s.maint == nil || s.cfg.SweepInterval <= 0 {
		return "sweeper off"
	}
	return "server sweeps every " + termtext.Duration(s.cfg.SweepInterval)
}
