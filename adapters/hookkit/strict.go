// Package hookkit holds what clawpit's agent adapters (adapters/claude,
// adapters/codex, adapters/gemini) share: the strict reading of a hook
// payload (exactly one JSON object, no member named twice, a stdin
// deadline). Each adapter keeps its own events, fields and answers.
package hookkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// CheckObject is the strict shape of every agent's hook payload: data is
// one JSON object and nothing after it, and no object (at any depth) names a
// member twice (two readers could take different values).
func CheckObject(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("not a JSON object")
	}
	if err := checkMembers(dec, 1); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data after the JSON object")
	}
	return nil
}

// maxPayloadDepth bounds the nesting checkMembers follows (encoding/json
// itself stops at 10000).
const maxPayloadDepth = 512

// checkMembers reads an object's members after its '{' up to its '}',
// refusing a repeated name, and checks nested values.
func checkMembers(dec *json.Decoder, depth int) error {
	if depth > maxPayloadDepth {
		return fmt.Errorf("nested deeper than %d", maxPayloadDepth)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("bad JSON: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("bad JSON: member name %v", tok)
		}
		if seen[key] {
			return fmt.Errorf("member %q appears twice in one object", Clip(key, 64))
		}
		seen[key] = true
		if err := checkValue(dec, depth); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return fmt.Errorf("bad JSON: %w", err)
	}
	return nil
}

// checkValue reads one value, checking the objects inside it.
func checkValue(dec *json.Decoder, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("bad JSON: %w", err)
	}
	d, ok := tok.(json.Delim)
	switch {
	case !ok:
		return nil
	case d == '{':
		return checkMembers(dec, depth+1)
	case d == '[':
		if depth+1 > maxPayloadDepth {
			return fmt.Errorf("nested deeper than %d", maxPayloadDepth)
		}
		for dec.More() {
			if err := checkValue(dec, depth+1); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // ']'
			return fmt.Errorf("bad JSON: %w", err)
		}
		return nil
	}
	return fmt.Errorf("bad JSON: unexpected %v", d)
}

// Clip shortens s to at most n bytes on a rune boundary, marking the cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
