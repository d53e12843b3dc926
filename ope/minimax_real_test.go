package ope_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim/lineargauss"
)

// On real states (the discrete-action linear-Gaussian problem, truth by
// quadrature) the closed-form kernel fits of mwl, dualdice and mql
// converge to the long-run truth as the logs grow: with 16 times more
// episodes their RMSE over the seeds falls at least twofold, below 0.05
// (an error like 1/sqrt(n) falls 4x per 16x). fqe (LSTD-Q on quadratic
// features, which cannot represent this q) is logged beside them: it
// does not converge. In the statistical set (IHOPE_STAT=1, and CI) 3
// seeds of n = 10 and 160 episodes of 100
// steps; with IHOPE_LONG=1 the table of n = 20, 80, 320 over 8 seeds that
// docs/estimators.md quotes.
func TestMinimaxRealStatesConverge(t *testing.T) {
	if !testsets.Stat() {
		t.Skip("statistical set: IHOPE_STAT=1 (CI runs it)")
	}
	seeds, ns := 3, []int{10, 160}
	if os.Getenv("IHOPE_LONG") != "" {
		seeds, ns = 8, []int{20, 80, 320}
	}
	sys, target, behavior := lineargauss.DiscreteProblem()
	names := []string{"mwl", "dualdice", "mql", "fqe"}
	ests, err := ope.New(names, ope.Options{Estimand: ope.LongRun})
	if err != nil {
		t.Fatal(err)
	}
	for _, gamma := range []float64{0.9, 1} {
		truth, err := sys.LongRun(target, gamma)
		if err != nil {
			t.Fatal(err)
		}
		rmse := map[string][]float64{}
		for _, n := range ns {
			se := map[string]float64{}
			for seed := range seeds {
				d, err := sys.Sample(rand.New(rand.NewPCG(uint64(seed)+1, 7)), behavior, target, n, 100)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range ests {
					res, err := e.Estimate(d, gamma)
					if err != nil {
						t.Fatalf("%s: %v", e.Name(), err)
					}
					se[e.Name()] += (res.Value - truth) * (res.Value - truth) / float64(seeds)
				}
			}
			for _, name := range names {
				rmse[name] = append(rmse[name], math.Sqrt(se[name]))
			}
		}
		var b strings.Builder
		for _, name := range names {
			fmt.Fprintf(&b, "\n  %-12s", name)
			for _, r := range rmse[name] {
				fmt.Fprintf(&b, " %8.4f", r)
			}
		}
		t.Logf("gamma %g (truth %.6f), RMSE over %d seeds for n = %v episodes of 100 steps:%s", gamma, truth, seeds, ns, b.String())
		for _, name := range names[:3] {
			first, last := rmse[name][0], rmse[name][len(ns)-1]
			fall := 2.0
			if name == "mql" && gamma == 1 {
				// Degree 4 cannot represent this q: a bias of about +0.02
				// at gamma = 1 that no data removes (see value.MQL), so
				// its RMSE falls towards that floor, not twofold (CI: 0.041 to
				// 0.024; IHOPE_LONG: 0.039, 0.024, 0.026).
				fall = 1.25
			}
			if !(last < 0.05 && last < first/fall) {
				t.Errorf("gamma %g: %s RMSE %.4f at n = %d, %.4f at n = %d", gamma, name, first, ns[0], last, ns[len(ns)-1])
			}
		}
	}
}

// On a log that starts far from the target's stationary law (s_0 ~ N(3,
// 0.5^2), 50-step episodes: the rewards of the first steps are about -9
// against a long-run -0.50), mql's average reward at gamma = 1 has no
// bias beyond its features' (degree 4 cannot represent a softmax
// policy's q exactly: +-0.02 as the ridge varies). With one ridge for all
// of q's coefficients, scaled to their mean curvature, the low-degree
// coefficients were shrunk hardest and the shrunk part of q(s) - q(s')
// moved into rho: -0.156 at n = 100, -0.152 at n = 400, not shrinking with
// the data. The ridge is now relative to each coefficient's own
// curvature and 1e-6: +0.035, the features' bias (with 1e-4, -0.011).
func TestMQLTransientStart(t *testing.T) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	sys.InitMean, sys.InitSD = 3, 0.5
	truth, err := sys.LongRun(target, 1)
	if err != nil {
		t.Fatal(err)
	}
	mql, err := ope.New([]string{"mql"}, ope.Options{Estimand: ope.LongRun})
	if err != nil {
		t.Fatal(err)
	}
	const seeds = 4
	bias := 0.0
	for seed := range seeds {
		d, err := sys.Sample(rand.New(rand.NewPCG(uint64(seed)+1, 9)), behavior, target, 100, 50)
		if err != nil {
			t.Fatal(err)
		}
		res, err := mql[0].Estimate(d, 1)
		if err != nil {
			t.Fatal(err)
		}
		bias += (res.Value - truth) / seeds
	}
	t.Logf("mql's mean error over %d seeds: %.4f (truth %.4f)", seeds, bias, truth)
	if math.Abs(bias) > 0.05 {
		t.Errorf("mql's mean error %.4f over %d seeds, want within 0.05 of the long-run truth %.4f", bias, seeds, truth)
	}
}
