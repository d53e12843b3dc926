package value

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// At gamma = 1 the kernel Bellman statistics are those of the bordered
// system of the differential fit: their minimiser's rho is the fit's own
// average reward (Linear without a ridge solves the same equations by
// another code path), the loss's rows are 0 there, the episodes' shares
// of the residual sum to it, and the value functional is rho alone.
func TestBellmanStatsAverage(t *testing.T) {
	for _, p := range []*lineargauss.Problem{lineargauss.Problem1D(), lineargauss.Problem2D()} {
		d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(3, 4)), p.System, p.Behavior, p.Target, 30, 80)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Linear{Ridge: -1}.FitLinear(d, 1, Target{Continuous: p.Target, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		st, err := m.BellmanStats(d)
		if err != nil {
			t.Fatal(err)
		}
		np := st.Rows
		if len(st.Theta) != np+1 || len(st.C) != np+1 || st.C[np] != 1 {
			t.Fatalf("rows %d, theta %d, C %v: want rho as the last unknown and the value", np, len(st.Theta), st.C)
		}
		if got, want := st.Theta[np], m.Rho(); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("rho of the stats %.12f, of the differential fit %.12f", got, want)
		}
		sum := make([]float64, np)
		for e, z := range st.Zeta {
			if len(z) != np || st.Start[e] != 0 {
				t.Fatalf("episode %d: zeta of %d entries, start %v: want %d and 0", e, len(z), st.Start[e], np)
			}
			for i, v := range z {
				sum[i] += v
			}
		}
		for i := range np {
			res := st.B[i]
			for c, th := range st.Theta {
				res -= st.A.At(i, c) * th
			}
			if math.Abs(res) > 1e-10 || math.Abs(sum[i]) > 1e-10 {
				t.Errorf("row %d: residual at the minimiser %.3g, episodes' sum %.3g, want 0", i, res, sum[i])
			}
		}
		// The last row is the normalisation: the mean of q over the
		// transitions is 0.
		if c := st.A.At(np, np); c != 0 {
			t.Errorf("the normalisation row has %v on rho", c)
		}
	}
}
