package ope_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/env/lineargauss"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/rollout"
)

// drawsOf returns one action drawn from pi at every state of d where a
// value model reads the target's actions (what ihope sample
// --target-draws writes and ihope estimate --target-draws reads).
func drawsOf(t testing.TB, d *dataset.Dataset, pi policy.Continuous, seed uint64) *policy.Draws {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	var states, actions [][]float64
	d.TargetStates(func(obs []float64, _, _ int, _ bool) bool {
		states, actions = append(states, obs), append(actions, pi.Sample(rng, obs))
		return true
	})
	draws, err := policy.NewDraws(states, actions)
	if err != nil {
		t.Fatal(err)
	}
	return draws
}

func TestMinimaxDrawsExplore(t *testing.T) {
	p := lineargauss.Problem1D()
	names := []string{"mwl", "mql", "fqe"}
	for _, gamma := range []float64{0.9, 1} {
		truth, err := p.System.AverageReward(p.Target)
		if gamma < 1 {
			truth, err = p.System.Value(p.Target, gamma, 3000)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{10, 40, 160} {
			mae := map[string]float64{}
			const seeds = 4
			for seed := range seeds {
				d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(uint64(seed)+1, uint64(n))), p.System, p.Behavior, p.Target, n, 100)
				if err != nil {
					t.Fatal(err)
				}
				o := ope.Options{Estimand: ope.LongRun, TargetContinuous: drawsOf(t, d, p.Target, uint64(seed)), Samples: 1}
				ests, err := ope.New(names, o)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range ests {
					res, err := e.Estimate(d, gamma)
					if err != nil {
						t.Fatalf("%s: %v", e.Name(), err)
					}
					mae[e.Name()] += math.Abs(res.Value-truth) / seeds
				}
			}
			var b strings.Builder
			for _, name := range names {
				fmt.Fprintf(&b, " %s %.4f", name, mae[name])
			}
			t.Logf("gamma %g n %d truth %.4f:%s", gamma, n, truth, b.String())
		}
	}
}
