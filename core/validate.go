package core

import (
	"fmt"

	"github.com/clawpit/clawpit/termtext"
)

// Validation where runtime input enters (README "The console"; issue 9 item 7): ids are
// refused unless printable and at most termtext.MaxID bytes; labels are
// sanitised to one inert line and refused above termtext.MaxLabel bytes.

// checkIDs returns an error wrapping ErrInvalid, naming the value (sanitised),
// for the first non-empty id in kv (kind, value pairs) that termtext.ValidID
// refuses: empty, longer than 128 bytes, or holding a control, bidi,
// zero-width or space character, or invalid UTF-8. Empty values are skipped
// (required ids are checked by the caller).
func checkIDs(kv ...string) error {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		if err := termtext.ValidID(kv[i], kv[i+1]); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	return nil
}

// cleanLabel returns label as one inert line (termtext.Line: escapes and
// controls removed, newlines and tabs made spaces), or an error wrapping
// ErrInvalid when the result is longer than termtext.MaxLabel (1 KiB).
func cleanLabel(kind, label string) (string, error) {
	if label == "" {
		return "", nil
	}
	s := termtext.Line(label, 0)
	if len(s) > termtext.MaxLabel {
		return "", Invalidf("%s %q… is %d bytes, longer than %d", kind, termtext.Line(s, 40), len(s), termtext.MaxLabel)
	}
	return s, nil
}
