package core

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
)

// CanonicalJSON re-encodes the JSON value raw canonically, so that two
// encodings of the same value are the same bytes: object keys sorted (byte
// order of their UTF-8), no insignificant whitespace, numbers exactly as
// given (1.0 stays 1.0, 1e2 stays 1e2), strings re-escaped the one way Go's
// encoder writes them without HTML escaping (so "\u0041" and "A" are the
// same), a key given twice kept once with its last value (as JSON.parse
// and Go read it). Empty raw is the value null. Errors: raw is not one JSON
// value (wrapped ErrInvalid).
func CanonicalJSON(raw []byte) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("null"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, Invalidf("tool input is not JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, Invalidf("tool input has more than one JSON value")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	// encoding/json writes map keys sorted and json.Number verbatim.
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("re-encode tool input: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// CanonicalInputHash is the hash that binds an approval to one tool call's
// input (Claude Code hooks: PreToolUse tool_input): the SHA-256 of
// CanonicalJSON(raw), as 64 lowercase hex digits. Key order and spacing do
// not change it; any other difference in the input does. Errors: those of
// CanonicalJSON.
func CanonicalInputHash(raw []byte) (string, error) {
	c, err := CanonicalJSON(raw)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}
