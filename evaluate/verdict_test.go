package evaluate_test

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/evaluate"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// The deploy verdict on Taxi (issue 30): pi19 against pi18 (exact
// 400-step values -0.141180 and -0.265906) on logs of 200 episodes of
// 400 steps under pi18. The guaranteed bounds cannot separate them (hcope
// over 400-step weights spans most of the reward range), so the verdict
// falls back on the recommended estimator's paired bootstrap, and says
// it carries no guarantee: pi19 is "better" on every seed. pi18 against
// a copy of itself (another target file, the same policy) is never
// better or worse: the paired differences are 0 on every resample.
// 3 seeds; IHOPE_LONG=1: 20.
func TestTaxiVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("three evaluations of three policies")
	}
	seeds := 3
	if os.Getenv("IHOPE_LONG") == "1" {
		seeds = 20
	}
	pi19, _ := taxi.Policy("pi19")
	pi18, _ := taxi.Policy("pi18")
	better := 0
	for seed := range seeds {
		d, err := rollout.Sample(rand.New(rand.NewPCG(uint64(seed)+1, 30)), sim.NewSampler(taxi.New()), pi18, pi19, 200, 400)
		if err != nil {
			t.Fatal(err)
		}
		o := evaluate.Defaults()
		o.Estimators = []string{"model-based", "wis-stepwise", "wis-trajectory"}
		o.Bounds, o.RewardRange, o.Baseline = true, "-1,20", "pi18"
		ev, err := evaluate.New(o)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := ev.Evaluate(d, "taxi", []evaluate.Target{{Name: "pi19", Policy: pi19}, {Name: "pi18", Policy: pi18}, {Name: "pi18 again", Policy: pi18}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Verdicts) != 2 {
			t.Fatalf("seed %d: %d verdicts, want 2 (pi19 and the copy of pi18)", seed, len(rep.Verdicts))
		}
		for _, r := range rep.Recommended {
			t.Logf("seed %d: recommended for %s: %v: %s", seed, r.Policy, r.Estimator != nil, r.Why)
		}
		for _, v := range rep.Verdicts {
			t.Logf("seed %d: %s: %s (%s, level %.2f, guaranteed %v): %s", seed, v.Policy, v.Verdict, v.Method, v.Level, v.Guaranteed, v.Why)
			switch v.Policy {
			case "pi19":
				if v.Verdict == ope.Better {
					better++
				}
				if v.Verdict == ope.Worse {
					t.Errorf("seed %d: pi19 worse than pi18", seed)
				}
				if v.Method == "bootstrap" && (v.Guaranteed || !strings.Contains(v.Why, "no guarantee")) {
					t.Errorf("seed %d: a bootstrap verdict that does not say it has no guarantee: %+v", seed, v)
				}
			case "pi18 again":
				if v.Verdict != ope.NotShown {
					t.Errorf("seed %d: pi18 is %s than itself", seed, v.Verdict)
				}
			}
		}
	}
	if better < seeds {
		t.Errorf("pi19 better than pi18 on %d of %d seeds, want all", better, seeds)
	}
}
