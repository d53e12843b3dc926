package ope_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/env"
	"github.com/ihope-ope/ihope/env/ring"
	"github.com/ihope-ope/ihope/env/taxi"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/rollout"
)

// The density ratio's transient diagnostic: on Taxi, whose episodes start
// from a reset far from the target's stationary regime (the 400-step value
// -0.1412 against the long-run -0.1217), the first halves of the
// episodes score well below the second halves; on the ring, whose start
// distribution is its stationary one, the two halves agree up to noise.
func TestTransient(t *testing.T) {
	e := ope.DensityRatio{Learner: ratio.Tabular{}}
	target, _ := taxi.Policy("pi19")
	behavior, _ := taxi.Policy("pi18")
	var taxiGap float64
	for seed := range uint64(3) {
		d, err := rollout.Sample(rand.New(rand.NewPCG(seed+1, 0)), env.NewSampler(taxi.New()), behavior, target, 200, 400)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Estimate(d, 1)
		if err != nil {
			t.Fatal(err)
		}
		taxiGap += res.Transient / 3
	}
	if !(taxiGap < -0.02) {
		t.Errorf("Taxi: mean gap between the halves %.4f, want below -0.02 (a start transient)", taxiGap)
	}
	m, err := ring.New(5)
	if err != nil {
		t.Fatal(err)
	}
	var ringGap float64
	for seed := range uint64(3) {
		d, err := rollout.Sample(rand.New(rand.NewPCG(seed+1, 0)), env.NewSampler(m), ring.Policy(5, 0.3), ring.Policy(5, 0.7), 200, 400)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Estimate(d, 1)
		if err != nil {
			t.Fatal(err)
		}
		ringGap += res.Transient / 3
	}
	t.Logf("gap between the halves: Taxi %.4f, ring %.4f", taxiGap, ringGap)
	if math.Abs(ringGap) > 0.25*math.Abs(taxiGap) {
		t.Errorf("ring (stationary start): gap %.4f, want well below Taxi's %.4f", ringGap, taxiGap)
	}
}
