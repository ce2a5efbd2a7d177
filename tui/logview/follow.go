package logview

import (
	"context"
	"sync"

	"github.com/clawpit/clawpit/tailer"
	"github.com/clawpit/clawpit/termtext"
)

// sanitizeLine is the one place lines, titles and errors enter the view:
// escape sequences and controls removed, tabs and \r resolved, capped at
// maxRunes (SPEC §9).
func sanitizeLine(s string, maxRunes int) string { return termtext.Log(s, maxRunes) }

// followSource adapts a tailer.Follower to Source. The follower crosses
// rotations itself, redacts each line with a LineRedactor and delivers
// batches of at most 1024 lines.
type followSource struct {
	f    *tailer.Follower
	ch   chan []string
	stop chan struct{}
	once sync.Once
}

// followDir follows the job log in dir: the last backlog lines first (read
// backwards across output.1.log, as tailer.Tail does), then live lines, with
// no gap and no overlap. Reading the backlog instead of the whole log keeps
// opening a 10 MiB log as cheap as a tail.
func followDir(ctx context.Context, dir string, backlog int) (Source, error) {
	f, err := tailer.Follow(ctx, dir, tailer.FollowOptions{Backlog: backlog})
	if err != nil {
		return nil, err
	}
	s := &followSource{f: f, ch: make(chan []string), stop: make(chan struct{})}
	go s.pump()
	return s, nil
}

// pump turns batches of tailer.Line into batches of strings. It ends when
// the follower closes its channel (after delivering everything) or on Close.
func (s *followSource) pump() {
	defer close(s.ch)
	for b := range s.f.C() {
		out := make([]string, len(b))
		for i, l := range b {
			out[i] = l.Text
		}
		select {
		case s.ch <- out:
		case <-s.stop:
			return
		}
	}
}

func (s *followSource) Lines() <-chan []string { return s.ch }

// Err is the error that stopped the follower, nil after a normal end.
func (s *followSource) Err() error {
	select {
	case <-s.f.Done():
		return s.f.Err()
	default:
		return nil
	}
}

// StopAtEOF lets the follower deliver what is on disk and end: the job has
// ended, so its writer is done.
func (s *followSource) StopAtEOF() { s.f.StopAtEOF() }

// Close stops the follower and waits until it released its files.
func (s *followSource) Close() error {
	s.once.Do(func() { close(s.stop) })
	s.f.Stop()
	return nil
}
