package evaluate_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/evaluate"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/pointmass"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// realRecWorld is a real-state world of the recommendation's comparison:
// a log per seed and the exact (or 100,000-rollout) long-run truth.
type realRecWorld struct {
	name   string
	gamma  float64
	sample func(seed uint64) (*dataset.Dataset, error)
	truth  float64
}

// TestRecommendedRealStates is issue 31's comparison on real states:
// ihope estimate with default flags under --estimand long-run (every
// estimator of the long-run value that runs on the log, with its
// interval) on the linear-Gaussian systems (1-d and 2-d, gamma 1 and
// 0.99, 40 episodes of 200 steps from the behavior's stationary law, the
// long-run truth in closed form) and on the point mass (discrete actions,
// q not quadratic, gamma 1 and 0.99, 200 episodes of 100 steps, the
// 100,000-rollout truths), IHOPE_SEEDS seeds each (default 10). It prints
// per world the log10 MSE of the recommended estimate (over the cells
// where it chooses) beside every row's, and the cells where it chooses
// none. IHOPE_LONG=1; IHOPE_WORLDS=TEXT keeps the worlds whose name
// holds TEXT ("point mass").
func TestRecommendedRealStates(t *testing.T) {
	if os.Getenv("IHOPE_LONG") != "1" {
		t.Skip("IHOPE_LONG=1 runs it")
	}
	seeds := 10
	if s, err := strconv.Atoi(os.Getenv("IHOPE_SEEDS")); err == nil && s > 0 {
		seeds = s
	}
	var worlds []realRecWorld
	for _, g := range []float64{1, 0.99} {
		for _, p := range []struct {
			name string
			p    *lineargauss.Problem
		}{{"linear-Gaussian 1-d", lineargauss.Problem1D()}, {"linear-Gaussian 2-d", lineargauss.Problem2D()}} {
			var truth float64
			var err error
			if g == 1 {
				truth, err = p.p.System.AverageReward(p.p.Target)
			} else {
				truth, err = p.p.System.Value(p.p.Target, g, int(math.Ceil(40/(1-g))))
			}
			if err != nil {
				t.Fatal(err)
			}
			worlds = append(worlds, realRecWorld{fmt.Sprintf("%s, γ = %g", p.name, g), g, func(seed uint64) (*dataset.Dataset, error) {
				return rollout.SampleContinuous(rand.New(rand.NewPCG(seed, 31)), p.p.System, p.p.Behavior, p.p.Target, 40, 200)
			}, truth})
		}
		sys, target, behavior := pointmass.Problem()
		truth := pointmass.TruthDiscounted
		if g == 1 {
			truth = pointmass.TruthAverage
		}
		worlds = append(worlds, realRecWorld{fmt.Sprintf("point mass, γ = %g", g), g, func(seed uint64) (*dataset.Dataset, error) {
			return sys.Sample(rand.New(rand.NewPCG(seed, 31)), behavior, target, 200, 100)
		}, truth})
	}
	for _, w := range worlds {
		if only := os.Getenv("IHOPE_WORLDS"); only != "" && !strings.Contains(w.name, only) {
			continue
		}
		sq := map[string][]float64{}
		none := 0
		for seed := range seeds {
			d, err := w.sample(uint64(seed) + 1)
			if err != nil {
				t.Fatal(err)
			}
			o := evaluate.Defaults()
			o.Gamma, o.Estimand, o.TrainSeed = w.gamma, "long-run", uint64(seed)+1
			ev, err := evaluate.New(o)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := ev.Evaluate(d, w.name, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Estimates {
				if r.Estimate != nil && r.Estimand == "long-run" {
					sq[r.Estimator] = append(sq[r.Estimator], (*r.Estimate-w.truth)*(*r.Estimate-w.truth))
				}
			}
			if len(rep.Recommended) == 1 && rep.Recommended[0].Estimator != nil {
				e := *rep.Recommended[0].Estimate - w.truth
				sq["recommended"] = append(sq["recommended"], e*e)
				t.Logf("%s seed %d: recommended %s: %s", w.name, seed, *rep.Recommended[0].Estimator, rep.Recommended[0].Why)
			} else {
				none++
				t.Logf("%s seed %d: no recommendation", w.name, seed)
			}
		}
		var names []string
		for n := range sq {
			names = append(names, n)
		}
		slices.Sort(names)
		fmt.Printf("%s (truth %.6f, %d seeds, no choice in %d):", w.name, w.truth, seeds, none)
		for _, n := range names {
			mse := 0.0
			for _, v := range sq[n] {
				mse += v / float64(len(sq[n]))
			}
			fmt.Printf(" %s %.2f (%d)", n, math.Log10(mse), len(sq[n]))
		}
		fmt.Println()
	}
}
