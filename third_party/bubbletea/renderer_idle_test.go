package tea

import (
	"sync"
	"testing"
	"time"
)

// flushCounter is a renderer that counts flushes (the renderer loop's
// draws) and remembers the last view it was given.
type flushCounter struct {
	nilRenderer
	mu      sync.Mutex
	flushes int
	drawn   []time.Time
}

func (r *flushCounter) flush(bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushes++
	r.drawn = append(r.drawn, time.Now())
	return nil
}

func (r *flushCounter) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flushes
}

func (r *flushCounter) last() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.drawn[len(r.drawn)-1]
}

type staticModel struct{}

func (staticModel) Init() Cmd                 { return nil }
func (m staticModel) Update(Msg) (Model, Cmd) { return m, nil }
func (staticModel) View() View                { return NewView("idle") }

// TestRendererRestsWhenIdle: the patched renderer loop (PATCHES.md) draws
// the first frame, then stops waking while no view comes; a new view after
// a rest is drawn at once (not at the next tick), and a burst of views is
// drawn in a few frames, not one each. Upstream's loop flushes at every
// tick: 100 flushes over a second at 100 fps.
func TestRendererRestsWhenIdle(t *testing.T) {
	const fps = 100
	p := NewProgram(staticModel{}, WithFPS(fps))
	p.fps = fps
	r := &flushCounter{}
	p.renderer = r
	p.render(staticModel{})
	p.startRenderer()
	defer p.stopRenderer(true)

	time.Sleep(time.Second) // 100 intervals with nothing new
	if n := r.count(); n < 1 || n > 3 {
		t.Fatalf("idle second at %d fps: %d flushes, want the first frame and at most two more", fps, n)
	}

	before := r.count()
	sent := time.Now()
	p.render(staticModel{})
	deadline := time.Now().Add(2 * time.Second)
	for r.count() == before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if r.count() == before {
		t.Fatal("a view after a rest was never drawn")
	}
	// Drawn on the leading edge: well within one interval on a quiet
	// machine; a loaded one gets the interval's slack.
	if d := r.last().Sub(sent); d > 2*time.Second/fps {
		t.Errorf("a view after a rest drawn after %s, want at once (< %s)", d, 2*time.Second/fps)
	}

	before = r.count()
	for range 200 {
		p.render(staticModel{})
	}
	time.Sleep(200 * time.Millisecond) // 20 intervals: the burst's frames, then a rest
	if n := r.count() - before; n < 1 || n > 15 {
		t.Errorf("a burst of 200 views: %d flushes, want a few (≥ 1, coalesced by the frame rate)", n)
	}
	before = r.count()
	time.Sleep(500 * time.Millisecond)
	if n := r.count() - before; n > 0 {
		t.Errorf("after the burst: %d flushes in half a second of rest, want 0", n)
	}
}
