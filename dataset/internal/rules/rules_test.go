package rules

import (
	"math"
	"testing"
)

func TestChecks(t *testing.T) {
	for _, c := range []struct {
		name string
		got  string
		want string
	}{
		{"real ok", Real(-2.5), ""},
		{"real NaN", Real(math.NaN()), "NaN is not allowed"},
		{"real +Inf", Real(math.Inf(1)), "+Inf is not allowed"},
		{"real -Inf", Real(math.Inf(-1)), "-Inf is not allowed"},
		{"prob ok", Prob(1), ""},
		{"prob above 1", Prob(1.5), "1.5 is outside [0, 1]"},
		{"prob negative", Prob(-1e-9), "-1e-09 is outside [0, 1]"},
		{"prob NaN", Prob(math.NaN()), "NaN is not allowed"},
		{"sum text hides rounding", SumText(0.2 + 0.7), "0.9"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
	if sum, ok := Distribution([]float64{0.2, 0.7, 0.1 + 5e-7}); !ok || math.Abs(sum-1) > 1e-6 {
		t.Errorf("a distribution within ProbTol of 1 refused: %v", sum)
	}
	if _, ok := Distribution([]float64{0.2, 0.7, 0.1 + 2e-6}); ok {
		t.Error("a distribution 2e-6 off 1 accepted")
	}
	if !Agrees(math.Log(0.25), 0.25+5e-7) || Agrees(math.Log(0.25), 0.25+2e-6) {
		t.Error("Agrees does not hold the tolerance ProbTol")
	}
}
