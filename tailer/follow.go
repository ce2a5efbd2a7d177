package tailer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawpit/clawpit/redact"
	"github.com/fsnotify/fsnotify"
)

// Live follow of a job log across rotations (docs/contract.md "Background jobs: Tail and follow", bench/README.md P5).
//
// Why not github.com/nxadm/tail: measured here (TestNxadmRotationLoss, run
// with CLAWPIT_NXADM_EXPERIMENT=1), with Config{Follow, ReOpen,
// CompleteLines}, a writer of 300,000 lines rotating 31 times at 256 KiB
// (300,000 lines/s) lost about 284,000 of them with inotify and as many with
// Poll, where Follow lost none; an unthrottled writer lost 55–70 % with
// inotify, and with Poll the tail died on the stat of the momentarily absent
// output.log. nxadm reacts to the rename by reopening the path without
// draining the old descriptor, and takes a write event that stats the new,
// shorter file for a truncation. So the follower holds the descriptors
// itself:
//
//   - A generation (one file under output.log, later output.1.log, then
//     deleted) is identified by its inode (only compared against files held
//     open, so a reused inode number cannot fool it). Before every 64 KiB
//     read, and at every wakeup while waiting — an fsnotify event on the
//     directory, or a poll tick as a safety net — the follower opens
//     ("pins") any generation it has not seen yet, oldest first, with a
//     consistency check against a rotation racing the two opens. A pinned
//     descriptor keeps a rotated-away file readable, so a slow consumer
//     loses nothing (up to maxPinned files, then a Gap line). The one loss
//     it cannot prevent: a generation created and rotated away entirely
//     between two pins, i.e. the writer rotating twice (≥ 10 MiB at the
//     5 MiB threshold) while the follower's goroutine does not run at all
//     (a starved process). It is not silent: RotatingWriter numbers its
//     files in output.gen (written before a new output.log appears), and a
//     jump in the numbers puts a Gap line where the lines are missing.
//   - The current generation is read to EOF. Once a newer generation exists
//     the writer has finished the current one (it flushes before renaming),
//     so it is read to EOF once more, its last unterminated line (if any)
//     is delivered, and reading moves to the next generation at offset 0.
//     Every line is delivered once, in order.
//   - Lines are delivered in batches (at most BatchLines lines or about
//     1 MiB), so a console can render one message per frame. When the
//     consumer does not receive, the follower stops reading (the file is the
//     buffer) but keeps pinning new generations.
//   - Memory is bounded: one 64 KiB read buffer, one batch, and a partial
//     line of at most MaxLineBytes (longer lines are split).
//   - Previews: the line a command is still writing is not in the log but
//     in PartialFile beside it (RotatingWriter.SetPartial). Each time the
//     follower has read the current generation to its end, it reads
//     PartialFile and, when it changed, ends the batch with its lines
//     marked with PartialMark (Line.Partial). The writer removes a preview
//     before it writes its line, and the follower reads the preview after
//     the log and then checks the log did not grow meanwhile: a preview
//     therefore never shows after the line it previews, nor before lines
//     written ahead of it.

// FollowOptions configures Follow. Zero values select the defaults.
type FollowOptions struct {
	// FromStart delivers everything on disk first: output.1.log (if present)
	// from its start, then output.log.
	FromStart bool
	// Backlog, when FromStart is false, delivers the last Backlog complete
	// lines (as Tail would, across output.1.log) before the live lines, with
	// no gap and no overlap between them. 0 starts at the end.
	Backlog int
	// BatchLines caps the lines of one batch (default 1024; a batch is also
	// sent at about 1 MiB, and whenever the follower has caught up).
	BatchLines int
	// MaxLineBytes caps one line (default 64 KiB); longer lines are split.
	MaxLineBytes int
	// PollInterval is the safety-net poll period (default 250 ms). Changes
	// are normally noticed at once through fsnotify on the log directory.
	PollInterval time.Duration
	// NoNotify disables fsnotify (polling only).
	NoNotify bool

	maxPinned int // rotated files held open at most; 0 = maxPinned (tests lower it)
}

