package tailer

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// File names inside a job's log directory (docs/contract.md "Files", docs/contract.md "Background jobs: Rotation").
const (
	// CurrentLog is the file being written: <dir>/output.log.
	CurrentLog = "output.log"
	// RotatedLog is the previous generation: <dir>/output.1.log. Rotation
	// renames CurrentLog onto it, replacing the older one.
	RotatedLog = "output.1.log"
	// GenFile records "<generation> <inode>\n" of the last genHistory log
	// files, oldest first, so that a follower which was starved long enough
	// to miss a whole generation can number every file it sees by inode and
	// tell (and say so) instead of losing lines silently. Written atomically
	// (temp file + rename) at open and after each rotation; advisory only.
	GenFile = "output.gen"
	// genHistory is how many generations GenFile remembers: a follower
	// starved for fewer rotations than this always knows what it missed.
	genHistory = 32
	// PartialFile holds the line each stream is still writing, as a live
	// view previews it (docs/contract.md "Background jobs: Live, redacted log"; issue 26 item 13): one line per stream
	// with an unfinished line, stdout's first, each as the log would hold
	// it (prefix + redacted text, without PartialMark). The log itself
	// holds whole lines only. Replaced atomically (temp file + rename,
	// mode 0600) by RotatingWriter.SetPartial, removed when no stream has
	// an unfinished line and when the writer closes.
	PartialFile = "output.partial"
)

// Defaults for WriterOptions (docs/contract.md "Background jobs: Live, redacted log", docs/contract.md "Background jobs: Rotation").
const (
	DefaultMaxBytes = 5 << 20  // rotate at 5 MiB
	DefaultMaxLine  = 64 << 10 // split lines longer than 64 KiB
)

// WriterOptions configures a RotatingWriter. Zero values select the defaults.
type WriterOptions struct {
	// MaxBytes is the rotation threshold in bytes (default 5 MiB). A line is
	// never split across files: the file rotates before the line that would
	// take it past MaxBytes.
	MaxBytes int64
	// MaxLine is the longest line written, in bytes without the newline
	// (default 64 KiB). Longer lines are split into several lines.
	MaxLine int
	// BufferSize is the user-space buffer in bytes (default 64 KiB). Lines
	// reach the file on Flush, when the buffer fills, and on rotation/Close.
	BufferSize int
}

// RotatingWriter appends lines to <dir>/output.log and rotates it to
// <dir>/output.1.log when it reaches MaxBytes (docs/contract.md "Background jobs: Live, redacted log"). It is the generic
// log writer the job output pump (Pump) writes through; it does NOT redact —
// the caller redacts each line first (one redact.LineRedactor per stream).
//
// Semantics:
//   - WriteLine buffers; Flush pushes buffered lines to the kernel. The pump
//     should Flush after each read from the child's pipes, so a kill -9 of the
//     supervisor loses nothing that was flushed.
//   - Rotation: flush, rename output.log → output.1.log, create a new
//     output.log (mode 0600; created under a temporary name and renamed into
//     place after output.gen has recorded its generation number, which lets
//     Follow detect generations it never saw). A failed rename is not fatal:
//     writing continues on the current file and rotation is retried after
//     another MaxBytes; the error is reported by RotateErr.
//   - A failed write (or failed creation of the new file after a rename) is
//     sticky: every later call returns the same error without writing, so the
//     caller can keep draining the child's pipes and record capture_error.
//
// Safe for concurrent use (stdout and stderr pumps may share one writer);
// each WriteLine is atomic with respect to other WriteLine calls.
type RotatingWriter struct {
	mu        sync.Mutex
	dir       string
	opt       WriterOptions
	f         *os.File
	bw        *bufio.Writer
	size      int64 // bytes in the current file, including buffered ones
	rotateAt  int64 // size at which the next rotation is attempted
	err       error // sticky write error
	rotateErr error // last failed rotation (not fatal)
	rotations int
	gen       int64 // generation number of the current file
	// partial is each stream's previewed line (SetPartial), keyed by its
	// prefix ("" or redact.StderrPrefix); what PartialFile holds.
	partial map[string][]byte
	hist    []genEntry // GenFile's lines, oldest first (at most genHistory)
	// beforeRotate, if set (tests only), runs before each rotation with the
	// number of rotations done so far.
	beforeRotate func(rotations int)
}

