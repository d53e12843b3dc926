package ope_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/ring"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
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
		d, err := rollout.Sample(rand.New(rand.NewPCG(seed+1, 0)), sim.NewSampler(taxi.New()), behavior, target, 200, 400)
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
		d, err := rollout.Sample(rand.New(rand.NewPCG(seed+1, 0)), sim.NewSampler(m), ring.Policy(5, 0.3), ring.Policy(5, 0.7), 200, 400)
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

// The gap's standard error (TransientSE) is what the gap's spread over
// fresh logs is: on the ring, whose start is stationary, the gaps of 40
// logs spread by their mean SE within 30%, and each lies within 3.5 of
// its SE of 0; on Taxi (800 episodes of 400 steps) the gap is more than
// 3 SEs from 0 (the warning ihope estimate gives without an interval; at
// 200 episodes it is about 2).
func TestTransientSE(t *testing.T) {
	e := ope.DensityRatio{Learner: ratio.Tabular{}}
	m, err := ring.New(5)
	if err != nil {
		t.Fatal(err)
	}
	var gaps, ses []float64
	for seed := range uint64(40) {
		d, err := rollout.Sample(rand.New(rand.NewPCG(seed+100, 0)), sim.NewSampler(m), ring.Policy(5, 0.3), ring.Policy(5, 0.7), 50, 100)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Estimate(d, 1)
		if err != nil {
			t.Fatal(err)
		}
		gaps, ses = append(gaps, res.Transient), append(ses, res.TransientSE)
		if math.Abs(res.Transient) > 3.5*res.TransientSE {
			t.Errorf("ring seed %d: gap %.4f is %.1f of its SE %.4f from 0", seed, res.Transient, math.Abs(res.Transient)/res.TransientSE, res.TransientSE)
		}
	}
	sd, meanSE := stat.StdDev(gaps, nil), stat.Mean(ses, nil)
	t.Logf("ring: sd of the gaps over 40 logs %.4f, mean SE %.4f", sd, meanSE)
	if r := sd / meanSE; r < 0.7 || r > 1.3 {
		t.Errorf("ring: the gaps spread by %.4f, their SEs say %.4f", sd, meanSE)
	}
	target, _ := taxi.Policy("pi19")
	behavior, _ := taxi.Policy("pi18")
	d, err := rollout.Sample(rand.New(rand.NewPCG(1, 0)), sim.NewSampler(taxi.New()), behavior, target, 800, 400)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Estimate(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	if z := math.Abs(res.Transient) / res.TransientSE; !(z > 3) {
		t.Errorf("Taxi: gap %.4f is %.1f SEs from 0, want more than 3", res.Transient, z)
	}
}
