package termtext

import (
	"math"
	"os/exec"
	"strings"
	"testing"
)

func TestThousands(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {123456, "123,456"}, {1234567, "1,234,567"},
		{-1, "-1"}, {-999, "-999"}, {-1500, "-1,500"}, {-123456, "-123,456"},
		{math.MaxInt64, "9,223,372,036,854,775,807"}, {math.MinInt64, "-9,223,372,036,854,775,808"}} {
		if got := Thousands(c.n); got != c.want {
			t.Errorf("Thousands(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// TestShellQuote: a shell reads every quoted word back as the one word it was.
func TestShellQuote(t *testing.T) {
	words := []string{"", "plain", "/usr/bin/clawpit", "a b", "it's", "$(rm -rf ~)", "`x`", "a\nb", "*", "x;y", "--db=/tmp/r.db", "'", "\\"}
	var q []string
	for _, w := range words {
		q = append(q, ShellQuote(w))
	}
	if ShellQuote("plain") != "plain" || ShellQuote("a b") != "'a b'" || ShellQuote("") != "''" {
		t.Fatalf("quoting: %q", q)
	}
	out, err := exec.Command("sh", "-c", `for w in `+strings.Join(q, " ")+`; do printf '%s\0' "$w"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if strings.Join(got, "|") != strings.Join(words, "|") {
		t.Fatalf("sh read back %q, want %q", got, words)
	}
}
