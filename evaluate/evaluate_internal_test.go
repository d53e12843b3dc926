package evaluate

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/internal/progress"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/pointmass"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// The transient warning is silent at gamma < 1 once gamma^T < 0.01 (the
// T-step and long-run discounted values then agree), and its advice names
// only rows that gave an estimate of each value.
func TestTransientWarningsGammaAndAdvice(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rows := []Row{
		{Estimator: "bch-kernel", Estimate: f(-0.5), Estimand: "long-run", Transient: f(-0.4), TransientSE: f(0.05)},
		{Estimator: "fqe", Estimate: f(-0.6), Estimand: "long-run"},
		{Estimator: "dr", Estimand: "long-run", Error: "refused"},
		{Estimator: "wis-stepwise", Estimate: f(-0.7), Estimand: "horizon"},
	}
	for _, c := range []struct {
		gamma     float64
		estimand  string
		want, not string
	}{
		{0.95, "long-run", "", ""}, // 0.95^200 = 3.5e-5
		{0.99, "long-run", "for the long-run value see fqe; for the 200-step value see wis-stepwise", "dr"},
		{1, "long-run", "8.0 standard errors of the gap", ""},
	} {
		rep := &Report{Estimates: rows}
		rep.Data.Gamma, rep.Data.MinLength, rep.Data.MaxLength, rep.Data.Estimand = c.gamma, 200, 200, c.estimand
		got := strings.Join(transientWarnings(rep), "\n")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) || c.not != "" && strings.Contains(got, c.not) {
			t.Errorf("gamma %g: %q, want %q", c.gamma, got, c.want)
		}
	}
}