// OpenWriter creates dir (mode 0700) if needed and opens <dir>/output.log for
// appending (mode 0600), creating it, so the log exists before the command
// starts (docs/contract.md "Background jobs: Live, redacted log"). An existing output.log is appended to.
func OpenWriter(dir string, opt WriterOptions) (*RotatingWriter, error) {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if opt.MaxLine <= 0 {
		opt.MaxLine = DefaultMaxLine
	}
	if opt.BufferSize <= 0 {
		opt.BufferSize = 64 << 10
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create log directory: %w", err)
	}
	w := &RotatingWriter{dir: dir, opt: opt}
	// A preview left by a supervisor that died mid-line is stale.
	os.Remove(filepath.Join(dir, PartialFile))
	if h := readGenHistory(dir); len(h) > 0 {
		// A supervisor reopening its log keeps the numbering and history.
		w.gen, w.hist = h[len(h)-1].gen, h
	}
	if err := w.open(); err != nil {
		return nil, err
	}
	w.rotateAt = opt.MaxBytes
	return w, nil
}

// genEntry is one line of GenFile: a generation number and its file's inode.
type genEntry struct {
	gen int64
	ino uint64
}

// writeGen records generation w.gen for file st in GenFile, keeping the last
// genHistory entries (best effort).
func (w *RotatingWriter) writeGen(st os.FileInfo) {
	ino, ok := inode(st)
	if !ok {
		return
	}
	w.hist = append(w.hist, genEntry{w.gen, ino})
	if n := len(w.hist) - genHistory; n > 0 {
		w.hist = append(w.hist[:0], w.hist[n:]...)
	}
	var b []byte
	for _, e := range w.hist {
		b = fmt.Appendf(b, "%d %d\n", e.gen, e.ino)
	}
	tmp := filepath.Join(w.dir, GenFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return
	}
	if os.Rename(tmp, filepath.Join(w.dir, GenFile)) != nil {
		os.Remove(tmp)
	}
}

// readGenHistory parses <dir>/output.gen: its entries, oldest first; nil
// when it is missing or unreadable (a malformed line ends the list).
func readGenHistory(dir string) []genEntry {
	b, err := os.ReadFile(filepath.Join(dir, GenFile))
	if err != nil {
		return nil
	}
	var h []genEntry
	for _, line := range strings.Split(string(b), "\n") {
		var e genEntry
		if _, err := fmt.Sscanf(line, "%d %d", &e.gen, &e.ino); err != nil {
			break
		}
		h = append(h, e)
	}
	return h
}

// readGenFile returns the newest entry of <dir>/output.gen.
func readGenFile(dir string) (gen int64, ino uint64, ok bool) {
	h := readGenHistory(dir)
	if len(h) == 0 {
		return 0, 0, false
	}
	return h[len(h)-1].gen, h[len(h)-1].ino, true
}

// inode returns the inode number of a file (Unix).
func inode(fi os.FileInfo) (uint64, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), true
	}
	return 0, false
}

// open appends to <dir>/output.log, or creates it: under a temporary name
// first, so that output.gen names it before any follower can see it.
func (w *RotatingWriter) open() error {
	path := filepath.Join(w.dir, CurrentLog)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	created := false
	if errors.Is(err, fs.ErrNotExist) {
		tmp := path + ".new"
		os.Remove(tmp) // left by a crash
		if f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600); err == nil {
			if st, serr := f.Stat(); serr == nil {
				w.writeGen(st)
			}
			if err = os.Rename(tmp, path); err != nil {
				f.Close()
				os.Remove(tmp)
			}
			created = true
		}
	}
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat log: %w", err)
	}
	if !created {
		w.writeGen(st)
	}
	w.f = f
	w.size = st.Size()
	if w.bw == nil {
		w.bw = bufio.NewWriterSize(f, w.opt.BufferSize)
	} else {
		w.bw.Reset(f)
	}
	return nil
}

// Path returns <dir>/output.log.
func (w *RotatingWriter) Path() string { return filepath.Join(w.dir, CurrentLog) }

// WriteLine appends line plus "\n". line must not contain '\n' (a trailing
// one is dropped; inner ones are written as they are, i.e. become several
// lines). Lines longer than MaxLine are split into MaxLine-sized lines.
// Returns the sticky write error, if any.
func (w *RotatingWriter) WriteLine(line []byte) error {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	for {
		chunk := line
		if len(chunk) > w.opt.MaxLine {
			chunk = chunk[:w.opt.MaxLine]
		}
		if err := w.writeOne(chunk); err != nil {
			return err
		}
		line = line[len(chunk):]
		if len(line) == 0 {
			return nil
		}
	}
}

