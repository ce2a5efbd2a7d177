package logview

import (
	"context"
	"sync"

	"github.com/clawpit/clawpit/tailer"
	"github.com/clawpit/clawpit/termtext"
)

// sanitizeLine is the one place lines, titles and errors enter the view:
// escape sequences and controls removed, tabs and \r resolved, capped at
// maxRunes (README "The console").
func sanitizeLine(s string, maxRunes int) string { return termtext.Log(s, maxRunes) }

// followSource adapts a tailer.Follower to BatchSource. The follower
// crosses rotations itself, redacts each line with a LineRedactor and
// delivers batches of at most 1024 lines, ending with the previews of the
// lines still being written (tailer.Line.Partial).
type followSource struct {
	f     *tailer.Follower
	ch    chan Batch
	stop  chan struct{}
	once  sync.Once
	lines chan []string // Lines, made on its first call
	lonce sync.Once
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
	s := &followSource{f: f, ch: make(chan Batch), stop: make(chan struct{})}
	go s.pump()
	return s, nil
}

// pump turns batches of tailer.Line into Batches. It ends when the
// follower closes its channel (after delivering everything) or on Close.
func (s *followSource) pump() {
	defer close(s.ch)
	for b := range s.f.C() {
		var out Batch
		out.Lines = make([]string, 0, len(b))
		for _, l := range b {
			if l.Partial {
				out.Preview = append(out.Preview, l.Text)
			} else {
				out.Lines = append(out.Lines, l.Text)
			}
		}
		select {
		case s.ch <- out:
		case <-s.stop:
			return
		}
	}
}

func (s *followSource) Batches() <-chan Batch { return s.ch }

// Lines is Batches without the previews (and without batches of previews
// only), for a caller that stores lines.
func (s *followSource) Lines() <-chan []string {
	s.lonce.Do(func() {
		s.lines = make(chan []string)
		go func() {
			defer close(s.lines)
			for b := range s.ch {
				if len(b.Lines) == 0 {
					continue
				}
				select {
				case s.lines <- b.Lines:
				case <-s.stop:
					return
				}
			}
		}()
	})
	return s.lines
}

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
