package value

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
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

// A target that takes an action the log never shows leaves the value
// unidentified in the linear class (no logged step spans that action's
// features): the stats refuse, at gamma < 1 and at 1, instead of
// returning the least-norm solution's narrow and wrong interval.
func TestBellmanStatsUnidentified(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	var b dataset.Builder
	b.Init(0, 2, 1, 0)
	for e := range 40 {
		x := rng.NormFloat64()
		for range 30 {
			next := 0.8*x + 0.3*rng.NormFloat64()
			b.Add(dataset.Step{Obs: []float64{x}, Action: 0, Reward: -x * x, HasNext: true, NextObs: []float64{next},
				LogBehavior: 0, LogTarget: math.Log(0.5), TargetProbs: []float64{0.5, 0.5}, NextTargetProbs: []float64{0.5, 0.5}})
			x = next
		}
		b.EndEpisode(fmt.Sprint(e))
	}
	d, err := b.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	for _, gamma := range []float64{0.9, 1} {
		m, err := Linear{Ridge: 1e-6}.FitLinear(d, gamma, Target{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.BellmanStats(d); err == nil || !strings.Contains(err.Error(), "does not identify") {
			t.Errorf("gamma %v: %v, want the value not identified", gamma, err)
		}
	}
}