// Line is one line of a followed log, without "\n" or a CRLF's "\r",
// redacted, not sanitised.
type Line struct {
	Text string
	// Gap marks the GapNotice line inserted where output was lost because
	// the log rotated away files the follower could not hold open.
	Gap bool
	// Partial marks a preview of a line a stream is still writing: its
	// text so far, after the stream prefix and PartialMark, shown once it
	// has sat PartialIdle (200 ms) without its newline. Previews come last
	// in a batch, and each batch replaces the previews delivered before it
	// (a preview still current is delivered again at the end of the batch
	// that displaced it). They are never in the log, so a view that stores
	// or re-reads text keeps only the other lines.
	Partial bool
}

// GapNotice is the text of a Gap line.
const GapNotice = "[output skipped: the log rotated faster than it was read]"

// maxPinned caps the rotated-away files a follower holds open for a slow
// consumer (each up to 5 MiB of disk, so at most about 320 MiB held while a
// consumer lags): beyond it, output is skipped and a Gap line says so.
// FollowOptions.maxPinned overrides it in tests.
const maxPinned = 64

// Follower follows a job log; read batches from C.
type Follower struct {
	c      chan []Line
	cancel context.CancelFunc
	eof    chan struct{}
	eofMu  sync.Once
	done   chan struct{}
	err    error // set before done is closed

	mu        sync.Mutex
	rotations int
	seen      atomic.Int64 // generations seen so far (tests wait on it)
}

// Follow starts following the log in dir (<dir>/output.log and its rotations
// to output.1.log). It returns at once; the files need not exist yet. It
// stops when ctx is cancelled, on Stop, or after StopAtEOF at the end of the
// data; C is then closed. Every line is redacted again (docs/contract.md "Background jobs: Live, redacted log") by one
// redact.Default() LineRedactor for the whole stream, so a PEM block spanning
// lines or batches is caught. Errors: dir does not exist.
func Follow(ctx context.Context, dir string, opt FollowOptions) (*Follower, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, &fs.PathError{Op: "follow", Path: dir, Err: errors.New("not a directory")}
	}
	if opt.maxPinned <= 0 {
		opt.maxPinned = maxPinned
	}
	if opt.BatchLines <= 0 {
		opt.BatchLines = 1024
	}
	if opt.MaxLineBytes <= 0 {
		opt.MaxLineBytes = DefaultMaxLineBytes
	}
	if opt.PollInterval <= 0 {
		opt.PollInterval = 250 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &Follower{
		c:      make(chan []Line),
		cancel: cancel,
		eof:    make(chan struct{}),
		done:   make(chan struct{}),
	}
	r := &followRun{
		f:    f,
		dir:  dir,
		opt:  opt,
		lr:   redact.Default().NewLineRedactor(),
		wake: make(chan struct{}, 1),
		buf:  make([]byte, 64<<10),
	}
	// Pin the files and read the backlog now, so "the end" is the end when
	// Follow is called.
	if err := r.start(); err != nil {
		r.closeFiles()
		cancel()
		return nil, err
	}
	if !opt.NoNotify {
		if w, err := fsnotify.NewWatcher(); err == nil {
			if err := w.Add(dir); err == nil {
				r.watcher = w
				go r.pumpEvents(ctx)
			} else {
				w.Close()
			}
		}
	}
	go r.run(ctx)
	return f, nil
}

// C returns the channel of line batches. It is closed when the follower
// stops; each batch is non-empty and owned by the receiver.
func (f *Follower) C() <-chan []Line { return f.c }

// StopAtEOF tells the follower the writer has finished (the job ended): it
// delivers every line on disk, including a last line without "\n" and any
// rotation not yet read, then closes C. Keep receiving until C is closed.
func (f *Follower) StopAtEOF() { f.eofMu.Do(func() { close(f.eof) }) }

// Stop stops at once and waits until the follower has released its files;
// C is closed (undelivered lines are dropped). Idempotent.
func (f *Follower) Stop() {
	f.cancel()
	<-f.done
}

// Done is closed when the follower has stopped.
func (f *Follower) Done() <-chan struct{} { return f.done }

// Err returns the error that stopped the follower (a read error), or nil.
// Valid after Done is closed.
func (f *Follower) Err() error {
	select {
	case <-f.done:
		return f.err
	default:
		return nil
	}
}

// Rotations returns how many times the follower moved to a newer file.
func (f *Follower) Rotations() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rotations
}

