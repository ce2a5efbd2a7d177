package cli

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

func TestCheckDuration(t *testing.T) {
	huge := 2562047*time.Hour + 47*time.Minute + 16*time.Second
	for _, tc := range []struct {
		d, min time.Duration
		zeroOK bool
		ok     bool
	}{
		{0, 0, true, true},
		{0, time.Millisecond, false, false},
		{time.Second, 0, false, true},
		{maxFlagDuration, 0, false, true},
		{maxFlagDuration + 1, 0, true, false},
		{huge, 0, true, false},
		{-time.Second, 0, true, false},
		{time.Microsecond, time.Millisecond, false, false},
	} {
		err := checkDuration("--x", tc.d, tc.min, tc.zeroOK)
		if (err == nil) != tc.ok {
			t.Errorf("checkDuration(%s, min %s, zero %v) = %v", tc.d, tc.min, tc.zeroOK, err)
		}
		if err != nil && (!errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), tc.d.String())) {
			t.Errorf("error %q does not name %s", err, tc.d)
		}
	}
}
