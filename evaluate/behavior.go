package evaluate

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ihope-ope/ihope/behavior"
	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
)

// Where the behavior probabilities the estimators weigh by come from: the
// values of the data summary's "behavior" field, and of the rows'
// "behavior" for the estimators that need them.
const (
	behaviorLogged = "logged"
	behaviorFitted = "fitted"
	behaviorNone   = "none"
)

// BehaviorFit describes --fit-behavior's fit in the JSON data summary;
// the distances to the logged probabilities are there when the log has
// them too.
type BehaviorFit struct {
	Model      string  `json:"model"`
	Smoothing  float64 `json:"smoothing,omitempty"`
	Folds      int     `json:"folds"`
	Calibrated bool    `json:"calibrated"`
	// Against the logged probabilities (behavior.Compare).
	MeanAbsLogRatio *float64 `json:"mean_abs_log_ratio,omitempty"`
	MaxAbsLogRatio  *float64 `json:"max_abs_log_ratio,omitempty"`
	KL              *float64 `json:"kl,omitempty"`
}

// behaviorInfo is what estimate reports about the behavior probabilities.
type behaviorInfo struct {
	source   string
	fit      *BehaviorFit
	warnings []string
}

// fitBehavior returns the log the estimators see: d itself, or with
// --fit-behavior d with behavior probabilities fitted from its logged
// actions (behavior.Fit: cross-fitted over episodes, calibrated per state
// for discrete states; the logistic regression's held-out split seeded
// by --train-seed). It checks logged probabilities for contradictions
// first.
func (c *Evaluator) fitBehavior(d *dataset.Dataset) (*dataset.Dataset, *behaviorInfo, error) {
	info := &behaviorInfo{source: behaviorLogged, warnings: ope.ConflictWarnings(dataset.FindBehaviorConflict(d))}
	if !d.HasBehavior() {
		info.source = behaviorNone
	}
	if !c.FitBehavior {
		return d, info, nil
	}
	l, err := behavior.For(d)
	if err != nil {
		return nil, nil, fmt.Errorf("--fit-behavior: %w", err)
	}
	if lg, ok := l.(behavior.Logistic); ok {
		lg.Seed = c.TrainSeed // its held-out split
		l = lg
	}
	fit := behavior.Fit{Learner: l}
	fitted, lp, err := fit.Apply(d)
	if err != nil {
		return nil, nil, fmt.Errorf("--fit-behavior: %w", err)
	}
	info.source = behaviorFitted
	if d.Discrete() && !fit.Uncalibrated {
		// The calibration is the target's own (behavior.Calibrate): each
		// further target policy gets the cross-fitted probabilities
		// calibrated to it, not to the first (estimateTargets). Before,
		// every policy reused the first's, and a policy's estimates moved
		// with the order of the log's target columns (mis -0.0804 alone,
		// -0.0823 second).
		c.recalibrate = func(td *dataset.Dataset) (*dataset.Dataset, error) {
			weigh, err := behavior.Calibrate(td, lp)
			if err != nil {
				return nil, fmt.Errorf("--fit-behavior: %w", err)
			}
			return td.WithBehavior(weigh)
		}
	}
	info.fit = &BehaviorFit{Model: fit.Learner.Name(), Folds: behavior.NumFolds(d, fit.Folds), Calibrated: d.Discrete()}
	if cl, ok := fit.Learner.(behavior.Counts); ok {
		info.fit.Smoothing = cmp.Or(cl.Smoothing, behavior.DefaultSmoothing)
	}
	if d.HasBehavior() {
		dist := behavior.Compare(d.LogBehavior, lp)
		info.fit.MeanAbsLogRatio, info.fit.MaxAbsLogRatio, info.fit.KL = &dist.MeanAbsLogRatio, &dist.MaxAbsLogRatio, &dist.KL
		if w := ope.LoggedBehaviorWarning(d, lp); w != "" {
			info.warnings = append(info.warnings, w)
		}
	}
	if c.Bootstrap > 0 {
		info.warnings = append(info.warnings, "the behavior probabilities are fitted once (--fit-behavior) and the bootstrap resamples keep them: "+
			"the intervals do not refit them (see docs/logs.md, \"Fitting the behavior: --fit-behavior\")")
	}
	return fitted, info, nil
}

// apply records the behavior probabilities' source in the report: the
// data summary's "behavior" (and "behavior_fit"), and "behavior" in the
// rows of the estimators that weigh by them and ran.
func (info *behaviorInfo) apply(rep *Report) {
	rep.Data.Behavior, rep.Data.BehaviorFit = info.source, info.fit
	rep.Warnings = append(info.warnings, rep.Warnings...)
	for i := range rep.Estimates {
		row := &rep.Estimates[i]
		if en, ok := ope.Lookup(row.Estimator); ok && en.Needs&ope.NeedsBehavior != 0 && info.source != behaviorNone && row.Estimate != nil {
			row.Behavior = info.source
		}
	}
}

// noBehaviorWarnings names the estimators of the default set that were
// left out only because the log has no behavior probabilities.
func (c *Evaluator) noBehaviorWarnings(d *dataset.Dataset, opts ope.Options) []string {
	if len(c.Estimators) > 0 || d.HasBehavior() {
		return nil
	}
	var out []string
	for _, name := range LogEstimators {
		if en, _ := ope.Lookup(name); inDefaultSet(en, opts) && errors.Is(en.Applies(d, opts), ope.ErrNoBehavior) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the log has no behavior probabilities (behavior_prob or behavior_logprob), so %s, which weigh by pi/pi0, did not run: "+
		"--fit-behavior fits them from the logged actions", strings.Join(out, ", "))}
}

// printBehavior prints where the behavior probabilities come from.
func printBehavior(out io.Writer, d DataSummary) {
	switch d.Behavior {
	case behaviorNone:
		fmt.Fprintln(out, "behavior probabilities: none logged")
		return
	case behaviorLogged:
		return
	}
	f := d.BehaviorFit
	fmt.Fprintf(out, "behavior probabilities: fitted (%s", f.Model)
	if f.Smoothing > 0 {
		fmt.Fprintf(out, ", smoothing %g", f.Smoothing)
	}
	fmt.Fprintf(out, ", cross-fitted over %d folds", f.Folds)
	if f.Calibrated {
		fmt.Fprint(out, ", calibrated per state")
	}
	fmt.Fprint(out, ")")
	if f.KL != nil {
		fmt.Fprintf(out, "; against the logged ones: mean |log ratio| %.4g (largest %.4g), KL %.4g", *f.MeanAbsLogRatio, *f.MaxAbsLogRatio, *f.KL)
	}
	fmt.Fprintln(out)
}
