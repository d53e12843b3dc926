package evaluate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/stream"
	"github.com/ihope-ope/ihope/value"
)

// poissonMethod is the bootstrap's method in the report of a stream.
const poissonMethod = "episodes (Poisson)"

// newStats chooses the estimators from the flags and the first episodes
// (d): those asked for, or the default set's streamable ones that apply;
// those of the default set that apply but not with the value model asked
// for are said in the statistics' notes (stream.Config.Notes), as their
// rows fail on one file. The target's whole distribution is the
// --target-policy file's, or else gathered from every shard's
// target_prob_k columns (model-based).
func (c *Evaluator) newStats(d *dataset.Dataset, target *policy.Tabular) (*stream.Stats, error) {
	opts := c.streamOptions(target)
	// The minimax learners stream in their kernel form on real states.
	opts.RealStates = d.StateDim > 0
	names := c.Estimators
	var notes []string
	if len(names) == 0 {
		applies := opts
		if target == nil && d.Discrete() && d.ActionDim == 0 && d.HasTargetProbs() {
			applies.Target, _ = value.TableFromData(d) // these episodes' rows: enough to say what applies
		}
		for _, name := range stream.Streamable() {
			if c.movable && stream.Movable(name, opts) != nil {
				continue
			}
			en, _ := ope.Lookup(name)
			if !inDefaultSet(en, opts) {
				continue // dominated everywhere, or another estimand's (choose)
			}
			switch err := stream.Applies(name, d, applies); {
			case err == nil:
				names = append(names, name)
			case errors.Is(err, ope.ErrStationaryHorizon):
				// Applies, but not with the value model asked for: said,
				// as on one file, where its row fails with this reason.
				notes = append(notes, fmt.Sprintf("%s: not run: %v", name, err))
			}
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("no estimator that streams applies to these logs (the estimators that stream are %s)", strings.Join(stream.Streamable(), ", "))
		}
	}
	return stream.New(stream.Config{Estimators: names, Notes: notes, Gamma: c.Gamma, Resamples: c.Bootstrap, Seed: c.Seed,
		Alpha: c.Alpha, Options: opts})
}

// streamOptions are the registry options of a stream: the estimand, the
// value and ratio models asked for, and the target's table if given.
func (c *Evaluator) streamOptions(target *policy.Tabular) ope.Options {
	opts := ope.Options{Target: target, ValueModel: c.ValueModel, RatioModel: c.RatioModel,
		Seed: c.TrainSeed, Neural: ratio.Neural{BatchSize: c.NeuralBatch}, Restarts: c.Restarts, Reservoir: c.Reservoir,
		ValueNeural: c.NeuralValue, Minimax: c.NeuralMinimax}
	if c.Estimand != "" {
		opts.Estimand = ope.Estimand(c.Estimand)
	}
	return opts
}

