package hookkit

import (
	"strings"
	"testing"
)

func TestCheckObject(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string // "" for none
	}{
		{`{"a":1,"b":{"c":[1,{"d":2}]}}`, ""},
		{`{"a":1,"a":2}`, `"a" appears twice`},
		{`{"a":{"b":1,"b":2}}`, `"b" appears twice`},
		{`{"a":[{"b":1,"b":2}]}`, `"b" appears twice`},
		{`{"a":1} {"b":2}`, "trailing data"},
		{`[]`, "not a JSON object"},
		{`"x"`, "not a JSON object"},
		{``, "not JSON"},
		{`{"a":`, "bad JSON"},
		{strings.Repeat(`{"a":`, 600) + "1" + strings.Repeat("}", 600), "nested deeper"},
	}
	for _, tc := range tests {
		err := CheckObject([]byte(tc.in))
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("CheckObject(%.40q) = %v, want nil", tc.in, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("CheckObject(%.40q) = %v, want an error containing %q", tc.in, err, tc.wantErr)
		}
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"}, // never cuts inside a rune
	}
	for _, tc := range tests {
		if got := Clip(tc.s, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
