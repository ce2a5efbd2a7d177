// Package spool is a small on-disk queue of records that could not be
// applied at once (a Claude Code hook event arriving while the registry is
// write-locked): one file per record in a 0700 directory, applied later in
// order by whoever folds it (the next hook, the daemon, the console).
//
// Appending never blocks on a folder. Folding takes an exclusive lock on the
// directory (flock on its .lock file, released by the kernel if the folder
// dies), so two folders never apply the same record; a record is deleted
// only after its apply returned, and the apply itself must be idempotent
// across a crash between its commit and the delete (core.Registry.ApplyOnce
// records each key in the same transaction).
package spool

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Bounds of a spool (Limits' defaults): at most 1000 records and 32 MiB in
// all. One record is a hook payload (at most 1 MiB) and a little more.
const (
	DefaultMaxEntries = 1000
	DefaultMaxBytes   = 32 << 20
)

// ErrFull is returned by Append when the spool holds MaxEntries records or
// the new one would take it past MaxBytes; the record is not stored. A
// caller that then gives the record up counts it with NoteDropped.
var ErrFull = errors.New("hook spool is full")

const (
	suffix     = ".rec"
	tmpPrefix  = ".tmp-"
	lockName   = ".lock"
	dropName   = "dropped"      // one byte appended per record refused (ErrFull)
	dropClaim  = "dropped.fold" // the drop note a folder took
	staleTmp   = time.Minute    // a temporary file this old is an appender that died
	pollPeriod = 10 * time.Millisecond
)

// Spool is a spool directory. The zero Limits take the defaults; Now (nil:
// time.Now) names records, so records sort in the order they were appended.
type Spool struct {
	Dir        string
	MaxEntries int   // default DefaultMaxEntries
	MaxBytes   int64 // default DefaultMaxBytes
	Now        func() time.Time
}

// Entry is one record handed to a fold.
type Entry struct {
	Key  string // unique and stable: the file name without its suffix
	Data []byte
}

// DropError marks an apply error that is the record's own fault (it can
// never apply): the fold deletes the record and goes on.
type DropError struct{ Err error }

func (e *DropError) Error() string { return e.Err.Error() }
func (e *DropError) Unwrap() error { return e.Err }

// Drop wraps err as a DropError.
func Drop(err error) error { return &DropError{Err: err} }

func (s *Spool) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Spool) limits() (int, int64) {
	n, b := s.MaxEntries, s.MaxBytes
	if n <= 0 {
		n = DefaultMaxEntries
	}
	if b <= 0 {
		b = DefaultMaxBytes
	}
	return n, b
}

// ensureDir creates the directory 0700, or checks an existing one is a
// directory of this user and tightens its mode to 0700.
func (s *Spool) ensureDir() error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("create hook spool %s: %w", s.Dir, err)
	}
	fi, err := os.Lstat(s.Dir)
	if err != nil {
		return fmt.Errorf("hook spool %s: %w", s.Dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("hook spool %s is not a directory", s.Dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("hook spool %s belongs to uid %d, not this user", s.Dir, st.Uid)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(s.Dir, 0o700); err != nil {
			return fmt.Errorf("hook spool %s: %w", s.Dir, err)
		}
	}
	return nil
}

// Append stores data as the newest record (file 0600, written whole to a
// temporary name and linked into place, so a folder never sees half of it)
// and returns its key. Errors: ErrFull when the spool is at its bounds; a
// wrapped I/O error.
func (s *Spool) Append(data []byte) (string, error) {
	if err := s.ensureDir(); err != nil {
		return "", err
	}
	maxN, maxB := s.limits()
	recs, total, err := s.list()
	if err != nil {
		return "", err
	}
	if len(recs) >= maxN || total+int64(len(data)) > maxB {
		return "", fmt.Errorf("%w (%d records, %d bytes; at most %d and %d bytes)", ErrFull, len(recs), total, maxN, maxB)
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("hook spool: %w", err)
	}
	key := fmt.Sprintf("%020d-%s", s.now().UnixNano(), hex.EncodeToString(rnd[:]))
	tmp := filepath.Join(s.Dir, tmpPrefix+key)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("hook spool: %w", err)
	}
	defer os.Remove(tmp)
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", fmt.Errorf("hook spool: write %s: %w", tmp, werr)
	}
	// link, unlike rename, never replaces an existing record.
	if err := os.Link(tmp, filepath.Join(s.Dir, key+suffix)); err != nil {
		return "", fmt.Errorf("hook spool: %w", err)
	}
	return key, nil
}

