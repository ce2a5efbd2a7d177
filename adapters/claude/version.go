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
// ("2.1.317 (Claude Code)", "v2.1.317"), and a pre-release suffix
// ("-beta.1") right after it.
var versionRE = regexp.MustCompile(`(?:^|[^0-9A-Za-z.])v?(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?`)

// Version is a Claude Code version: major, minor, patch, and whether it is
// a pre-release of that version (which comes before it).
type Version struct {
	N   [3]int
	Pre bool
}

func (v Version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.N[0], v.N[1], v.N[2])
	if v.Pre {
		s += "-pre"
	}
	return s
}

// ParseVersion reads the first major.minor.patch in s (an optional leading
// "v", a pre-release suffix noted), as `claude --version` prints it. ok is
// false when s holds none.
func ParseVersion(s string) (v Version, ok bool) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return v, false
	}
	for i := range v.N {
		n, err := strconv.Atoi(m[i+1])
		if err != nil {
			return Version{}, false
		}
		v.N[i] = n
	}
	v.Pre = m[4] != ""
	return v, true
}

// SupportsOnFailure reports whether Claude Code of version v reads
// `onFailure`: MinOnFailureVersion or later (a pre-release of
// MinOnFailureVersion itself does not count).
func SupportsOnFailure(v Version) bool {
	min, _ := ParseVersion(MinOnFailureVersion)
	for i := range v.N {
		if v.N[i] != min.N[i] {
			return v.N[i] > min.N[i]
		}
	}
	return !v.Pre
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
func DetectVersion(ctx context.Context) (v Version, text string, err error) {
	bin, err := exec.LookPath("claude")
	if err != nil {
		return v, "", ErrClaudeNotFound
	}
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	// A wrapper whose child keeps stdout open must not hold install past
	// the timeout.
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
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
