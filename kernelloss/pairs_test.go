package kernelloss_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/kernelloss"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// On sampled Taxi logs, the flow (MWL's system) and the values (MQL's,
// its transpose) give one estimate, the flow conserves mass and solves
// its equations, and the ridge flow tends to the exact one as the ridge
// vanishes.
func TestChainTaxiSample(t *testing.T) {
	m := taxi.New()
	pi, _ := taxi.Policy("pi19")
	pi0, _ := taxi.Policy("pi18")
	d, err := rollout.Sample(rand.New(rand.NewPCG(1, 0)), sim.NewSampler(m), pi0, pi, 50, 400)
	if err != nil {
		t.Fatal(err)
	}
	pp, err := kernelloss.FromData(d, pi)
	if err != nil {
		t.Fatal(err)
	}
	for _, gamma := range []float64{0.99, 1} {
		ch, err := pp.Chain(gamma)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ch.Flow()
		if err != nil {
			t.Fatal(err)
		}
		vals, err := ch.Values()
		if err != nil {
			t.Fatal(err)
		}
		mwl, mass := kernelloss.Dot(f.U, pp.Reward), 0.0
		for _, u := range f.U {
			mass += u
		}
		mql := vals.Rho
		if gamma < 1 {
			mql = (1 - gamma) * ch.InitValue(vals.V)
		}
		if math.Abs(mwl-mql) > 1e-12 || math.Abs(mass-1) > 1e-12 || f.Loss > 1e-24 {
			t.Errorf("gamma %g: flow %.15f, values %.15f, mass %.15f, loss %.3g", gamma, mwl, mql, mass, f.Loss)
		}
		t.Logf("gamma %g: %d pairs, %d restarted, %d + %d Krylov steps", gamma, len(pp.State), ch.Restarted, f.Iterations, vals.Iterations)
		if gamma == 1 {
			if _, err := ch.RidgeFlow(1e-3, 0, 0); err == nil {
				t.Error("a ridge at gamma = 1 was accepted")
			}
			continue
		}
		prev := math.Inf(1)
		for _, ridge := range []float64{1e-4, 1e-6, 1e-8} {
			rf, err := ch.RidgeFlow(ridge, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			gap := math.Abs(kernelloss.Dot(rf.U, pp.Reward) - mwl)
			if !(gap < prev) {
				t.Errorf("ridge %g: |E_D[w r] - mwl| = %.3g, not below %.3g", ridge, gap, prev)
			}
			prev = gap
		}
		if prev > 1e-4 {
			t.Errorf("ridge 1e-8: E_D[w r] off mwl's by %.3g", prev)
		}
	}
}
