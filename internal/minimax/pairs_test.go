package minimax_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ihope-ope/ihope/env"
	"github.com/ihope-ope/ihope/env/taxi"
	"github.com/ihope-ope/ihope/exact"
	"github.com/ihope-ope/ihope/internal/minimax"
	"github.com/ihope-ope/ihope/rollout"
	"github.com/ihope-ope/ihope/value"
)

// Fed Taxi's population (the behavior's state-action visitation as d_D),
// the flow problem returns the target's exact state-action visitation.
func TestFlowTaxiPopulation(t *testing.T) {
	m := taxi.New()
	pi, _ := taxi.Policy("pi19")
	pi0, _ := taxi.Policy("pi18")
	nS, nA := m.NumStates(), m.NumActions()
	for _, gamma := range []float64{0.99, 1} {
		d0, err := exact.Visitation(m, pi0, gamma)
		if err != nil {
			t.Fatal(err)
		}
		dD := make([]float64, nS*nA)
		for s := range nS {
			for a := range nA {
				dD[s*nA+a] = d0[s] * pi0.Prob(s, a)
			}
		}
		pp, err := minimax.FromModel(m, dD, pi)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		ch, err := pp.Chain(gamma)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ch.Flow()
		if err != nil {
			t.Fatal(err)
		}
		dPi, err := exact.Visitation(m, pi, gamma)
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for p := range pp.State {
			s, a := int(pp.State[p]), int(pp.Action[p])
			worst = math.Max(worst, math.Abs(f.U[p]-dPi[s]*pi.Prob(s, a)))
		}
		t.Logf("gamma %v: %d pairs, %d iterations, %v, max |u - d_pi| %.3g, loss %.3g", gamma, len(pp.State), f.Iterations, time.Since(start), worst, f.Loss)
		if worst > 1e-9 {
			t.Errorf("gamma %v: max error %.3g", gamma, worst)
		}
	}
}

func TestFlowTaxiSample(t *testing.T) {
	m := taxi.New()
	pi, _ := taxi.Policy("pi19")
	pi0, _ := taxi.Policy("pi18")
	d, err := rollout.Sample(rand.New(rand.NewPCG(1, 0)), env.NewSampler(m), pi0, pi, 200, 400)
	if err != nil {
		t.Fatal(err)
	}
	for _, gamma := range []float64{0.99, 1} {
		pp, err := minimax.FromData(d, pi)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		ch, err := pp.Chain(gamma)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ch.Flow()
		if err != nil {
			t.Fatal(err)
		}
		el := time.Since(start)
		num, den := 0.0, 0.0
		for p, u := range f.U {
			num += u * pp.Reward[p]
			den += u
		}
		vals, err := ch.Values()
		if err != nil {
			t.Fatal(err)
		}
		mql := vals.Rho
		if gamma < 1 {
			mql = (1 - gamma) * ch.InitValue(vals.V)
		}
		fq, err := value.Tabular{}.Fit(d, gamma, value.Target{Policy: pi})
		if err != nil {
			t.Fatal(err)
		}
		_ = fq
		truth, _ := exact.LongRun(m, pi, gamma)
		t.Logf("gamma %v: %d pairs, %d+%d iterations, %v, restarted %d, loss %.3g, R %.6f (sum u %.6f), mql %.6f, truth %.5f", gamma, len(pp.State), f.Iterations, vals.Iterations, el, ch.Restarted, f.Loss, num, den, mql, truth)
		for _, r := range []float64{1e-2, 1e-4, 1e-6} {
			if gamma == 1 {
				break
			}
			start := time.Now()
			rf, err := ch.RidgeFlow(r, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			num, den := 0.0, 0.0
			for p, u := range rf.U {
				num += u * pp.Reward[p]
				den += u
			}
			t.Logf("  ridge %g: %d iterations %v, R %.6f sum %.6f", r, rf.Iterations, time.Since(start), num, den)
		}
	}
}