// list returns the records' keys in order and their total size.
func (s *Spool) list() ([]string, int64, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	} else if err != nil {
		return nil, 0, fmt.Errorf("read hook spool %s: %w", s.Dir, err)
	}
	var keys []string
	var total int64
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, tmpPrefix) {
			if fi, err := e.Info(); err == nil && s.now().Sub(fi.ModTime()) > staleTmp {
				os.Remove(filepath.Join(s.Dir, name))
			}
			continue
		}
		if !strings.HasSuffix(name, suffix) || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil {
			total += fi.Size()
		}
		keys = append(keys, strings.TrimSuffix(name, suffix))
	}
	slices.Sort(keys)
	return keys, total, nil
}

// Len is the number of records spooled now.
func (s *Spool) Len() (int, error) {
	keys, _, err := s.list()
	return len(keys), err
}

// NoteDropped counts one record given up (ErrFull) in the drop note, which
// the next Fold hands to its dropped callback: one byte appended (O_APPEND,
// so concurrent callers never lose a count).
func (s *Spool) NoteDropped() {
	if s.ensureDir() != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, dropName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	f.Write([]byte{'.'})
	f.Close()
}

// DropNote is how many records were given up since the last fold took the
// note (a note a dead folder had taken included).
func (s *Spool) DropNote() (int, error) {
	n := 0
	for _, name := range []string{dropName, dropClaim} {
		fi, err := os.Stat(filepath.Join(s.Dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return n, fmt.Errorf("hook spool drop note: %w", err)
		}
		n += int(fi.Size())
	}
	return n, nil
}

// OwnResult says what became of a fold's own record (Own).
type OwnResult int

const (
	OwnNone    OwnResult = iota // no own record
	OwnApplied                  // applied directly, after every spooled one
	OwnSpooled                  // appended to the spool, to be folded later
	OwnRefused                  // its Apply failed with a DropError: neither applied nor spooled
	OwnLost                     // not spooled either: the spool was full (counted with NoteDropped) or cannot be written
)

// Own is the folder's own record (a hook's event): applied directly once
// every spooled record is folded, still holding the lock, so it lands after
// the records before it; spooled instead (under the lock too) when the fold
// stops or Apply fails other than with a DropError.
type Own struct {
	Apply func(ctx context.Context) error
	Data  []byte // the record to spool instead
}

// Report says what a fold did.
type Report struct {
	Applied int       // spooled records applied and deleted
	Dropped []string  // spooled records whose apply failed with a DropError, with the reason
	Own     OwnResult // what became of the own record
	OwnErr  error     // why it was not applied (OwnRefused, OwnSpooled, OwnLost)
}

// Fold applies the spooled records oldest first, each through apply, and
// deletes each once apply returned nil or a DropError (listed in the
// report). Any other error stops the fold with the record kept, and is
// returned: the registry is busy or out of reach, a later fold goes on. A
// record appended during the fold is folded too. dropped (nil: none) is told
// how many records were given up since the last fold (NoteDropped), before
// the records; the note is cleared when it returns nil. own (nil: none) is
// then applied or spooled, see Own and Report.Own.
//
// One folder at a time: Fold waits for the spool's lock until ctx ends (then
// it returns ctx's error, nothing applied, own spooled without the lock).
// Records are applied in order because a record is deleted only after its
// apply, and no one else applies meanwhile.
func (s *Spool) Fold(ctx context.Context, apply func(context.Context, Entry) error, dropped func(context.Context, int) error, own *Own) (Report, error) {
	var rep Report
	if _, err := os.Stat(s.Dir); errors.Is(err, fs.ErrNotExist) && own == nil {
		return rep, nil // nothing was ever spooled
	}
	if err := s.ensureDir(); err != nil {
		// No spool to keep it in: the own record is applied directly
		// rather than lost.
		if own != nil {
			rep.Own, rep.OwnErr = OwnApplied, nil
			var drop *DropError
			if aerr := own.Apply(ctx); errors.As(aerr, &drop) {
				rep.Own, rep.OwnErr = OwnRefused, drop.Err
			} else if aerr != nil {
				rep.Own, rep.OwnErr = OwnLost, errors.Join(err, aerr)
			}
		}
		return rep, err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		s.spoolOwn(own, err, &rep)
		return rep, err
	}
	defer unlock()
	err = s.foldLocked(ctx, apply, dropped, &rep)
	if err == nil && own != nil {
		err = own.Apply(ctx)
		var drop *DropError
		switch {
		case err == nil:
			rep.Own = OwnApplied
			return rep, nil
		case errors.As(err, &drop):
			rep.Own, rep.OwnErr = OwnRefused, drop.Err
			return rep, nil
		}
	}
	s.spoolOwn(own, err, &rep)
	return rep, err
}

// spoolOwn appends the own record after a fold that could not apply it
// (why), noting the outcome in rep.
func (s *Spool) spoolOwn(own *Own, why error, rep *Report) {
	if own == nil {
		return
	}
	if _, err := s.Append(own.Data); err != nil {
		if errors.Is(err, ErrFull) {
			s.NoteDropped()
		}
		rep.Own, rep.OwnErr = OwnLost, errors.Join(why, err)
		return
	}
	rep.Own, rep.OwnErr = OwnSpooled, why
}

func (s *Spool) foldLocked(ctx context.Context, apply func(context.Context, Entry) error, dropped func(context.Context, int) error, rep *Report) error {
	if dropped != nil {
		if err := s.foldDropped(ctx, dropped); err != nil {
			return err
		}
	}
	for {
		keys, _, err := s.list()
		if err != nil || len(keys) == 0 {
			return err
		}
		for _, key := range keys {
			if err := s.foldOne(ctx, key, apply, rep); err != nil {
				return err
			}
		}
	}
}

func (s *Spool) foldOne(ctx context.Context, key string, apply func(context.Context, Entry) error, rep *Report) error {
	path := filepath.Join(s.Dir, key+suffix)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // deleted by hand
	} else if err != nil {
		return fmt.Errorf("read hook spool record %s: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err = apply(ctx, Entry{Key: key, Data: data})
	var drop *DropError
	switch {
	case errors.As(err, &drop):
		rep.Dropped = append(rep.Dropped, key+": "+drop.Err.Error())
	case err != nil:
		return err
	default:
		rep.Applied++
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete hook spool record %s: %w", path, err)
	}
	return nil
}

// foldDropped hands the drop note's count to dropped, then deletes it. The
// note is renamed first, so refusals counted meanwhile start a new one; a
// note a dead folder had taken is handed over first.
func (s *Spool) foldDropped(ctx context.Context, dropped func(context.Context, int) error) error {
	claim := filepath.Join(s.Dir, dropClaim)
	for round := 0; round < 2; round++ {
		if round == 1 {
			if err := os.Rename(filepath.Join(s.Dir, dropName), claim); errors.Is(err, fs.ErrNotExist) {
				return nil
			} else if err != nil {
				return fmt.Errorf("hook spool drop note: %w", err)
			}
		}
		fi, err := os.Stat(claim)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return fmt.Errorf("hook spool drop note: %w", err)
		}
		if fi.Size() > 0 {
			if err := dropped(ctx, int(fi.Size())); err != nil {
				return err // kept: told again next fold
			}
		}
		if err := os.Remove(claim); err != nil {
			return fmt.Errorf("hook spool drop note: %w", err)
		}
	}
	return nil
}

// lock takes the spool's exclusive fold lock, polling until ctx ends.
func (s *Spool) lock(ctx context.Context) (func(), error) {
	f, err := os.OpenFile(filepath.Join(s.Dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("hook spool lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing releases the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("hook spool lock: %w", err)
		}
		t := time.NewTimer(pollPeriod)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("hook spool: another process is folding it: %w", context.Cause(ctx))
		case <-t.C:
		}
	}
}