// generation is one pinned log file.
type generation struct {
	f  *os.File
	fi os.FileInfo
	// gapBefore: a generation between the previous one and this one was
	// lost (rotated away while the follower was at maxPinned, or created and
	// rotated away between two pins — known from output.gen).
	gapBefore bool
	num       int64 // generation number from output.gen, -1 unknown
}

type followRun struct {
	f       *Follower
	dir     string
	opt     FollowOptions
	lr      *redact.LineRedactor
	watcher *fsnotify.Watcher
	wake    chan struct{}

	cur    *generation   // being read; nil until a file exists
	off    int64         // read offset in cur
	pinned []*generation // newer generations, oldest first
	// lastDone is the generation read before cur, kept open while it is
	// output.1.log: an open file's inode cannot be reused by a new file,
	// which would make os.SameFile lie.
	lastDone *generation
	waiting  []*generation // seen but not pinned (at maxPinned), oldest first
	// gapPending: a waiting generation was rotated away; the next pinned
	// one is preceded by a Gap line.
	gapPending bool
	partial    []byte // an unterminated line at the end of cur
	buf        []byte
	// pvShown is the PartialFile content last delivered as previews, ""
	// when the last batch holds none (so a current preview is delivered
	// again after whole lines).
	pvShown string

	batch      []Line
	batchBytes int
}

// pumpEvents turns fsnotify events into non-blocking wakeups; it keeps
// fsnotify's channels drained so its goroutine never blocks.
func (r *followRun) pumpEvents(ctx context.Context) {
	for {
		select {
		case _, ok := <-r.watcher.Events:
			if !ok {
				return
			}
			r.poke()
		case _, ok := <-r.watcher.Errors:
			if !ok {
				return
			}
			r.poke() // e.g. an overflow: a read will find out what changed
		case <-ctx.Done():
			return
		}
	}
}

func (r *followRun) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *followRun) run(ctx context.Context) {
	f := r.f
	defer func() {
		if r.watcher != nil {
			r.watcher.Close()
		}
		r.closeFiles()
		close(f.c)
		close(f.done)
	}()
	tick := time.NewTicker(r.opt.PollInterval)
	defer tick.Stop()
	atEOF := false   // cur has been read to its end; wait for a change
	eofSeen := false // StopAtEOF was seen before the last read
	for {
		if r.batchFull() || atEOF && len(r.batch) > 0 {
			out := r.batch
			if len(out) > r.opt.BatchLines { // a large backlog
				out = out[:r.opt.BatchLines:r.opt.BatchLines]
			}
			select {
			case f.c <- out:
				r.batch = r.batch[len(out):]
				r.batchBytes = 0
				for _, l := range r.batch {
					r.batchBytes += len(l.Text) + 16
				}
				if len(r.batch) == 0 {
					r.batch = nil
				}
			case <-r.wake:
				r.pin()
			case <-tick.C:
				r.pin()
			case <-ctx.Done():
				return
			}
			continue
		}
		if atEOF {
			select {
			case <-r.wake:
			case <-tick.C:
			case <-f.eof:
			case <-ctx.Done():
				return
			}
			atEOF = false
		}
		select {
		case <-ctx.Done():
			return
		default:
		}
		progressed, err := r.step()
		if err != nil {
			f.err = err
			return
		}
		if progressed {
			continue
		}
		// Nothing to read in cur right now.
		select {
		case <-f.eof:
			if !eofSeen {
				// Data may have landed between our last read and
				// StopAtEOF: read once more now that the writer is done.
				eofSeen = true
				continue
			}
			// The writer is done: finish the last line and stop.
			r.flushPartial()
			if len(r.batch) > 0 {
				select {
				case f.c <- r.batch:
				case <-ctx.Done():
				}
			}
			return
		default:
		}
		atEOF = true
	}
}

func (r *followRun) closeFiles() {
	closeGen(r.cur)
	closeGen(r.lastDone)
	for _, g := range append(r.pinned, r.waiting...) {
		g.f.Close()
	}
	r.cur, r.lastDone, r.pinned, r.waiting = nil, nil, nil, nil
}

