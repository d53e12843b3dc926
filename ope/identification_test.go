package ope_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// IdentificationWarnings: where the target is the behavior, a ratio of 1
// is right and passes the held-out flow test, and so does the long-run
// ratio at gamma < 1; an interval that leaves out their estimates gets
// both warnings. Where the target differs (Problem1D), the test rejects a
// ratio of 1 and nothing is said of the estimate's own interval.
func TestIdentificationWarnings(t *testing.T) {
	p := lineargauss.Problem1D()
	same, err := rollout.SampleContinuous(rand.New(rand.NewPCG(3, 1)), p.System, p.Behavior, p.Behavior, 40, 200)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := ope.IdentificationWarnings("bch-kernel", same, 0.95, 100, 101, ratio.Kernel{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || !strings.Contains(ws[0], "a ratio of 1") || !strings.Contains(ws[1], "the long-run one") {
		t.Errorf("target = behavior, interval [100, 101]: warnings %q", ws)
	}
	d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(3, 2)), p.System, p.Behavior, p.Target, 40, 200)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ope.DensityRatio{Learner: ratio.Kernel{}}.Estimate(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	ws, err = ope.IdentificationWarnings("bch-kernel", d, 1, res.Value-0.05, res.Value+0.05, ratio.Kernel{}, 1)
	if err != nil || len(ws) != 0 {
		t.Errorf("Problem1D: warnings %q (%v)", ws, err)
	}
}
