package ope_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// Identify's held-out tests (no fitted model given: no range): where the
// target is the behavior, a ratio of 1 is right and passes the held-out
// flow test, and so does the long-run ratio at gamma < 1; an interval that leaves out their estimates gets
// both warnings. Where the target differs (Problem1D), the test rejects a
// ratio of 1 and nothing is said of the estimate's own interval.
func TestIdentificationWarnings(t *testing.T) {
	same, _ := kernelLog(t, true)
	id, err := ope.Identify("bch-kernel", same, 0.95, nil, 100, 101, ratio.Kernel{}, 1)
	if err != nil || id.Range != nil {
		t.Fatal(id, err)
	}
	ws := id.Warnings
	if len(ws) != 2 || !strings.Contains(ws[0], "a ratio of 1") || !strings.Contains(ws[1], "the long-run one") {
		t.Errorf("target = behavior, interval [100, 101]: warnings %q", ws)
	}
	d, res := kernelLog(t, false)
	id, err = ope.Identify("bch-kernel", d, 1, nil, res.Value-0.05, res.Value+0.05, ratio.Kernel{}, 1)
	if ws = id.Warnings; err != nil || len(ws) != 0 {
		t.Errorf("Problem1D: warnings %q (%v)", ws, err)
	}
}

// kernelLog returns 40 episodes of 200 steps of Problem1D, its target the
// behavior itself if same, and bch-kernel's estimate on them at gamma = 1.
func kernelLog(t *testing.T, same bool) (*dataset.Dataset, ope.Result) {
	t.Helper()
	p := lineargauss.Problem1D()
	target, stream := p.Target, uint64(2)
	if same {
		target, stream = p.Behavior, 1
	}
	d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(3, stream)), p.System, p.Behavior, target, 40, 200)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ope.DensityRatio{Learner: ratio.Kernel{}}.Estimate(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	return d, res
}

// Identify: on a log that locates the ratio (Problem1D, 40 episodes) the
// identification range holds the estimate and the average reward and,
// beside an interval of its width, says nothing; beside an interval 20
// times narrower it warns that the log does not pin the ratio down, in
// the range's words. Where the target is the behavior, the constant ratio
// fits exactly and the range is the one point it gives; beside an
// interval far from it, the ratio of 1's warning stays (the range, one
// point, does not warn).
func TestIdentify(t *testing.T) {
	d, res := kernelLog(t, false)
	km := res.Model.(*ratio.KernelModel)
	id, err := ope.Identify("bch-kernel", d, 1, km, res.Value-0.05, res.Value+0.05, ratio.Kernel{}, 1)
	if err != nil || id.Range == nil {
		t.Fatalf("Problem1D: %+v, %v", id, err)
	}
	r := id.Range
	t.Logf("Problem1D: estimate %.4f, range [%.4f, %.4f]", res.Value, r.Low, r.High)
	if len(id.Warnings) != 0 || !(r.Low <= res.Value && res.Value <= r.High) || !(r.Low <= -0.24079 && -0.24079 <= r.High) {
		t.Errorf("Problem1D, interval of width 0.1: range %+v, warnings %q", r, id.Warnings)
	}
	w := (r.High - r.Low) / 40
	id, err = ope.Identify("bch-kernel", d, 1, km, res.Value-w, res.Value+w, ratio.Kernel{}, 1)
	if err != nil || len(id.Warnings) != 1 || !strings.Contains(id.Warnings[0], "the ratios of its class that pass the flow test") {
		t.Errorf("Problem1D, a narrow interval: warnings %q (%v)", id.Warnings, err)
	}
	same, res := kernelLog(t, true)
	id, err = ope.Identify("bch-kernel", same, 1, res.Model.(*ratio.KernelModel), 100, 100.001, ratio.Kernel{}, 1)
	if err != nil || id.Range == nil || id.Range.High-id.Range.Low > 1e-9 || len(id.Warnings) != 1 || !strings.Contains(id.Warnings[0], "a ratio of 1") {
		t.Errorf("target = behavior, interval [100, 100.001]: range %+v, warnings %q (%v)", id.Range, id.Warnings, err)
	}
}
