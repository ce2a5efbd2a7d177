package termtext

import (
	"strconv"
	"strings"
)

// ShellQuote quotes s as one word for a POSIX shell: as it is when it holds
// only characters no shell treats specially (letters, digits, -_./:=@%+,),
// else in single quotes with each ' written '\”. The empty string is ”.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Thousands writes n with a comma between each group of three digits:
// 1234567 → "1,234,567", -1500 → "-1,500".
func Thousands[N ~int | ~int64](n N) string {
	s := strconv.FormatInt(int64(n), 10)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return sign + s
}
