package stream_test

import (
	"os"
	"testing"

	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim/taxi"
	"github.com/ihope-ope/ihope/stream"
)

// The Poisson bootstrap's 90% intervals hold the exact truth on Taxi
// (pi18 → pi19, gamma = 1) at about their level for the step-wise IS
// estimators, which are (nearly) unbiased for the exact T-step value.
// wis-trajectory (whose weights collapse) and bch-tabular (which targets
// the long-run average, from logs that start in a transient) are
// measured and logged, not held to the bar: their misses are the
// estimators', not the bootstrap's.
//
// The statistical set (IHOPE_STAT=1, and CI) runs 10 seeds of n = 50
// episodes of T = 100 steps, 100 resamples,
// and wants at least 7 of 10 per estimator: an interval that truly
// covers 90% fails that bar with probability P(X <= 6 | 10, 0.9) = 1.3%,
// one that covers 50% passes it with probability 17%. IHOPE_LONG=1 runs
// 100 seeds of n = 200, T = 400 (the demo's logs), where the percentile
// interval of importance weights this heavy-tailed covers less than 90%
// whichever bootstrap draws the resamples: it measures the multinomial
// bootstrap (ope.Bootstrap) on the same seeds too and wants the Poisson
// one within 6 seeds of it, every estimator. The rates are in docs/streaming.md.
func TestPoissonCoverageTaxi(t *testing.T) {
	seeds, n, T, need := 10, 50, 100, 7
	if os.Getenv("IHOPE_LONG") != "" {
		seeds, n, T = 100, 200, 400
	} else if !testsets.Stat() {
		t.Skip("statistical set: IHOPE_STAT=1 (CI runs it)")
	}
	m := taxi.New()
	target, _ := taxi.Policy("pi19")
	long, err := mdp.LongRun(m, target, 1)
	if err != nil {
		t.Fatal(err)
	}
	horizon := mdp.Value(m, target, nil, T, 1)
	truth := map[string]float64{"wis-stepwise": horizon, "is-stepwise": horizon, "wis-trajectory": horizon, "bch-tabular": long}
	names := []string{"wis-stepwise", "is-stepwise", "wis-trajectory", "bch-tabular"}
	isLong := os.Getenv("IHOPE_LONG") != ""
	held, heldMulti := map[string]int{}, map[string]int{}
	width := map[string]float64{}
	for s := range seeds {
		d := taxiLog(t, uint64(1000+s), n, T)
		stats, err := stream.New(stream.Config{Estimators: names, Gamma: 1, Resamples: 100, Seed: uint64(s), Alpha: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		if err := stats.Add(d, 0, d.NumEpisodes()); err != nil {
			t.Fatal(err)
		}
		res, err := stats.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if isLong {
			ests, _ := ope.New(names, ope.Options{})
			bs := ope.Bootstrap{Resamples: 100, Seed: uint64(s), Alpha: 0.1, Workers: 2}
			ivs, err := bs.Run(d, 1, ests)
			if err != nil {
				t.Fatal(err)
			}
			for k, iv := range ivs {
				if iv.Low <= truth[names[k]] && truth[names[k]] <= iv.High {
					heldMulti[names[k]]++
				}
			}
		}
		for _, e := range res.Estimates {
			if e.Err != nil || e.Interval == nil || e.Interval.Method != "percentile" {
				t.Fatalf("seed %d %s: %v %+v", s, e.Name, e.Err, e.Interval)
			}
			if e.Interval.Low <= truth[e.Name] && truth[e.Name] <= e.Interval.High {
				held[e.Name]++
			}
			width[e.Name] += (e.Interval.High - e.Interval.Low) / float64(seeds)
		}
	}
	for _, name := range names {
		t.Logf("%s: the 90%% Poisson bootstrap interval holds the exact truth %.6g in %d of %d seeds (mean width %.3g)",
			name, truth[name], held[name], seeds, width[name])
		if isLong {
			t.Logf("%s: the multinomial bootstrap's holds it in %d of %d", name, heldMulti[name], seeds)
			if held[name] < heldMulti[name]-6 {
				t.Errorf("%s: the Poisson bootstrap covers in %d of %d seeds, the multinomial in %d", name, held[name], seeds, heldMulti[name])
			}
			continue
		}
		if (name == "wis-stepwise" || name == "is-stepwise") && held[name] < need {
			t.Errorf("%s: %d of %d seeds, want at least %d", name, held[name], seeds, need)
		}
	}
}
