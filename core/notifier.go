package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawpit/clawpit/termtext"
)

// Notifier delivers notifications to an external command (README "Notifications"
// `--notify-cmd CMD`, daemon and console): CMD runs through `sh -c` once per
// undelivered notification, oldest first, with the notification's JSON on
// stdin (the fields of Notification, snake_case) and CLAWPIT_NOTIFICATION_ID,
// _KIND, _SESSION and _SUBJECT in its environment. Exit status 0 marks the
// notification delivered; anything else (or a timeout) leaves it undelivered
// for a later pass, after a backoff that doubles from RetryMin to RetryMax.
//
// Before running CMD a notifier claims the notification with a conditional
// update (Registry.ClaimNotification), a lease of Timeout plus a margin: of
// two live notifiers (a console and the daemon, say) only one delivers it.
// Delivery is at least once across crashes: a notifier that dies between
// the claim and the delivered mark leaves a claim that expires, and the
// notification is delivered again by the next notifier.
type Notifier struct {
	reg     *Registry
	command string
	sh      Shell

	// Session, when set, delivers only that session's notifications.
	Session string
	// Timeout bounds one run of the command (default 30 s); its process
	// group is killed when it expires.
	Timeout time.Duration
	// Poll is how often Run checks Store.DataVersion for new rows (default 200 ms).
	Poll time.Duration
	// RetryMin and RetryMax bound the backoff of a failing notification
	// (defaults 5 s and 5 min).
	RetryMin, RetryMax time.Duration
	// Log receives one line per delivery and failure (default: discarded).
	Log *slog.Logger

	id      string // claimant: host:pid:random
	mu      sync.Mutex
	retries map[int64]notifyRetry
}

type notifyRetry struct {
	next  time.Time
	delay time.Duration
}

// NotifyStats counts one delivery pass.
type NotifyStats struct {
	Delivered int // command exited 0; marked delivered
	Failed    int // command failed; left for a later pass
	Deferred  int // still backing off after an earlier failure
	Claimed   int // claimed by another live notifier; left to it
}

// claimMargin is added to the command's timeout to make a claim's lease: the
// command is killed at the timeout, so a live notifier's claim never lapses
// while its command runs.
const claimMargin = 30 * time.Second

// Shell runs a notifier's command line; *supervisor.Shell is the one
// implementation, so that core starts no process and makes no system call
// of its own.
type Shell interface {
	// Run runs command through `sh -c` as a process group of its own, with
	// stdin on its standard input and env added to this process's
	// environment, and returns what it wrote to stdout and stderr together.
	// When ctx ends the whole group is killed (SIGKILL). err is nil exactly
	// when the command exited 0; otherwise it is *exec.ExitError, a start
	// error, or ctx's error.
	Run(ctx context.Context, command string, stdin []byte, env []string) (output []byte, err error)
}

// NewNotifier returns a notifier running command (a shell command line)
// through sh for reg's notifications. Errors: ErrInvalid for an empty
// command or a nil sh.
func NewNotifier(reg *Registry, command string, sh Shell) (*Notifier, error) {
	if strings.TrimSpace(command) == "" {
		return nil, Invalidf("empty --notify-cmd")
	}
	if sh == nil {
		return nil, Invalidf("notifier without a shell to run --notify-cmd")
	}
	host, _ := os.Hostname()
	id := fmt.Sprintf("%s:%d:%s", host, os.Getpid(), NewShortID())
	return &Notifier{reg: reg, command: command, sh: sh, id: id, retries: map[int64]notifyRetry{}}, nil
}

// ID returns the notifier's claimant name ("host:pid:random").
func (n *Notifier) ID() string { return n.id }

// Command returns the shell command line.
func (n *Notifier) Command() string { return n.command }

func (n *Notifier) log() *slog.Logger {
	if n.Log != nil {
		return n.Log
	}
	return slog.New(slog.DiscardHandler)
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// DeliverPending runs one pass over the undelivered notifications (at most
// 100, oldest first). A failing command is not an error: it is counted and
// retried later. The error is for the registry (listing, marking) or ctx.
func (n *Notifier) DeliverPending(ctx context.Context) (NotifyStats, error) {
	var st NotifyStats
	pending, err := n.reg.ListNotifications(ctx, NotificationFilter{UndeliveredOnly: true, Session: n.Session, Limit: 100})
	if err != nil {
		return st, fmt.Errorf("notifier: list undelivered notifications: %w", err)
	}
	for _, nt := range pending {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if !n.due(nt.ID) {
			st.Deferred++
			continue
		}
		claimed, err := n.reg.ClaimNotification(ctx, nt.ID, n.id, orDefault(n.Timeout, 30*time.Second)+claimMargin)
		if err != nil {
			return st, fmt.Errorf("notifier: claim notification %d: %w", nt.ID, err)
		}
		if !claimed {
			st.Claimed++ // another live notifier has it (or it was delivered meanwhile)
			continue
		}
		if err := n.runCommand(ctx, nt); err != nil {
			st.Failed++
			delay := n.failed(nt.ID)
			n.log().Warn("notify command failed", "notification", nt.ID, "kind", nt.Kind, "retry_in", delay.String(), "err", err)
			if err := n.reg.ReleaseNotificationClaim(context.WithoutCancel(ctx), nt.ID, n.id); err != nil {
				n.log().Warn("notifier: release claim", "notification", nt.ID, "err", err)
			}
			continue
		}
		n.mu.Lock()
		delete(n.retries, nt.ID)
		n.mu.Unlock()
		if _, err := n.reg.AckNotification(ctx, nt.ID); err != nil {
			return st, fmt.Errorf("notifier: mark notification %d delivered: %w", nt.ID, err)
		}
		st.Delivered++
		n.log().Info("notification delivered", "notification", nt.ID, "kind", nt.Kind, "subject", nt.SubjectID)
	}
	return st, nil
}

// due reports whether notification id may be tried now.
func (n *Notifier) due(id int64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	r, ok := n.retries[id]
	return !ok || !time.Now().Before(r.next)
}

// failed records a failure of id and returns the delay before the next try.
func (n *Notifier) failed(id int64) time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	r := n.retries[id]
	if r.delay == 0 {
		r.delay = orDefault(n.RetryMin, 5*time.Second)
	} else {
		r.delay = min(2*r.delay, orDefault(n.RetryMax, 5*time.Minute))
	}
	r.next = time.Now().Add(r.delay)
	n.retries[id] = r
	return r.delay
}

