package rollout_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim/cobs"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// A log of COBS's ToyMC in the padded form Sample writes and the same log
// cut at its terminal steps (Terminate) give every estimator the same
// horizon value (the padded steps are what dataset.Absorbing restores),
// and the model-based long-run value too (the count model of either has
// one absorbing state that pays 0).
func TestTerminateAsPadded(t *testing.T) {
	m := cobs.NewToyMC()
	const n, T, gamma = 40, 30, cobs.ToyMCGamma
	padded, err := rollout.Sample(rand.New(rand.NewPCG(7, 1)), m, m.Behavior(), m.Target(), n, T)
	if err != nil {
		t.Fatal(err)
	}
	d, err := rollout.Terminate(padded, m.Absorbing)
	if err != nil {
		t.Fatal(err)
	}
	if k := d.NumTerminal(); k == 0 || k == n || d.MaxLen() != T {
		t.Fatalf("%d of %d episodes terminal, longest %d: the test wants both kinds and a cut-off one of T = %d steps", k, n, d.MaxLen(), T)
	}
	if d.NumSteps() >= padded.NumSteps() {
		t.Fatalf("Terminate kept %d of %d steps", d.NumSteps(), padded.NumSteps())
	}
	for _, c := range []struct {
		est   ope.Estimand
		names []string
	}{
		{ope.Horizon, []string{"naive", "is-trajectory", "wis-trajectory", "is-stepwise", "wis-stepwise", "model-based", "fqe", "mis", "dr"}},
		{ope.LongRun, []string{"model-based", "fqe", "mql"}},
	} {
		ests, err := ope.New(c.names, ope.Options{Target: m.Target(), Estimand: c.est})
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range ests {
			want, err := e.Estimate(padded, gamma)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Estimate(d, gamma)
			if err != nil {
				t.Fatalf("%s %s: %v", c.est, c.names[i], err)
			}
			if math.Abs(got.Value-want.Value) > 1e-9*math.Max(1, math.Abs(want.Value)) {
				t.Errorf("%s %s: %.12g on the terminal log, %.12g on the padded one", c.est, c.names[i], got.Value, want.Value)
			}
		}
	}
}