// start opens the files and queues the backlog.
func (r *followRun) start() error {
	r.pin()
	if len(r.pinned) == 0 {
		return nil
	}
	if r.opt.FromStart {
		r.next()
		return nil
	}
	// Start at the end of the newest file (after its last complete line),
	// with Backlog lines before it.
	newest := r.pinned[len(r.pinned)-1]
	end, err := lastLineEnd(newest.f, newest.fi.Size(), r.opt.MaxLineBytes)
	if err != nil {
		return err
	}
	if r.opt.Backlog > 0 {
		lines, atStart, err := tailFile(newest.f, end, r.opt.Backlog, 0, r.opt.MaxLineBytes, 0)
		if err != nil {
			return err
		}
		if atStart && len(lines) < r.opt.Backlog && len(r.pinned) > 1 {
			older := r.pinned[len(r.pinned)-2]
			ol, _, err := tailFile(older.f, older.fi.Size(), r.opt.Backlog-len(lines), 0, r.opt.MaxLineBytes, 0)
			if err != nil {
				return err
			}
			lines = append(ol, lines...)
		}
		for _, l := range lines {
			r.add(l)
		}
	}
	for _, g := range r.pinned[:len(r.pinned)-1] {
		closeGen(r.lastDone)
		r.lastDone = g // so pin does not take it for a newer file
	}
	r.pinned = r.pinned[len(r.pinned)-1:]
	r.next()
	r.off = end
	return nil
}

// lastLineEnd returns the offset just after the last "\n" of the first size
// bytes of f (0 if none within the last maxLine bytes and the data is
// shorter; the start of the last maxLine-byte piece otherwise).
func lastLineEnd(f io.ReaderAt, size int64, maxLine int) (int64, error) {
	br := backReader{r: f, end: size}
	p, err := br.lastNL(max(0, size-int64(maxLine)), size)
	if err != nil {
		return 0, err
	}
	if p >= 0 {
		return p + 1, nil
	}
	return max(0, size-int64(maxLine)), nil
}