// runCommand runs the command once for nt; nil when it exited 0.
func (n *Notifier) runCommand(ctx context.Context, nt Notification) error {
	body, err := json.Marshal(nt)
	if err != nil {
		return err
	}
	// What the command reads may reach a terminal or a chat: no character
	// that hides or reorders text goes raw (\uXXXX, same value).
	body = termtext.EscapeJSON(body)
	// A running command finishes even when ctx ends (the daemon stops after
	// the current delivery), within its own timeout.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), orDefault(n.Timeout, 30*time.Second))
	defer cancel()
	out, err := n.sh.Run(cctx, n.command, append(body, '\n'), []string{
		"CLAWPIT_NOTIFICATION_ID=" + strconv.FormatInt(nt.ID, 10),
		"CLAWPIT_NOTIFICATION_KIND=" + string(nt.Kind),
		"CLAWPIT_NOTIFICATION_SESSION=" + nt.Session,
		"CLAWPIT_NOTIFICATION_SUBJECT=" + nt.SubjectID})
	if err == nil {
		return nil
	}
	msg := strings.TrimSpace(string(out))
	if len(msg) > 300 {
		msg = msg[len(msg)-300:]
	}
	if errors.Is(cctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %s", orDefault(n.Timeout, 30*time.Second))
	}
	if msg != "" {
		return fmt.Errorf("%w: %s", err, msg)
	}
	return err
}

// Run delivers until ctx ends: a pass at once, then one whenever the
// registry changes (PRAGMA data_version, polled every Poll) or a backed-off
// notification falls due. It returns nil when ctx ends; registry errors are
// logged and retried on the next tick.
func (n *Notifier) Run(ctx context.Context) error {
	poll := orDefault(n.Poll, 200*time.Millisecond)
	t := time.NewTicker(poll)
	defer t.Stop()
	var last int64 = -1
	for {
		v, err := n.reg.store.DataVersion(ctx)
		if err != nil && ctx.Err() == nil {
			n.log().Error("notifier: data_version", "err", err)
		}
		if err == nil && (v != last || n.retryDue()) {
			last = v
			if _, err := n.DeliverPending(ctx); err != nil && ctx.Err() == nil {
				n.log().Error("notifier pass failed", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// retryDue reports whether a backed-off notification may be tried now.
func (n *Notifier) retryDue() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	for _, r := range n.retries {
		if !now.Before(r.next) {
			return true
		}
	}
	return false
}

// LastNotificationID returns the newest notification id (0 when none): a
// cursor from which FollowNotifications reports only new ones.
func LastNotificationID(ctx context.Context, s Store) (int64, error) {
	var id int64
	err := s.View(ctx, func(tx Tx) error {
		var err error
		id, err = tx.SweepLastNotificationID()
		return err
	})
	return id, err
}

// FollowNotifications calls fn with every notification whose id is greater
// than after (of session, when set), oldest first, polling the registry's
// data_version every poll (default 200 ms) and reading only when it changed.
// It returns nil when ctx ends, or fn's error.
func FollowNotifications(ctx context.Context, s Store, after int64, session string, poll time.Duration, fn func(Notification) error) error {
	poll = orDefault(poll, 200*time.Millisecond)
	t := time.NewTicker(poll)
	defer t.Stop()
	var last int64 = -1
	for {
		v, err := s.DataVersion(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if v != last {
			last = v
			for {
				var batch []Notification
				err := s.View(ctx, func(tx Tx) (err error) {
					batch, err = tx.ListNotifications(NotificationFilter{AfterID: after, Session: session, Limit: 500})
					return err
				})
				if err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return err
				}
				for _, nt := range batch {
					after = nt.ID
					if err := fn(nt); err != nil {
						return err
					}
				}
				if len(batch) < 500 {
					break
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
