package claude

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// MinOnFailureVersion is the first Claude Code release that reads a hook's
// `onFailure` (Claude Code changelog, 2.1.295). Older releases validate
// settings strictly: an unknown key makes them skip the whole settings file,
// every hook in it included.
const MinOnFailureVersion = "2.1.295"

// versionRE finds the first dotted version in `claude --version` output
// ("2.1.317 (Claude Code)").
var versionRE = regexp.MustCompile(`\b(\d+)\.(\d+)\.(\d+)\b`)

// ParseVersion reads the first major.minor.patch in s, as `claude --version`
// prints it. ok is false when s holds none.
func ParseVersion(s string) (v [3]int, ok bool) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return v, false
	}
	for i := range v {
		n, err := strconv.Atoi(m[i+1])
		if err != nil {
			return [3]int{}, false
		}
		v[i] = n
	}
	return v, true
}

// SupportsOnFailure reports whether Claude Code of version v (ParseVersion)
// reads `onFailure`: v is MinOnFailureVersion or later.
func SupportsOnFailure(v [3]int) bool {
	min, _ := ParseVersion(MinOnFailureVersion)
	for i := range v {
		if v[i] != min[i] {
			return v[i] > min[i]
		}
	}
	return true
}

// ErrClaudeNotFound is returned by DetectVersion when no `claude` executable
// is on PATH.
var ErrClaudeNotFound = errors.New("claude not found on PATH")

// versionTimeout bounds `claude --version`.
const versionTimeout = 10 * time.Second

// DetectVersion runs `claude --version` (the claude on PATH, at most 10 s)
// and returns the version it prints (ParseVersion) and that text, trimmed.
// Errors: ErrClaudeNotFound; the command's own failure; output without a
// version.
func DetectVersion(ctx context.Context) (v [3]int, text string, err error) {
	bin, err := exec.LookPath("claude")
	if err != nil {
		return v, "", ErrClaudeNotFound
	}
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	text = strings.TrimSpace(string(out))
	if err != nil {
		return v, text, fmt.Errorf("%s --version: %w", bin, err)
	}
	v, ok := ParseVersion(text)
	if !ok {
		return v, text, fmt.Errorf("%s --version printed no version: %q", bin, text)
	}
	return v, text, nil
}
