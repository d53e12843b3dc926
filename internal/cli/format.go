package cli

import (
	"fmt"
	"strings"
)

// fmtNum formats v with a numeric verb (%.6g, %+.6f, ...), and writes a
// value that rounds to zero without a minus sign: a negative zero, or a
// tiny negative number at fixed precision, would otherwise print as
// "-0" or "-0.000000", a sign that means nothing. Under a '+' flag it
// prints "+0".
func fmtNum(format string, v float64) string {
	s := fmt.Sprintf(format, v)
	if !strings.HasPrefix(s, "-") || strings.ContainsAny(s, "123456789") || strings.Contains(s, "Inf") {
		return s
	}
	if strings.Contains(format, "+") {
		return "+" + s[1:]
	}
	return s[1:]
}

// plural writes "1 episode", "2 episodes".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
