package ope_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// The estimator family on the paper's Taxi (behavior pi18, target pi19,
// n = 200 episodes of T = 400 steps), each estimand against its own exact
// truth: the 400-step value from reset (-0.141180 at gamma = 1) and the
// long-run value (-0.12173). The state-action estimators (mwl, mql,
// dualdice) target the long-run value whatever the estimand, as
// bch-tabular does. With IHOPE_LONG=1 it runs 100 seeds and logs
// the table of log10 MSE that docs/estimators.md quotes; with IHOPE_STAT=1 (CI)
// 8 seeds, in the everyday run 4.
//
// What must hold: under either estimand, dr is no worse than the better
// of its two parts (the ratio estimator and fqe) up to the seeds' noise;
// under horizon, dr beats the paper's estimator as the authors' code
// computes it on these logs (natural-log MSE about -8.65 at gamma = 1;
// ihope's exact solve of the same loss, bch-tabular, does better, and
// lands close to the horizon truth although it targets the long-run
// value).
func TestTaxiEstimands(t *testing.T) {
	seeds := 4
	if os.Getenv("IHOPE_LONG") != "" {
		seeds = 100
	} else if testsets.Stat() {
		seeds = 8
	}
	const n, T = 200, 400
	m := taxi.New()
	target, _ := taxi.Policy("pi19")
	behavior, _ := taxi.Policy("pi18")
	sampler := sim.NewSampler(m)
	for _, gamma := range []float64{1, 0.99} {
		horizonTruth := mdp.Value(m, target, nil, T, gamma)
		longTruth, err := mdp.LongRun(m, target, gamma)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			est   ope.Estimand
			truth float64
			names []string
			parts [2]string // dr's ratio and value parts
		}{
			{ope.Horizon, horizonTruth, []string{"wis-stepwise", "model-based", "fqe", "mis", "bch-tabular", "dr", "mwl", "mql", "dualdice"}, [2]string{"mis", "fqe"}},
			{ope.LongRun, longTruth, []string{"model-based", "fqe", "bch-tabular", "dr", "mwl", "mql", "dualdice"}, [2]string{"bch-tabular", "fqe"}},
		} {
			opts := ope.Options{Target: target, Estimand: c.est}
			ests, err := ope.New(c.names, opts)
			if err != nil {
				t.Fatal(err)
			}
			se := make(map[string][]float64)
			covered := 0 // seeds whose dr Wald 90% interval holds the truth
			for seed := range seeds {
				d, err := rollout.Sample(rand.New(rand.NewPCG(uint64(seed)+1, 0)), sampler, behavior, target, n, T)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range ests {
					res, err := e.Estimate(d, gamma)
					if err != nil {
						t.Fatalf("%s: %v", e.Name(), err)
					}
					se[e.Name()] = append(se[e.Name()], (res.Value-c.truth)*(res.Value-c.truth))
					if e.Name() == "dr" && math.Abs(res.Value-c.truth) <= 1.6449*res.SE {
						covered++
					}
				}
			}
			mse := map[string]float64{}
			var rows []string
			for name, v := range se {
				s := 0.0
				for _, x := range v {
					s += x
				}
				mse[name] = s / float64(len(v))
				rows = append(rows, name)
			}
			sort.Slice(rows, func(i, j int) bool { return mse[rows[i]] < mse[rows[j]] })
			var b strings.Builder
			for _, name := range rows {
				fmt.Fprintf(&b, "\n  %-12s log10 MSE %7.3f   ln MSE %7.3f", name, math.Log10(mse[name]), math.Log(mse[name]))
			}
			t.Logf("gamma %g, estimand %s (truth %.6f), %d seeds:%s\n  dr's 90%% Wald interval holds the truth in %d of %d seeds", gamma, c.est, c.truth, seeds, b.String(), covered, seeds)
			// A correct 90% interval covers at least 80 of 100 seeds with
			// probability 0.998, at least 5 of 8 with 0.96 and at least 2
			// of 4 with 0.996 (binomial).
			if min80 := int(math.Ceil(0.8*float64(seeds))) - map[bool]int{true: 2, false: 0}[seeds < 20]; covered < min80 {
				t.Errorf("gamma %g %s: dr's 90%% Wald interval holds the truth in %d of %d seeds", gamma, c.est, covered, seeds)
			}
			best := math.Min(mse[c.parts[0]], mse[c.parts[1]])
			// "No worse" up to the seeds' noise: within 25% of the better part.
			if mse["dr"] > 1.25*best {
				t.Errorf("gamma %g %s: dr MSE %.3g, its parts %s %.3g and %s %.3g", gamma, c.est, mse["dr"], c.parts[0], mse[c.parts[0]], c.parts[1], mse[c.parts[1]])
			}
			if c.est == ope.Horizon && gamma == 1 && math.Log(mse["dr"]) > -8.65 {
				t.Errorf("gamma 1 horizon: dr ln MSE %.3f, not below the authors' code's -8.65", math.Log(mse["dr"]))
			}
		}
	}
}