// step pins new generations and reads once from cur. It reports whether it
// made progress (read data or moved to a newer generation). Pinning before
// every read costs a few syscalls per 64 KiB read and keeps the window in
// which two rotations could slip by unseen down to one read.
func (r *followRun) step() (bool, error) {
	r.pin()
	if r.cur == nil {
		if len(r.pinned) == 0 {
			return false, nil
		}
		r.next()
		return true, nil
	}
	// A newer file existed before this read, so the writer had finished cur
	// (it flushes before it renames): reaching EOF now means cur is done.
	final := len(r.pinned) > 0
	n, err := r.cur.f.ReadAt(r.buf, r.off)
	if n > 0 {
		r.off += int64(r.consume(r.buf[:n]))
		return true, nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	if final {
		r.flushPartial() // its unterminated last line, if any
		closeGen(r.lastDone)
		r.lastDone = r.cur
		r.next()
		r.f.mu.Lock()
		r.f.rotations++
		r.f.mu.Unlock()
		return true, nil
	}
	// Truncated in place (not our writer's rotation, but be safe)?
	if st, err := r.cur.f.Stat(); err == nil && st.Size() < r.off {
		r.off = 0
		r.partial = r.partial[:0]
		return true, nil
	}
	return r.preview(), nil
}

// maxPreviewBytes bounds the read of PartialFile: two streams' lines.
const maxPreviewBytes = 2 * (DefaultMaxLine + 64)

// preview is called at the end of cur: it ends the batch with the previews
// of PartialFile when they changed since last delivered (see Line.Partial).
// It reports true when the log grew meanwhile: read on first, the preview
// may be of a line now whole. Not after StopAtEOF: the writer is done.
func (r *followRun) preview() bool {
	select {
	case <-r.f.eof:
		return false
	default:
	}
	var content []byte
	if pf, err := os.Open(filepath.Join(r.dir, PartialFile)); err == nil {
		content, _ = io.ReadAll(io.LimitReader(pf, maxPreviewBytes))
		pf.Close()
	}
	if string(content) == r.pvShown || len(r.partial) > 0 {
		return false
	}
	if st, err := r.cur.f.Stat(); err != nil || st.Size() != r.off {
		return err == nil
	}
	r.dropPreviews()
	r.pvShown = string(content)
	for len(content) > 0 {
		line, rest, _ := bytes.Cut(content, []byte{'\n'})
		content = rest
		if len(line) == 0 {
			continue
		}
		text := bytes.TrimPrefix(line, []byte(redact.StderrPrefix))
		prefix := line[:len(line)-len(text)]
		text = text[:min(len(text), r.opt.MaxLineBytes-len(prefix)-len(PartialMark))]
		// Redacted alone: a preview must not disturb the stream's state.
		text = []byte(redact.Default().String(string(text)))
		l := string(prefix) + PartialMark + string(text)
		r.batch = append(r.batch, Line{Text: l, Partial: true})
		r.batchBytes += len(l) + 16
	}
	return false
}

// dropPreviews removes the previews that end the unsent batch (a line
// follows them now, see Line.Partial) and has a current preview delivered
// again after that line.
func (r *followRun) dropPreviews() {
	r.pvShown = ""
	for n := len(r.batch); n > 0 && r.batch[n-1].Partial; n-- {
		r.batchBytes -= len(r.batch[n-1].Text) + 16
		r.batch = r.batch[:n-1]
	}
}

// next makes the oldest pinned generation current, at offset 0.
func (r *followRun) next() {
	r.cur = r.pinned[0]
	r.pinned = r.pinned[1:]
	r.off = 0
	r.partial = r.partial[:0]
	if r.cur.gapBefore {
		r.dropPreviews()
		r.batch = append(r.batch, Line{Text: GapNotice, Gap: true})
	}
}

// pin opens generations not seen yet, oldest first. A consistent view of
// (output.1.log, output.log) is one where output.1.log is the same file
// before and after output.log was opened: a rotation in between changes it.
func (r *followRun) pin() {
	p1 := filepath.Join(r.dir, RotatedLog)
	p0 := filepath.Join(r.dir, CurrentLog)
	for try := 0; try < 8; try++ {
		g1 := openGen(p1)
		g0 := openGen(p0)
		st, err := os.Stat(p1)
		consistent := g1 == nil && err != nil || g1 != nil && err == nil && os.SameFile(g1.fi, st)
		if !consistent {
			closeGen(g1)
			closeGen(g0)
			continue
		}
		// A generation seen earlier but not pinned (at maxPinned) is lost
		// once it is neither output.1.log nor output.log any more. (Waiting
		// files are held open too, so their inode numbers cannot be reused
		// by newer files and fool os.SameFile; there are at most two.)
		kept := r.waiting[:0]
		for _, w := range r.waiting {
			if g1 != nil && os.SameFile(w.fi, g1.fi) || g0 != nil && os.SameFile(w.fi, g0.fi) {
				kept = append(kept, w)
			} else {
				w.f.Close()
				r.gapPending = true
			}
		}
		r.waiting = kept
		if r.lastDone != nil && !(g1 != nil && os.SameFile(r.lastDone.fi, g1.fi)) {
			closeGen(r.lastDone) // rotated away: it can no longer be seen
			r.lastDone = nil
		}
		r.number(g1, g0)
		for _, g := range []*generation{g1, g0} {
			if g == nil {
				continue
			}
			if k := r.held(g.fi); k != nil {
				if k.num < 0 {
					k.num = g.num // numbered late (output.gen written after we opened it)
				}
				g.f.Close()
				continue
			}
			w := r.takeWaiting(g.fi)
			if w != nil {
				g.f.Close()
				g = w
			} else {
				r.f.seen.Add(1)
			}
			if len(r.pinned) >= r.opt.maxPinned {
				r.waiting = append(r.waiting, g)
				continue
			}
			g.gapBefore, r.gapPending = r.gapPending, false
			if prev := r.newest(); prev != nil && prev.num >= 0 && g.num >= 0 && g.num != prev.num+1 {
				g.gapBefore = true // a whole generation came and went unseen
			}
			r.pinned = append(r.pinned, g)
		}
		return
	}
}

// number sets the generation numbers of a consistent (output.1.log,
// output.log) pair from output.gen, which names one of them; only when one
// of them is new (once per rotation).
func (r *followRun) number(g1, g0 *generation) {
	numbered := func(g *generation) bool {
		if g == nil {
			return true
		}
		k := r.held(g.fi)
		return k != nil && k.num >= 0
	}
	if numbered(g1) && numbered(g0) {
		return
	}
	hist := readGenHistory(r.dir)
	for _, g := range []*generation{g1, g0} {
		if g != nil {
			g.num = -1
		}
	}
	// The newest entry with a file's inode numbers it: an inode reused by a
	// newer file has a later entry (and files the follower holds cannot be
	// reused at all).
	numberOf := func(g *generation) int64 {
		if g == nil {
			return -1
		}
		i, ok := inode(g.fi)
		if !ok {
			return -1
		}
		for k := len(hist) - 1; k >= 0; k-- {
			if hist[k].ino == i {
				return hist[k].gen
			}
		}
		return -1
	}
	n1, n0 := numberOf(g1), numberOf(g0)
	switch {
	case n0 >= 0:
		g0.num = n0
		if g1 != nil {
			// A consistent pair is adjacent: output.1.log is the one
			// before output.log.
			g1.num = n0 - 1
		}
	case n1 >= 0:
		g1.num = n1
		if g0 != nil {
			g0.num = n1 + 1
		}
	}
	// Neither in the history (written just after this snapshot, or gone):
	// the numbers stay unknown and no gap is claimed.
}

// newest returns the newest generation already seen (pinned, current or
// just finished), nil if none.
func (r *followRun) newest() *generation {
	switch {
	case len(r.pinned) > 0:
		return r.pinned[len(r.pinned)-1]
	case r.cur != nil:
		return r.cur
	}
	return r.lastDone
}

// takeWaiting removes and returns the waiting generation that is fi.
func (r *followRun) takeWaiting(fi os.FileInfo) *generation {
	for k, w := range r.waiting {
		if os.SameFile(w.fi, fi) {
			r.waiting = append(r.waiting[:k], r.waiting[k+1:]...)
			return w
		}
	}
	return nil
}

// held returns the generation the follower holds (current, pinned or just
// finished) that is fi, or nil.
func (r *followRun) held(fi os.FileInfo) *generation {
	if r.cur != nil && os.SameFile(r.cur.fi, fi) {
		return r.cur
	}
	if r.lastDone != nil && os.SameFile(r.lastDone.fi, fi) {
		return r.lastDone
	}
	for _, g := range r.pinned {
		if os.SameFile(g.fi, fi) {
			return g
		}
	}
	return nil
}

func openGen(path string) *generation {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil
	}
	return &generation{f: f, fi: fi, num: -1}
}

