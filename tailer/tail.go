// Package tailer reads job output logs on disk (docs/architecture.md, docs/contract.md "Background jobs: Live, redacted log"–J5): bounded
// reads from the end (Tail), live follow across rotation (Follow), the
// rotating writer the supervisor's pump writes through (RotatingWriter), the
// output pump that redacts and writes a command's pipes (Pump), and the
// notification tail (TailChars). Sanitising for display is package
// termtext's. It uses nothing of clawpit's but packages redact and termtext;
// core calls it.
package tailer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawpit/clawpit/redact"
)

// Defaults for TailOptions.
const (
	DefaultTailLines = 200
	// DefaultMaxLineBytes caps one line of a tail; a longer line is split
	// (from its end), like the writer splits lines longer than 64 KiB (J2).
	DefaultMaxLineBytes = DefaultMaxLine
)

// tailChunk is the size of each backward read, in bytes (TailOptions.chunk
// overrides it in tests).
const tailChunk = 32 << 10

// RotatedNotice is printed above a tail that reached the start of the rotated
// log output.1.log (docs/contract.md "Background jobs: Tail and follow"): anything written before it was discarded by a
// later rotation (the log keeps about two generations, J3).
const RotatedNotice = "[earlier output rotated to " + RotatedLog + " and beyond: this is the oldest line kept]"

// TailOptions selects how much of the end of a log to read.
type TailOptions struct {
	// Lines is the number of lines from the end. Default 200 when both Lines
	// and Bytes are zero.
	Lines int
	// Bytes, when positive, limits the tail to the last Bytes bytes of the
	// log (output.1.log + output.log); the first line may then be partial,
	// as with tail -c. When both are set, the tighter limit wins.
	Bytes int64
	// MaxLineBytes caps one line (default 64 KiB); longer lines are split.
	// It bounds memory and reading cost: a tail reads at most about
	// Lines × MaxLineBytes bytes whatever the file holds.
	MaxLineBytes int

	chunk int // backward read size in bytes; 0 = tailChunk (tests use tiny reads)
}

// TailResult is the end of a job's log.
type TailResult struct {
	// Lines are oldest first, without "\n" or a CRLF's "\r", redacted, NOT
	// sanitised (the console sanitises where it displays).
	Lines []string
	// Rotated is set when the tail reached the start of output.1.log (or the
	// start of output.log while its predecessor could not be read
	// consistently): earlier output, if any, was rotated away.
	Rotated bool
	// Notice is RotatedNotice when Rotated, else "".
	Notice string
	// Missing is set when output.log was absent (mid-rotation) and only
	// output.1.log was read.
	Missing bool
}