func (w *RotatingWriter) writeOne(chunk []byte) error {
	n := int64(len(chunk) + 1)
	if w.size > 0 && w.size+n > w.rotateAt {
		w.rotate()
		if w.err != nil {
			return w.err
		}
	}
	if _, err := w.bw.Write(chunk); err != nil {
		return w.fail(err)
	}
	if err := w.bw.WriteByte('\n'); err != nil {
		return w.fail(err)
	}
	w.size += n
	return nil
}

func (w *RotatingWriter) fail(err error) error {
	w.err = fmt.Errorf("write log: %w", err)
	return w.err
}

// rotate is called with mu held.
func (w *RotatingWriter) rotate() {
	if w.beforeRotate != nil {
		w.beforeRotate(w.rotations)
	}
	if err := w.bw.Flush(); err != nil {
		w.fail(err)
		return
	}
	cur := filepath.Join(w.dir, CurrentLog)
	if err := os.Rename(cur, filepath.Join(w.dir, RotatedLog)); err != nil {
		// Not fatal (docs/contract.md "Background jobs: Rotation"): keep writing here, retry at the next threshold.
		w.rotateErr = fmt.Errorf("rotate log: %w", err)
		w.rotateAt = w.size + w.opt.MaxBytes
		return
	}
	old := w.f
	w.f = nil
	w.gen++
	if err := w.open(); err != nil {
		// The renamed file is complete; we have nowhere to write next.
		old.Close()
		w.err = err
		return
	}
	old.Close()
	w.rotations++
	w.rotateErr = nil
	w.rotateAt = w.opt.MaxBytes
}

// SetPartial sets the preview of the line the stream with prefix ("" or
// redact.StderrPrefix) is still writing: line is that line so far, prefix
// included, already redacted; nil or empty removes it. PartialFile is
// rewritten atomically with every stream's preview (stdout's first), or
// removed when none is left. Call it with nil BEFORE writing any of the
// line to the log: a follower that reads the log to its end and then finds
// a preview knows the log did not yet hold the line it previews.
// Best effort: a preview that cannot be written is not shown, and capture
// goes on (the log is what counts).
func (w *RotatingWriter) SetPartial(prefix string, line []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(line) == 0 {
		if _, ok := w.partial[prefix]; !ok {
			return
		}
		delete(w.partial, prefix)
	} else {
		if w.partial == nil {
			w.partial = make(map[string][]byte, 2)
		}
		w.partial[prefix] = append(w.partial[prefix][:0], line...)
	}
	w.writePartial()
}

// writePartial writes PartialFile from w.partial (mu held).
func (w *RotatingWriter) writePartial() {
	path := filepath.Join(w.dir, PartialFile)
	if len(w.partial) == 0 {
		os.Remove(path)
		return
	}
	var b []byte
	for _, k := range slices.Sorted(maps.Keys(w.partial)) { // "" sorts first
		b = append(append(b, w.partial[k]...), '\n')
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		os.Remove(tmp)
		return
	}
	if os.Rename(tmp, path) != nil {
		os.Remove(tmp)
	}
}

// Flush writes buffered lines to the file. Returns the sticky write error.
func (w *RotatingWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		return w.fail(err)
	}
	return nil
}

// Err returns the sticky write error, or nil (also after a successful
// Close, although WriteLine then fails with "log writer closed").
func (w *RotatingWriter) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == errClosed {
		return nil
	}
	return w.err
}

// RotateErr returns the last rotation failure since the last successful
// rotation (not fatal: capture continued on the current file), or nil.
func (w *RotatingWriter) RotateErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rotateErr
}

// Rotations returns how many rotations succeeded.
func (w *RotatingWriter) Rotations() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rotations
}

// Close flushes and closes the file. It returns the sticky write error, if
// any, or the flush/close error. Close is idempotent.
func (w *RotatingWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		clear(w.partial) // the streams have ended: no line is unfinished
		w.writePartial()
	}
	if w.f == nil {
		if w.err == errClosed {
			return nil
		}
		return w.err
	}
	ferr := error(nil)
	if w.err == nil {
		ferr = w.bw.Flush()
	}
	cerr := w.f.Close()
	w.f = nil
	if w.err != nil {
		return w.err
	}
	if ferr == nil {
		ferr = cerr
	}
	if ferr != nil {
		w.err = fmt.Errorf("close log: %w", ferr)
		return w.err
	}
	w.err = errClosed
	return nil
}

var errClosed = errors.New("log writer closed")