func closeGen(g *generation) {
	if g != nil {
		g.f.Close()
	}
}

// consume splits data into lines until the batch is full; the tail without
// "\n" waits in partial. It returns the bytes used (at least one line's, or
// all of data); the caller reads the rest again later.
func (r *followRun) consume(data []byte) int {
	used := 0
	for len(data) > 0 {
		if used > 0 && r.batchFull() {
			return used
		}
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			r.partial = append(r.partial, data...)
			for len(r.partial) > r.opt.MaxLineBytes {
				r.add(r.partial[:r.opt.MaxLineBytes])
				r.partial = append(r.partial[:0], r.partial[r.opt.MaxLineBytes:]...)
			}
			return used + len(data)
		}
		line := data[:i]
		if len(r.partial) > 0 {
			r.partial = append(r.partial, line...)
			line = r.partial
		}
		for len(line) > r.opt.MaxLineBytes {
			r.add(line[:r.opt.MaxLineBytes])
			line = line[r.opt.MaxLineBytes:]
		}
		r.add(line)
		r.partial = r.partial[:0]
		data = data[i+1:]
		used += i + 1
	}
	return used
}

// batchFull: the batch is ready to be sent whatever else is available.
func (r *followRun) batchFull() bool {
	return len(r.batch) >= r.opt.BatchLines || r.batchBytes >= 1<<20
}

func (r *followRun) flushPartial() {
	if len(r.partial) > 0 {
		r.add(r.partial)
		r.partial = r.partial[:0]
	}
}

// add appends one line (copied) to the batch.
func (r *followRun) add(line []byte) {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	line = r.lr.Line(line)
	r.dropPreviews()
	r.batch = append(r.batch, Line{Text: string(line)})
	r.batchBytes += len(line) + 16
}