// streamReport is the report of a stream's results, in ihope estimate's
// JSON schema: the rows, the data summary, the bootstrap and the
// warnings, as for a log in memory (rows carry no per-unit weights).
func streamReport(res *stream.Results, file string) *Report {
	cfg := res.Config
	estimand := cfg.Options.Estimand
	if estimand == "" {
		estimand = ope.Horizon
		if res.Summary.Episodes == 1 {
			estimand = ope.LongRun
		}
	}
	rep := &Report{Warnings: ope.DataWarnings(res.Summary)}
	if rep.Warnings == nil {
		rep.Warnings = []string{}
	}
	// As estimate on one file, the summary's warnings first (HorizonWarning
	// needs terminal episodes, which do not stream).
	if w := ope.UnloggedWarning(res.Summary); w != "" {
		rep.Warnings = append(rep.Warnings, w)
	}
	rep.Data = summaryOf(res.StateDim, res.Summary, cfg.Gamma)
	rep.Data.File = file
	rep.Data.Estimand = string(estimand)
	rep.Data.Behavior = behaviorLogged
	if !res.Behavior {
		rep.Data.Behavior = behaviorNone
	}
	rep.Warnings = append(rep.Warnings, res.Warnings...)
	if cfg.Resamples > 0 && res.Summary.Episodes > 1 {
		rep.Bootstrap = &BootstrapInfo{Resamples: cfg.Resamples, Alpha: cfg.Alpha, Method: poissonMethod, Seed: cfg.Seed}
	}
	for _, est := range res.Estimates {
		row := Row{Estimator: est.Name, Unit: string(est.Unit)}
		en, _ := ope.Lookup(est.Name)
		if est.Err != nil {
			row.Error = est.Err.Error()
			row.Estimand = string(en.Estimand(ope.Options{Estimand: estimand})) // what it would have targeted
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: no estimate: %v", est.Name, est.Err))
			rep.Estimates = append(rep.Estimates, row)
			continue
		}
		if en.Needs&ope.NeedsBehavior != 0 {
			row.Behavior = behaviorLogged
		}
		v := est.Result.Value
		if v == 0 {
			v = 0 // not -0
		}
		row.Estimate = &v
		row.Estimand = string(est.Result.Estimand)
		row.Model = est.Result.Learner
		if note, warn := estimandNote(est.Result.Estimand, estimand, cfg.Gamma, res.Summary.MinLength); note != "" {
			row.Note = note
			if warn {
				rep.Warnings = append(rep.Warnings, est.Name+": "+row.Note)
			}
		}
		if tr := est.Result.Transient; tr != 0 && !math.IsNaN(tr) {
			row.Transient = &tr
			if se := est.Result.TransientSE; se > 0 && !math.IsNaN(se) {
				row.TransientSE = &se // bch-neural's; the others' sums do not keep it
			}
		}
		if r := est.Result.Restarts; len(r) > 0 { // bch-neural's networks, as in memory
			row.Restarts, row.RestartEstimates = len(r), r
			if len(r) > 1 {
				sd := stat.StdDev(r, nil)
				row.RestartSD = &sd
			}
		}
		if est.Unit != ope.UnitNone { // as in memory: naive's equal weights are no diagnostic
			row.ESS, row.Units = est.Weights.ESS, est.Weights.Units
			if s := est.Weights.MaxShare; !math.IsNaN(s) && est.Weights.Units > 0 {
				row.MaxWeightShare = &s // null for estimators that weigh nothing, as in memory
			}
		}
		rep.Warnings = append(rep.Warnings, ope.WeightSummaryWarnings(est.Name, est.Unit, est.Weights)...)
		rep.Warnings = append(rep.Warnings, est.Result.Warnings...)
		if w := ope.RangeWarning(est.Name, v, res.Summary); w != "" {
			rep.Warnings = append(rep.Warnings, w)
		}
		if w := ope.ImputedWarning(est.Name, res.Summary.MaxLength, cfg.Gamma, est.Result); w != "" {
			rep.Warnings = append(rep.Warnings, w)
		}
		rep.Estimates = append(rep.Estimates, row)
		if est.Interval != nil {
			applyInterval(rep, &rep.Estimates[len(rep.Estimates)-1], *est.Interval, cfg.Resamples)
		}
	}
	rep.Warnings = append(rep.Warnings, rowWarnings(rep)...)
	return rep
}

// StreamReport is the report of a stream's results (file names the data
// in its summary), as EvaluateShards returns it: the report ihope-beam
// writes.
func StreamReport(res *stream.Results, file string) *Report {
	return shardsReport(res, file, nil, nil)
}

// shardsReport is the report of a stream's results for the target policy
// one (nil: the shards' own target columns), with the references refs.
func shardsReport(res *stream.Results, file string, one *Target, refs map[string]float64) *Report {
	rep := streamReport(res, file)
	rep.Warnings = append([]string{}, rep.Warnings...) // [] in JSON, never null
	nameOnePolicy(rep, one, refs)
	recommend(rep)
	return rep
}

// betweenPasses, if not nil, is called between the two passes over the
// shards: tests change a shard there, as a writer still at work would.
var betweenPasses func()

