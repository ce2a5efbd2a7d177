package tailer

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/clawpit/clawpit/redact"
)

// TailChars returns the last n characters of the job log in dir —
// output.log, preceded by output.1.log when output.log is shorter — redacted
// as one block (docs/contract.md "Background jobs: Live, redacted log", docs/contract.md "Background jobs: Alerts on finish": the tail a finish notification quotes). It
// reads at most about 4n+8 KiB bytes from the end of each file, whatever
// their size; invalid UTF-8 becomes U+FFFD. A missing log (or a log
// directory that is a file) gives "" and no error; a log that is not a
// regular file, or a read error, gives an error.
func TailChars(dir string, n int) (string, error) {
	want := int64(4*n + 8<<10)
	cur, err := readFileTail(filepath.Join(dir, CurrentLog), want)
	if err != nil {
		return "", err
	}
	if int64(len(cur)) < want {
		prev, err := readFileTail(filepath.Join(dir, RotatedLog), want-int64(len(cur)))
		if err != nil {
			return "", err
		}
		cur = append(prev, cur...)
	}
	s := redact.Default().Block(strings.ToValidUTF8(string(cur), "\uFFFD"))
	if utf8.RuneCountInString(s) <= n {
		return s, nil
	}
	// Keep the last n characters.
	i := len(s)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:], nil
}

// readFileTail returns the last max bytes of path; nil when it does not exist.
func readFileTail(path string, max int64) ([]byte, error) {
	if max <= 0 {
		return nil, nil
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) || errors.Is(err, syscall.ENOTDIR) {
		// ENOTDIR: the jobs directory is a file, so the log was never
		// created (capture_error says so).
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	off := st.Size() - max
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	k, err := f.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return buf[:k], nil
}