// A row that targets the other estimand gets a note, which warns unless
// gamma^T < 0.001 at gamma < 1, where the two values agree to that
// fraction of the rewards' range.
func TestEstimandNote(t *testing.T) {
	for _, c := range []struct {
		got, asked ope.Estimand
		gamma      float64
		minLen     int
		warn       bool
		want       string
	}{
		{ope.LongRun, ope.LongRun, 0.99, 1000, false, ""},
		{"", ope.Horizon, 1, 100, false, ""},
		{ope.LongRun, ope.Horizon, 1, 1000, true, "targets the long-run value, not the horizon value asked for"},
		{ope.LongRun, ope.Horizon, 0.99, 100, true, "targets the long-run value, not the horizon value asked for"}, // 0.99^100 = 0.37
		{ope.LongRun, ope.Horizon, 0.95, 100, true, "targets the long-run value, not the horizon value asked for"}, // 0.0059: Taxi's bound 0.12
		{ope.LongRun, ope.Horizon, 0.99, 1000, false, "the two differ by at most 4.3e-05 times the rewards' range"},
		{ope.Horizon, ope.LongRun, 0.95, 200, false, "differ by at most 3.5e-05"},
	} {
		note, warn := estimandNote(c.got, c.asked, c.gamma, c.minLen)
		if warn != c.warn || c.want == "" && note != "" || !strings.Contains(note, c.want) {
			t.Errorf("%s asked %s, gamma %g, T %d: %q (warn %v), want %q (warn %v)", c.got, c.asked, c.gamma, c.minLen, note, warn, c.want, c.warn)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{{"512MB", 512 << 20}, {"8GB", 8 << 30}, {"1.5g", 3 << 29}, {"100", 100}, {"2KiB", 2048}, {"0", -1}, {"-1GB", -1}, {"x", -1}} {
		got, err := parseBytes(c.in)
		if c.want < 0 && err == nil || c.want >= 0 && (err != nil || got != c.want) {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

// The ranking of a report built by hand: three policies with references
// A 1, B 0.5, C 0 and two estimators. "good" orders them B, A, C: rank
// differences 1, -1, 0, so Spearman's rho = 1 - 6*2/(3*8) = 0.5, and its
// pick B has regret (1 - 0.5)/(1 - 0) = 0.5. "partial" failed on A: it
// ranks C over B, so over the two compared rho = -1 and regret@1 = 1.
func TestRankingByHand(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rep := &Report{Policies: []PolicyInfo{
		{Name: "A", Reference: f(1)}, {Name: "B", Reference: f(0.5)}, {Name: "C", Reference: f(0)},
	}}
	for _, r := range []struct {
		est, pol string
		v        *float64
	}{
		{"good", "A", f(0.7)}, {"good", "B", f(0.8)}, {"good", "C", f(-1)},
		{"partial", "A", nil}, {"partial", "B", f(2)}, {"partial", "C", f(3)},
	} {
		rep.Estimates = append(rep.Estimates, Row{Estimator: r.est, Policy: r.pol, Estimate: r.v})
	}
	rk := newRanking(rep)
	if got := strings.Join(rk.ReferenceOrder, ">"); got != "A>B>C" {
		t.Errorf("reference order %s", got)
	}
	want := []struct {
		order, failed    string
		compared         int
		spearman, regret float64
	}{
		{"B>A>C", "", 3, 0.5, 0.5},
		{"C>B", "A", 2, -1, 1},
	}
	for i, w := range want {
		e := rk.Estimators[i]
		if got := strings.Join(e.Order, ">"); got != w.order || strings.Join(e.Failed, ",") != w.failed || e.Compared != w.compared ||
			e.Spearman == nil || math.Abs(*e.Spearman-w.spearman) > 1e-12 || e.RegretAt1 == nil || math.Abs(*e.RegretAt1-w.regret) > 1e-12 {
			t.Errorf("%s: %+v; want %+v", e.Estimator, e, w)
		}
	}
}

// A row outside the rewards' range is left out of the ranking and the
// recommendation, and the ranking says so.
func TestRankingLeavesOutOfRange(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	rep := &Report{Data: DataSummary{Estimand: "horizon", Steps: 10, rewardLow: -1, rewardHigh: 0},
		Policies: []PolicyInfo{{Name: "A"}, {Name: "B"}}}
	for _, r := range []struct {
		est, pol string
		x        float64
	}{{"fqe", "A", -0.5}, {"fqe", "B", 7.1}, {"dr", "A", -0.5}, {"dr", "B", -0.2}} {
		rep.Estimates = append(rep.Estimates, Row{Estimator: r.est, Policy: r.pol, Estimand: "horizon", Estimate: v(r.x),
			CILow: v(r.x - 0.1), CIHigh: v(r.x + 0.1)})
	}
	rk := newRanking(rep)
	for _, e := range rk.Estimators {
		if e.Estimator == "fqe" && (len(e.Order) != 1 || e.Order[0] != "A" || len(e.OutOfRange) != 1 || e.OutOfRange[0] != "B" || len(e.Failed) != 0) {
			t.Errorf("fqe ranking %+v: want A only, B out of range", e)
		}
		if e.Estimator == "dr" && (len(e.Order) != 2 || e.Order[0] != "B") {
			t.Errorf("dr ranking %+v", e)
		}
	}
	recommend(rep)
	for _, r := range rep.Recommended {
		if r.Policy == "B" && (r.Estimator == nil || *r.Estimator != "dr") {
			t.Errorf("B: recommended %+v, want dr (fqe is outside the range)", r)
		}
	}
}

// A row its own diagnostics distrust (here a bootstrap bias beyond half
// its interval) is left out of the ranking as it is of the
// recommendation, and the ranking says so.
func TestRankingLeavesDistrusted(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	rep := &Report{Data: DataSummary{Estimand: "horizon", Steps: 10, rewardLow: -1, rewardHigh: 0},
		Policies: []PolicyInfo{{Name: "A"}, {Name: "B"}}}
	for _, r := range []struct {
		est, pol string
		x, bias  float64
	}{{"fqe", "A", -0.5, 0}, {"fqe", "B", -0.1, 0.3}, {"dr", "A", -0.5, 0}, {"dr", "B", -0.2, 0}} {
		rep.Estimates = append(rep.Estimates, Row{Estimator: r.est, Policy: r.pol, Estimand: "horizon", Estimate: v(r.x),
			CILow: v(r.x - 0.1), CIHigh: v(r.x + 0.1), BootstrapBias: v(r.bias), Resamples: 100})
	}
	rk := newRanking(rep)
	for _, e := range rk.Estimators {
		switch e.Estimator {
		case "fqe":
			if len(e.Order) != 1 || e.Order[0] != "A" || len(e.Distrusted) != 1 || e.Distrusted[0] != "B" || len(e.Failed) != 0 {
				t.Errorf("fqe ranking %+v: want A only, B distrusted", e)
			}
		case "dr":
			if len(e.Order) != 2 || e.Order[0] != "B" || len(e.Distrusted) != 0 {
				t.Errorf("dr ranking %+v", e)
			}
		}
	}
	var out strings.Builder
	printRanking(&out, rk)
	if !strings.Contains(out.String(), "A (distrusted by its diagnostics, left out: B)") {
		t.Errorf("the ranking does not say fqe's B is left out:\n%s", out.String())
	}
	recommend(rep)
	for _, r := range rep.Recommended {
		if r.Policy == "B" && (r.Estimator == nil || *r.Estimator != "dr") {
			t.Errorf("B: recommended %+v, want dr (fqe is distrusted)", r)
		}
	}
}

// The bootstrap's bars are labelled by what they resample: the slow
// estimators' refits have a bar (and so an ETA) of their own, named, and
// with several target policies each bar names its policy.
func TestGroupLabel(t *testing.T) {
	var entries []ope.Entry
	for _, n := range []string{"wis-stepwise", "bch-kernel", "bch-neural"} {
		e, _ := ope.Lookup(n)
		entries = append(entries, e)
	}
	c := &Evaluator{}
	if got := c.groupLabel(entries, []int{0}); got != "bootstrap" {
		t.Errorf("fast group: %q", got)
	}
	if got := c.groupLabel(entries, []int{1, 2}); got != "bootstrap, refitting bch-kernel and bch-neural" {
		t.Errorf("slow group: %q", got)
	}
	c.policyLabel = "pi19"
	if got := c.groupLabel(entries, []int{2}); got != "pi19: bootstrap, refitting bch-neural" {
		t.Errorf("slow group of a policy: %q", got)
	}
}

// A shard rewritten between bch-kernel's two passes (by the test hook
// betweenPasses) fails the run with an error naming it; before, the
// estimate mixed the two logs and exit was 0.
func TestEstimateStreamShardChangedBetweenPasses(t *testing.T) {
	p := lineargauss.Problem1D()
	d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(4, 0)), p.System, p.Behavior, p.Target, 24, 80)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	per := d.NumEpisodes() / 3
	var files []string
	for i := range 3 {
		var idx []int
		for e := i * per; e < (i+1)*per; e++ {
			idx = append(idx, e)
		}
		files = append(files, filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i)))
		if err := logio.WriteFile(files[i], d.Subset(idx)); err != nil {
			t.Fatal(err)
		}
	}
	changed := filepath.Join(dir, "part-1.parquet")
	betweenPasses = func() {
		// Half the shard's episodes: 4 where the first pass read 8.
		if err := logio.WriteFile(changed, d.Subset([]int{8, 9, 10, 11})); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { betweenPasses = nil }()
	o := Defaults()
	o.Bootstrap, o.Estimators = 0, []string{"bch-kernel"}
	ev, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ev.EvaluateShards(files, logio.ReadOptions{}, dir, nil, nil)
	if err == nil || !strings.Contains(err.Error(), changed+": the shard changed between the two passes over the shards (its size went from") {
		t.Errorf("error %v", err)
	}
}

// The training bar counts the evaluations of every network of the
// ensemble and one step for the estimate: a fit without early stopping
// makes exactly as many evaluations as Evaluations says, so the bar
// stands at 9 of 10 when the networks are trained; an estimator that
// trains more networks raises its total instead of running past it.
func TestTrainingProgress(t *testing.T) {
	var buf bytes.Buffer
	opts := ope.Options{Restarts: 3, Neural: ratio.Neural{MaxIter: 120, EvalEvery: 50}}
	per, err := opts.Neural.Evaluations()
	if err != nil || per != 3 { // iterations 50, 100 and the last, 120
		t.Fatalf("Evaluations = %d, %v; want 3", per, err)
	}
	progress.Throttle = 0
	defer func() { progress.Throttle = 100 * time.Millisecond }()
	progress, finish := trainingProgress(&buf, "bch-neural", opts)
	for range 3 * per {
		progress(0, 0, 0)
	}
	if out := buf.String(); !strings.Contains(out, "bch-neural: training 3 networks") || !strings.Contains(out, " 90%") {
		t.Errorf("bar after 9 of 9 evaluations: %q", out)
	}
	buf.Reset()
	progress(0, 0, 0)                                        // a tenth: a fourth network's
	if out := buf.String(); !strings.Contains(out, " 76%") { // 10 of 13
		t.Errorf("bar after 10 evaluations, total raised to 13: %q", out)
	}
	finish()
}

// rowWarnings reads each row's interval (the bootstrap's, else the Wald
// one) and bounds the gap between the estimands by gamma^T times the
// rewards' range: at gamma = 0.95 over 200 steps the two estimands' rows
// are compared, at 0.99 not (ope.DisagreementWarning has the rules).
func TestRowWarningsAdapter(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rows := []Row{
		{Estimator: "bch-neural", Estimand: "long-run", Estimate: f(-0.1), CILow: f(-0.2), CIHigh: f(0)},
		{Estimator: "wis-stepwise", Estimand: "horizon", Estimate: f(-1.3), WaldLow: f(-1.6), WaldHigh: f(-1.1)},
	}
	for _, c := range []struct {
		gamma float64
		want  string
	}{
		{0.95, "wis-stepwise and bch-neural both estimate one value (at gamma = 0.95 the horizon and long-run values differ here by at most 7e-05"},
		{0.99, ""},
	} {
		rep := &Report{Estimates: rows}
		rep.Data.Gamma, rep.Data.MinLength, rep.Data.rewardRange = c.gamma, 200, 2
		got := strings.Join(rowWarnings(rep), "\n")
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("gamma %g: %q, want %q", c.gamma, got, c.want)
		}
	}
}

// distrusted gives the reasons applyInterval warns of, and no reason to a
// row without them.
func TestDistrusted(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	base := Row{Estimate: f(0.5), CILow: f(0.4), CIHigh: f(0.6), Resamples: 100}
	for _, c := range []struct {
		name string
		edit func(*Row)
		want string
	}{
		{"clean", func(*Row) {}, ""},
		{"bias under half the width", func(r *Row) { r.BootstrapBias = f(0.09) }, ""},
		{"bias over half the width", func(r *Row) { r.BootstrapBias = f(-0.11) }, "biased"},
		{"a tenth of the resamples failed", func(r *Row) { r.BootstrapFailures = 10 }, ""},
		{"more than a tenth failed", func(r *Row) { r.BootstrapFailures = 11 }, "failed on 11 of 100"},
		{"networks spread over a quarter of the width", func(r *Row) { r.RestartSD = f(0.051) }, "networks disagree"},
		{"no interval, no verdict", func(r *Row) { r.CILow, r.CIHigh, r.BootstrapBias = nil, nil, f(1) }, ""},
	} {
		r := base
		c.edit(&r)
		got := distrusted(r)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// On real states the row names the class its value model chose, and the
// JSON lists every candidate's held-out score, the winner's the least.
func TestRowSelection(t *testing.T) {
	sys, target, behavior := pointmass.Problem()
	d, err := sys.Sample(rand.New(rand.NewPCG(1, 0)), behavior, target, 60, 100)
	if err != nil {
		t.Fatal(err)
	}
	o := Defaults()
	o.Gamma, o.Bootstrap, o.Estimators, o.Estimand = 0.99, 0, []string{"fqe"}, "long-run"
	ev, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ev.Evaluate(d, "pointmass", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Estimates[0]
	if r.Estimate == nil || len(r.Selection) < 2 {
		t.Fatalf("row %+v", r)
	}
	best := r.Selection[0]
	for _, c := range r.Selection {
		if c.Score < best.Score {
			best = c
		}
	}
	if r.Model != "linear("+best.Model+")" {
		t.Errorf("model %q, the least held-out score %s's", r.Model, best.Model)
	}
}

// The resamples refit the class the whole log chose: a chosen polynomial
// degree, or the network the selection escalated to (not a network the
// user asked for, which is already fixed); nothing else is fixed.
func TestResampleOptions(t *testing.T) {
	for _, c := range []struct {
		model, class, asked string
		want                int
		wantModel           string
	}{{"linear(poly4)", "poly4", "", 4, ""}, {"kernel/linear(poly6)", "poly6", "", 6, ""}, {"linear", "", "", 0, ""}, {"tabular", "", "", 0, ""},
		{"marginal/tabular", "", "", 0, ""}, {"neural", "neural", "", 0, "neural"}, {"kernel/neural", "neural", "", 0, "neural"}, {"linear(poly3)", "poly3", "linear", 3, "linear"}} {
		o := resampleOptions(ope.Options{ValueModel: c.asked}, Row{Model: c.model, modelClass: c.class})
		if o.ValueDegree != c.want || o.ValueModel != c.wantModel {
			t.Errorf("%s: degree %d, value model %q; want %d, %q", c.model, o.ValueDegree, o.ValueModel, c.want, c.wantModel)
		}
	}
}