// Text returns the notice (if any) and the lines, each ending in "\n".
func (r TailResult) Text() string {
	var sb strings.Builder
	if r.Notice != "" {
		sb.WriteString(r.Notice)
		sb.WriteByte('\n')
	}
	for _, l := range r.Lines {
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// Tail reads the last lines of the log in dir (<dir>/output.log, continuing
// into <dir>/output.1.log when output.log holds fewer lines than asked),
// reading backwards from the end in fixed-size chunks: the cost depends on
// the size of the tail, not of the file (docs/contract.md "Background jobs: Tail and follow", bench/README.md P4). If output.log is
// absent (a rotation in progress) it reads output.1.log. A rotation that
// races the read is detected (same file under both names) and the read is
// retried. The result is redacted again as one block (J4).
//
// Errors: an fs.ErrNotExist error when neither file exists; read errors.
func Tail(dir string, opt TailOptions) (TailResult, error) {
	if opt.Lines <= 0 && opt.Bytes <= 0 {
		opt.Lines = DefaultTailLines
	}
	if opt.MaxLineBytes <= 0 {
		opt.MaxLineBytes = DefaultMaxLineBytes
	}
	var res TailResult
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var raced bool
		res, raced, err = tailOnce(dir, opt)
		if err != nil || !raced {
			break
		}
	}
	if err != nil {
		return TailResult{}, err
	}
	if len(res.Lines) > 0 {
		block := redact.Default().Block(strings.Join(res.Lines, "\n"))
		res.Lines = strings.Split(block, "\n")
	}
	if res.Rotated {
		res.Notice = RotatedNotice
	}
	return res, nil
}

// tailOnce reads the tail; raced reports a rotation between the two opens
// (the caller retries; after three races the result is still consistent,
// only without the predecessor).
func tailOnce(dir string, opt TailOptions) (res TailResult, raced bool, err error) {
	cur, err := os.Open(filepath.Join(dir, CurrentLog))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, false, err
	}
	want := opt.Lines
	if want <= 0 {
		want = -1 // unlimited: Bytes decides
	}
	budget := opt.Bytes
	var curLines [][]byte
	var curInfo os.FileInfo
	if cur != nil {
		defer cur.Close()
		if curInfo, err = cur.Stat(); err != nil {
			return res, false, err
		}
		var atStart bool
		curLines, atStart, err = tailFile(cur, curInfo.Size(), want, budget, opt.MaxLineBytes, opt.chunk)
		if err != nil {
			return res, false, fmt.Errorf("tail %s: %w", CurrentLog, err)
		}
		if !atStart || len(curLines) == want {
			res.Lines = toStrings(nil, curLines)
			return res, false, nil
		}
		if want > 0 {
			want -= len(curLines)
		}
		if budget > 0 {
			budget -= curInfo.Size()
			if budget <= 0 {
				res.Lines = toStrings(nil, curLines)
				return res, false, nil
			}
		}
	} else {
		res.Missing = true
	}
	old, err := os.Open(filepath.Join(dir, RotatedLog))
	if errors.Is(err, fs.ErrNotExist) {
		if cur == nil {
			return res, false, fmt.Errorf("no log in %s: %w", dir, fs.ErrNotExist)
		}
		// Never rotated: the start of output.log is the start of the output.
		res.Lines = toStrings(nil, curLines)
		return res, false, nil
	}
	if err != nil {
		return res, false, err
	}
	defer old.Close()
	oldInfo, err := old.Stat()
	if err != nil {
		return res, false, err
	}
	if curInfo != nil && os.SameFile(curInfo, oldInfo) {
		// output.log was rotated between our two opens: what we read as
		// output.log is now output.1.log, and its predecessor is gone.
		res.Lines = toStrings(nil, curLines)
		res.Rotated = true
		return res, true, nil
	}
	oldLines, atStart, err := tailFile(old, oldInfo.Size(), want, budget, opt.MaxLineBytes, opt.chunk)
	if err != nil {
		return res, false, fmt.Errorf("tail %s: %w", RotatedLog, err)
	}
	res.Rotated = atStart && len(oldLines) != want && (budget <= 0 || budget > oldInfo.Size())
	res.Lines = toStrings(toStrings(nil, oldLines), curLines)
	return res, false, nil
}

func toStrings(dst []string, lines [][]byte) []string {
	for _, l := range lines {
		dst = append(dst, string(l))
	}
	return dst
}

// tailFile returns the last want lines (want < 0: no line limit) of the first
// size bytes of r, taking at most budget bytes (budget <= 0: no limit), lines
// longer than maxLine split from their end. atStart reports that the lines
// begin at offset 0 (nothing earlier in this file). A final line without
// "\n" counts; a CRLF's "\r" is removed. Reads go backwards in tailChunk
// pieces; the bytes read are at most the tail plus one chunk.
func tailFile(r io.ReaderAt, size int64, want int, budget int64, maxLine, chunk int) (lines [][]byte, atStart bool, err error) {
	if size == 0 {
		return nil, true, nil
	}
	lo := int64(0) // nothing before lo may be returned
	if budget > 0 && budget < size {
		lo = size - budget
	}
	br := backReader{r: r, end: size, chunk: chunk}
	lineEnd := size
	last, err := br.byteAt(size - 1)
	if err != nil {
		return nil, false, err
	}
	if last == '\n' {
		lineEnd = size - 1 // the final newline ends the last line
	}
	from := lineEnd    // start of the earliest line taken
	var bounds []int64 // [start, end) of each line, newest first
	for want < 0 || len(bounds)/2 < want {
		if lineEnd <= lo && lo > 0 {
			break // only the final "\n" is inside the byte budget
		}
		// The line ending at lineEnd starts after the last '\n' before it,
		// searched no further back than lo and than maxLine bytes of content.
		p, err := br.lastNL(max(lo, lineEnd-int64(maxLine)-1), lineEnd)
		if err != nil {
			return nil, false, err
		}
		next := int64(-1) // end of the line before, -1: none
		var start int64
		switch floor := lineEnd - int64(maxLine); {
		case p >= 0:
			start = p + 1
			if p > lo {
				next = p
			} else if p == 0 {
				// The file starts with "\n": an empty first line follows.
				bounds = append(bounds, start, lineEnd)
				start, lineEnd = 0, 0
			}
		case floor > lo:
			start, next = floor, floor // longer than maxLine: split here
		default:
			start = lo // the byte budget or the file start cuts the line
		}
		bounds = append(bounds, start, lineEnd)
		from = start
		if next < 0 {
			break
		}
		lineEnd = next
	}
	if len(bounds)/2 > want && want >= 0 {
		// The empty first line above may exceed want by one.
		bounds = bounds[:2*want]
		from = bounds[len(bounds)-2]
	}
	atStart = from == 0
	data, err := br.bytes(from, size)
	if err != nil {
		return nil, false, err
	}
	lines = make([][]byte, len(bounds)/2)
	for k := 0; k < len(bounds); k += 2 {
		l := data[bounds[k]-from : bounds[k+1]-from]
		l = bytes.TrimSuffix(l, []byte{'\r'})
		lines[len(lines)-1-k/2] = l
	}
	return lines, atStart, nil
}

