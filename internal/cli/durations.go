package cli

import (
	"time"

	"github.com/clawpit/clawpit/core"
)

// maxFlagDuration is the longest duration any flag or [sweep] config value
// takes: 100 years (876000h). Anything longer is refused (exit 2) rather
// than passed on: deadlines and timestamps are computed in milliseconds
// from now, and past this no timer or watchdog here means anything. The
// Claude Code hook's own limits are tighter (claude.MaxApprovalTimeout,
// claude.MaxRunInactivity).
const maxFlagDuration = 100 * 365 * 24 * time.Hour

// checkDuration refuses a duration flag (or config key) name outside
// [min, maxFlagDuration] with core.ErrInvalid naming the value; 0 passes
// when zeroOK (the flags where 0 disables or means "never").
func checkDuration(name string, d, min time.Duration, zeroOK bool) error {
	switch {
	case d == 0 && zeroOK:
		return nil
	case d < 0:
		return core.Invalidf("%s %s: must not be negative", name, d)
	case d < min:
		return core.Invalidf("%s %s: must be at least %s", name, d, min)
	case d > maxFlagDuration:
		return core.Invalidf("%s %s: at most 876000h (100 years)", name, d)
	}
	return nil
}
