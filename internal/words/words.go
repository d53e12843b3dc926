package words

import (
	"fmt"
	"strings"
	"time"
)

// Num formats v with a numeric verb (%.6g, %+.6f, ...), and writes a
// value that rounds to zero without a minus sign: a negative zero, or a
// tiny negative number at fixed precision, would otherwise print as
// "-0" or "-0.000000", a sign that means nothing. Under a '+' flag it
// prints "+0".
func Num(format string, v float64) string {
	s := fmt.Sprintf(format, v)
	if !strings.HasPrefix(s, "-") || strings.ContainsAny(s, "123456789") || strings.Contains(s, "Inf") {
		return s
	}
	if strings.Contains(format, "+") {
		return "+" + s[1:]
	}
	return s[1:]
}

// Plural writes "1 episode", "2 episodes".
func Plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Duration writes sec seconds to three significant figures (27.2s,
// 2.48s, 222ms, 5.25ms, 230µs).
func Duration(sec float64) string {
	// Three significant figures (27.2s, 2.48s, 222ms, 5.25ms, 230µs): the
	// rounding unit is a hundredth of d's leading power of ten.
	d := time.Duration(sec * float64(time.Second))
	unit := time.Duration(1)
	for p := time.Duration(1000); p <= d; p *= 10 {
		unit *= 10
	}
	return d.Round(unit).String()
}
