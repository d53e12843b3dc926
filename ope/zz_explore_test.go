package ope_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ihope-ope/ihope/env/lineargauss"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/value"
)

func TestZZExplore(t *testing.T) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	for _, gamma := range []float64{0.9, 1} {
		truth, _ := sys.LongRun(target, gamma)
		beh, _ := sys.LongRun(behavior, gamma)
		t.Logf("gamma %g truth %.4f behavior %.4f", gamma, truth, beh)
		for _, n := range []int{20, 80, 320} {
			for seed := range 2 {
				d, err := sys.Sample(rand.New(rand.NewPCG(uint64(seed+1), 7)), behavior, target, n, 100)
				if err != nil {
					t.Fatal(err)
				}
				line := ""
				for _, e := range []ope.Estimator{
					ope.PairRatio{Learner: ratio.MWL{}, Normalise: true},
					ope.PairRatio{Learner: ratio.MWL{}},
					ope.PairRatio{Learner: ratio.DualDICE{}},
					ope.PairRatio{Learner: ratio.DualDICE{}, Normalise: true},
					ope.MQL{},
					ope.FQE{Value: value.Linear{}, Estimand: ope.LongRun},
					ope.DensityRatio{Learner: ratio.Kernel{}},
				} {
					st := time.Now()
					res, err := e.Estimate(d, gamma)
					if err != nil {
						t.Fatalf("%s: %v", e.Name(), err)
					}
					line += " " + e.Name() + " " + fmtf(res.Value-truth) + " (" + time.Since(st).Round(time.Millisecond).String() + ")"
				}
				t.Logf("n %d seed %d:%s", n, seed, line)
			}
		}
	}
}

func fmtf(x float64) string { return fmt.Sprintf("%+.4g", x) }
