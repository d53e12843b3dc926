package benchmark

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/research/experiment"
)

// The benchmark's run settings.
const (
	// DefaultSeeds seeds a full run; QuickSeeds a quick one.
	DefaultSeeds = 20
	QuickSeeds   = 2
	// Alpha gives the intervals' level, 1 - Alpha = 90%.
	Alpha = 0.1
	// Resamples is the number of bootstrap resamples behind an interval
	// (QuickResamples in quick mode): enough for a 90% percentile
	// interval's ends to within a few percent of coverage, and 100 refits
	// per estimator keep a full run within the hour on two cores.
	Resamples      = 100
	QuickResamples = 10
)

// Quick returns the small version of w run by quick mode (a smoke test
// in seconds): at most 16 episodes of at most 50 steps, and three
// targets of the family (its first, middle and last).
func (w *World) Quick() *World {
	q := *w
	q.N = min(w.N, 16)
	q.T = min(w.T, 50)
	if n := len(w.Targets); n > 3 {
		q.Targets = []Target{w.Targets[0], w.Targets[n/2], w.Targets[n-1]}
	}
	return &q
}

// Estimators returns the names of the estimators the benchmark runs on
// d: every registered estimator that applies to the log with options o
// and needs no simulator (the on-policy oracle is left out: it is the
// truth's Monte Carlo twin, not an off-policy estimator), then the
// Variants of those that run.
func Estimators(d *dataset.Dataset, o ope.Options) []string {
	var out []string
	for _, name := range ope.Applicable(d, o) {
		if e, _ := ope.Lookup(name); e.LogsOnly() {
			out = append(out, name)
		}
	}
	for _, v := range Variants {
		if slices.Contains(out, v.Of) {
			out = append(out, v.Name)
		}
	}
	return out
}

// Variant is a registered estimator run with a learner setting other
// than the default ihope estimate picks, so that the leaderboard shows
// whether the default is the better choice.
type Variant struct {
	// Name is the row's name, Of the registered estimator it varies.
	Name, Of string
	// Set changes the options the estimator is built from.
	Set func(o *ope.Options)
}

// Variants are the learner settings the leaderboard weighs against the
// defaults: dr's ratio (under the horizon estimand the default is the
// time-indexed ratio of mis, "marginal"; the alternative the paper's
// stationary one) and its cross-fitting (default 2 folds; 1 fits the
// value model on the episodes it corrects).
var Variants = []Variant{
	{Name: "dr[ratio=tabular]", Of: "dr", Set: func(o *ope.Options) { o.RatioModel = "tabular" }},
	{Name: "dr[folds=1]", Of: "dr", Set: func(o *ope.Options) { o.Folds = 1 }},
}

// build returns the estimators of names (registered ones and Variants)
// built from o.
func build(names []string, o ope.Options) ([]ope.Estimator, error) {
	out := make([]ope.Estimator, len(names))
	for i, name := range names {
		oi := o
		e, ok := entryOf(name, &oi)
		if !ok {
			return nil, fmt.Errorf("benchmark: unknown estimator %q", name)
		}
		out[i] = e.New(oi)
	}
	return out, nil
}

// entryOf returns the registry entry of a row's name, a variant's
// (Variant.Of) included, and applies the variant's setting to o if o is
// not nil.
func entryOf(name string, o *ope.Options) (ope.Entry, bool) {
	for _, v := range Variants {
		if v.Name == name {
			name = v.Of
			if o != nil {
				v.Set(o)
			}
		}
	}
	return ope.Lookup(name)
}

