package words

import (
	"math"
	"testing"
)

func TestFmtNum(t *testing.T) {
	cases := []struct {
		format string
		v      float64
		want   string
	}{
		{"%.6g", math.Copysign(0, -1), "0"},
		{"%.6g", -1e-300, "-1e-300"},
		{"%.6f", -1e-9, "0.000000"},
		{"%+.6f", -1e-9, "+0.000000"},
		{"%+.6f", 1e-9, "+0.000000"},
		{"%+.6f", -0.5, "-0.500000"},
		{"%.2f", -0.001, "0.00"},
		{"%.3f", -0.0004, "0.000"},
		{"%.2f", -10.004, "-10.00"},
		{"%.6g", math.Inf(-1), "-Inf"},
		{"%.6g", -0.141180, "-0.14118"},
	}
	for i, c := range cases {
		if got := Num(c.format, c.v); got != c.want {
			t.Errorf("case %d: Num(%q, %v) = %q, want %q", i, c.format, c.v, got, c.want)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 episodes"}, {1, "1 episode"}, {2, "2 episodes"}} {
		if got := Plural(c.n, "episode"); got != c.want {
			t.Errorf("Plural(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