// backReader reads a file backwards in chunks and keeps what it read, so the
// tail is assembled with one copy at the end.
type backReader struct {
	r      io.ReaderAt
	end    int64    // size of the readable region
	start  int64    // chunks cover [start, end)
	chunk  int      // read size in bytes; 0 = tailChunk
	chunks [][]byte // newest (highest offset) first
}

// fill reads chunks until start <= off.
func (br *backReader) fill(off int64) error {
	if len(br.chunks) == 0 {
		br.start = br.end
	}
	for br.start > off {
		n := int64(tailChunk)
		if br.chunk > 0 {
			n = int64(br.chunk)
		}
		if n > br.start {
			n = br.start
		}
		buf := make([]byte, n)
		if _, err := br.r.ReadAt(buf, br.start-n); err != nil && !(errors.Is(err, io.EOF)) {
			return err
		}
		br.chunks = append(br.chunks, buf)
		br.start -= n
	}
	return nil
}

func (br *backReader) byteAt(off int64) (byte, error) {
	if err := br.fill(off); err != nil {
		return 0, err
	}
	c, k := br.locate(off)
	return br.chunks[c][k], nil
}

// locate maps an offset in [start, end) to (chunk index, index in chunk).
func (br *backReader) locate(off int64) (int, int64) {
	hi := br.end
	for c, ch := range br.chunks {
		lo := hi - int64(len(ch))
		if off >= lo {
			return c, off - lo
		}
		hi = lo
	}
	panic("tailer: offset outside the read region")
}

// lastNL returns the offset of the last '\n' in [lo, hi), or -1.
func (br *backReader) lastNL(lo, hi int64) (int64, error) {
	if lo >= hi {
		return -1, nil
	}
	if err := br.fill(lo); err != nil {
		return -1, err
	}
	chHi := br.end
	for _, ch := range br.chunks {
		chLo := chHi - int64(len(ch))
		if chLo < hi && chHi > lo {
			a, b := max(lo, chLo)-chLo, min(hi, chHi)-chLo
			if k := bytes.LastIndexByte(ch[a:b], '\n'); k >= 0 {
				return chLo + a + int64(k), nil
			}
		}
		if chLo <= lo {
			break
		}
		chHi = chLo
	}
	return -1, nil
}

// bytes returns a copy of [lo, hi).
func (br *backReader) bytes(lo, hi int64) ([]byte, error) {
	if err := br.fill(lo); err != nil {
		return nil, err
	}
	out := make([]byte, hi-lo)
	chHi := br.end
	for _, ch := range br.chunks {
		chLo := chHi - int64(len(ch))
		if chLo < hi && chHi > lo {
			a, b := max(lo, chLo), min(hi, chHi)
			copy(out[a-lo:], ch[a-chLo:b-chLo])
		}
		if chLo <= lo {
			break
		}
		chHi = chLo
	}
	return out, nil
}