// EvaluateShards estimates from shards too large for memory together,
// read one at a time with o (in the order of files; stream.Files lists a
// glob's or a directory's): the estimators whose statistics are sums, with
// Poisson bootstrap intervals. targets holds at most one policy, a
// tabular one (Target.Policy) that the shards' target columns must agree
// with, or fill; file names the shards in the report. The report has the
// schema of Evaluate's.
func (c *Evaluator) EvaluateShards(files []string, o logio.ReadOptions, file string, targets []Target, refs map[string]float64) (*Report, error) {
	if len(targets) > 1 {
		return nil, usagef("--target-policy given more than once does not work with shards: it needs the whole log in memory; give one file")
	}
	streamable := stream.Streamable()
	for _, name := range c.Estimators {
		if !slices.Contains(streamable, name) {
			return nil, usagef("%s cannot stream over shards: its fit needs every step at once (a model trained or solved on the whole log); the estimators that stream are %s. Run it on one file that fits in memory", name, strings.Join(streamable, ", "))
		}
		// A learner chosen by --value-model or --ratio-model that does
		// not stream (fqe's linear or neural, the neural minimax forms).
		en, _ := ope.Lookup(name)
		if _, err := en.New(c.streamOptions(nil)).(ope.Summer).NewSums(c.Gamma, 1); err != nil {
			if errors.Is(err, ope.ErrStationaryHorizon) { // not a matter of streaming
				return nil, usagef("%v", err)
			}
			return nil, usagef("%v; run it on one file that fits in memory", err)
		}
	}
	var target *policy.Tabular
	var targetFile string
	if len(targets) == 1 {
		target, targetFile = targets[0].Policy, targets[0].File
		o.Target = target // shards without target columns take the file's
	}
	t0 := time.Now()
	var stats *stream.Stats
	var notRun string // the default set's estimators of another estimand (otherEstimand)
	// One pass over the shards, or two when an estimator's features are
	// fixed by the whole log (bch-kernel): the first pass feeds AddFirst,
	// the second Add.
	twoPass := false
	// One Reader for both passes: it checks in the second that every
	// shard is as the first pass found it.
	r := stream.Reader{Files: files, Options: o}
	pass := func(label string, add func(d *dataset.Dataset, lo, hi int) error) error {
		progress, finish := bootstrapProgress(c.Progress, len(files), label)
		r.Progress = nil
		if progress != nil {
			r.Progress = func(int, int) { progress(0) }
		}
		err := r.Each(add)
		finish()
		return err
	}
	err := pass("shards", func(d *dataset.Dataset, lo, hi int) error {
		if target != nil {
			// The file must agree with the shards' target_prob, as it must
			// with one file's (Evaluator.options), and fills each shard's
			// target columns as it fills one file's, so that the summary
			// (the target's mass on unlogged actions) sees it too; the
			// estimators take the file itself.
			if !d.Discrete() || d.ActionDim > 0 {
				return usagef("--target-policy needs discrete states and actions (state,p0,p1,... rows)")
			}
			if err := d.SetTargetPolicy(target); err != nil {
				return fmt.Errorf("%s: %w", targetFile, err)
			}
		}
		if stats == nil {
			var err error
			if stats, err = c.newStats(d, target); err != nil {
				return err
			}
			notRun = c.otherEstimand(d, c.streamOptions(target), stream.Streamable())
			twoPass = stats.FirstPass()
		}
		if twoPass {
			return stats.AddFirst(d, lo, hi)
		}
		return stats.Add(d, lo, hi)
	})
	if err != nil {
		return nil, err
	}
	if twoPass {
		stats.EndFirst()
		if betweenPasses != nil {
			betweenPasses()
		}
		if err := pass("shards, second pass", stats.Add); err != nil {
			return nil, err
		}
	}
	res, err := stats.Finish()
	if err != nil {
		return nil, err
	}
	var one *Target
	if len(targets) == 1 {
		one = &targets[0]
	}
	rep := shardsReport(res, file, one, refs)
	rep.Data.NotRun = notRun
	for i := range rep.Estimates {
		rep.Estimates[i].Seconds = time.Since(t0).Seconds()
	}
	rep.timings = c.Timings
	return rep, nil
}
