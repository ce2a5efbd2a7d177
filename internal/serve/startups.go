package serve

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/clawpit/clawpit/core"
)

// Startups is the cap on unauthenticated connections, with sshd's
// MaxStartups semantics (sshd_config(5), "start:rate:full"): below Start
// open unauthenticated connections a new one is admitted; from Start on it
// is refused with probability Rate percent, rising linearly to 100 % at
// Full; at Full and beyond every new one is refused. A refused connection
// is closed as soon as it is accepted, before any SSH byte is sent.
type Startups struct {
	Start int // unauthenticated connections before random refusal starts (≥ 1)
	Rate  int // refusal probability at Start, in percent (1–100)
	Full  int // unauthenticated connections at which every new one is refused (≥ Start)
}

// maxStartupsFull bounds Full: far beyond any descriptor limit, and small
// enough that Refuse's arithmetic cannot overflow.
const maxStartupsFull = 1 << 20

// DefaultStartups is sshd's default MaxStartups, 10:30:100.
var DefaultStartups = Startups{Start: 10, Rate: 30, Full: 100}

// ParseStartups reads "start:rate:full" or a single "N" (a hard cap of N,
// as sshd reads "MaxStartups N"). Errors wrap core.ErrInvalid and name the
// bad value.
func ParseStartups(s string) (Startups, error) {
	parts := strings.Split(s, ":")
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return Startups{}, core.Invalidf("--max-startups %q: %q is not a whole number (want start:rate:full, like 10:30:100, or N)", s, p)
		}
		nums[i] = n
	}
	var m Startups
	switch len(nums) {
	case 1:
		m = Startups{Start: nums[0], Rate: 100, Full: nums[0]}
	case 3:
		m = Startups{Start: nums[0], Rate: nums[1], Full: nums[2]}
	default:
		return Startups{}, core.Invalidf("--max-startups %q: want start:rate:full (like 10:30:100) or N", s)
	}
	if err := m.validate(); err != nil {
		return Startups{}, core.Invalidf("--max-startups %q: %v", s, err)
	}
	return m, nil
}

func (m Startups) validate() error {
	switch {
	case m.Start < 1:
		return fmt.Errorf("start %d must be at least 1", m.Start)
	case m.Full < m.Start:
		return fmt.Errorf("full %d is below start %d", m.Full, m.Start)
	case m.Full > maxStartupsFull:
		return fmt.Errorf("full %d is more than %d", m.Full, maxStartupsFull)
	case m.Rate < 1 || m.Rate > 100:
		return fmt.Errorf("rate %d%% must be 1 to 100", m.Rate)
	}
	return nil
}

// String is the "start:rate:full" form.
func (m Startups) String() string { return fmt.Sprintf("%d:%d:%d", m.Start, m.Rate, m.Full) }

// Refuse reports whether a new connection is refused while open
// unauthenticated connections are already open. roll returns a uniform
// integer in [0, n); it is called only between Start and Full. The
// arithmetic is sshd's should_drop_connection (sshd.c), integer division
// included.
func (m Startups) Refuse(open int, roll func(n int) int) bool {
	switch {
	case open < m.Start:
		return false
	case open >= m.Full, m.Rate >= 100:
		return true
	}
	p := (100-m.Rate)*(open-m.Start)/(m.Full-m.Start) + m.Rate
	return roll(100) < p
}