// Run computes one cell: the exact truths of target i, the log of the
// cell's seed (the same episodes for every target of the world), every
// applicable estimator asked for the horizon value, and each estimate's
// 90% interval: the Wald interval estimate ± z SE where the estimator
// gives a standard error (ope.StdErrer: dr's influence function,
// clustered by episode, which is 0 when every episode's term agrees), the
// bootstrap over episodes with Resamples resamples otherwise (percentile;
// mean ± t sd when fewer than ope.PercentileMin resamples succeed, as in
// quick mode). Each record says which ("wald", "percentile",
// "student-t"). Each record states the estimand of its value, and
// the runner scores it against that estimand's truth.
func (w *World) Run(ctx context.Context, c *experiment.Cell, i int, quick bool) (*experiment.Outcome, error) {
	t := w.Targets[i]
	truths, err := c.Memo(fmt.Sprintf("truth/%s/%s/T=%d", w.Name, t.Name, w.T), func() (any, error) { return w.Truths(i) })
	if err != nil {
		return nil, err
	}
	d, err := w.Sample(c.Rand("data/"+w.Name), i)
	if err != nil {
		return nil, err
	}
	o := ope.Options{Target: t.Logged, Estimand: ope.Horizon, Seed: c.Rand("train/" + w.Name + "/" + t.Name).Uint64()}
	names := Estimators(d, o)
	ests, err := build(names, o)
	if err != nil {
		return nil, err
	}
	recs := make([]results.Record, len(ests))
	var boot []int // the estimators whose interval is the bootstrap's
	z := distuv.UnitNormal.Quantile(1 - Alpha/2)
	for k, e := range ests {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		recs[k].Estimator = names[k]
		res, err := e.Estimate(d, w.Gamma)
		if err == nil && (math.IsNaN(res.Value) || math.IsInf(res.Value, 0)) {
			err = fmt.Errorf("%s: the estimate is %v", e.Name(), res.Value)
		}
		if err != nil {
			recs[k].Error = err.Error()
			continue
		}
		recs[k].Estimate = results.Float(res.Value)
		recs[k].Estimand = string(res.Estimand)
		if en, ok := ope.Lookup(e.Name()); ok && res.Weights != nil {
			recs[k].Collapsed = len(ope.WeightSummaryWarnings(en.Name, en.Unit, ope.SummarizeWeights(res.Weights))) > 0
		}
		if se, ok := e.(ope.StdErrer); ok && se.HasSE() && d.NumEpisodes() > 1 && !math.IsNaN(res.SE) && !math.IsInf(res.SE, 0) {
			lo, hi := results.Float(res.Value-z*res.SE), results.Float(res.Value+z*res.SE)
			recs[k].Low, recs[k].High, recs[k].Interval = &lo, &hi, "wald"
			continue
		}
		boot = append(boot, k)
	}
	if len(boot) > 0 {
		B := Resamples
		if quick {
			B = QuickResamples
		}
		bs := ope.Bootstrap{Resamples: B, Alpha: Alpha, Seed: c.Rand("bootstrap/" + w.Name + "/" + t.Name).Uint64(), Workers: 1}
		sub := make([]ope.Estimator, len(boot))
		for j, k := range boot {
			sub[j] = ests[k]
		}
		ivs, err := bs.Run(d, w.Gamma, sub)
		if err != nil {
			return nil, err
		}
		for j, k := range boot {
			if len(ivs[j].Estimates) == 0 {
				continue // every resample failed: no interval
			}
			lo, hi := results.Float(ivs[j].Low), results.Float(ivs[j].High)
			recs[k].Low, recs[k].High, recs[k].Interval = &lo, &hi, ivs[j].Method
			bias := results.Float(stat.Mean(ivs[j].Estimates, nil) - float64(recs[k].Estimate))
			recs[k].BootstrapBias, recs[k].BootstrapFailures, recs[k].Resamples = &bias, ivs[j].Failures, B
		}
	}
	tr := truths.(map[ope.Estimand]float64)
	out := &experiment.Outcome{Truth: tr[ope.Horizon], TruthMethod: "exact", Records: recs,
		Truths: make(map[string]float64, len(tr))}
	for name, v := range tr {
		out.Truths[string(name)] = v
	}
	// The test ihope estimate runs before it recommends (evaluate's
	// checkMarkov), for the leaderboard's recommended estimate.
	if mk, err := (ope.MarkovTest{Seed: c.Rand("markov/" + w.Name + "/" + t.Name).Uint64()}).Run(d); err == nil {
		out.Metrics = map[string]float64{MarkovMetric: mk.PValue}
	}
	return out, nil
}

// MarkovMetric names a cell's p-value of ope.MarkovTest in the results
// file's metrics.
const MarkovMetric = "markov_p"
