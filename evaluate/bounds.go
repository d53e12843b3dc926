package evaluate

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/words"
	"github.com/ihope-ope/ihope/ope"
)

// RowBound is a row's confidence bound (--bounds), embedded in
// Row by pointer: the rows without a bound carry none of its
// fields. The JSON names are a contract.
type RowBound struct {
	// BoundLow and BoundHigh hold the row's estimand together with
	// probability BoundLevel; either is null on a side the method does
	// not bound, both when the bound could not be formed (BoundNote says
	// why).
	BoundLow    *float64 `json:"bound_low"`
	BoundHigh   *float64 `json:"bound_high"`
	BoundMethod string   `json:"bound_method"`
	// BoundCalibration is how a threshold was set ("finite-sample",
	// "sign-flip"), BoundGuaranteed whether the level holds at every
	// sample size, BoundAssumes what the guarantee rests on.
	BoundCalibration string  `json:"bound_calibration,omitempty"`
	BoundLevel       float64 `json:"bound_level"`
	BoundGuaranteed  bool    `json:"bound_guaranteed"`
	BoundAssumes     string  `json:"bound_assumes,omitempty"`
	BoundNote        string  `json:"bound_note,omitempty"`
	// BoundBroken says which of its assumptions the log visibly breaks
	// (the Markov property, where the permutation test rejects it): the
	// bound is shown but decides no verdict.
	BoundBroken string `json:"bound_broken,omitempty"`
}

// Verdict is the deploy verdict of one target policy against the
// baseline (--baseline). The JSON names are a contract.
type Verdict struct {
	Policy   string `json:"policy"`
	Baseline string `json:"baseline"`
	// Verdict is "better", "worse" or "not shown".
	Verdict string `json:"verdict"`
	// Method is the bound that decided (empty when not shown), Level
	// the confidence of the verdict: every bound consulted together, the
	// baseline's too where its value is bounded (the union bound: 1
	// minus the sum of their alphas, so two bounds at 95% give 90%).
	Method string  `json:"bound_method,omitempty"`
	Level  float64 `json:"level"`
	// Guaranteed says whether the bound that decided holds in finite
	// samples under its assumptions; a verdict of "bootstrap" (the
	// paired bootstrap of the recommended estimator, where no bound
	// decides) never is.
	Guaranteed bool   `json:"guaranteed"`
	Why        string `json:"why"`
}

// parseRewardRange reads --reward-range LO,HI.
func parseRewardRange(s string) (lo, hi float64, err error) {
	a, b, ok := strings.Cut(s, ",")
	if ok {
		lo, err = strconv.ParseFloat(strings.TrimSpace(a), 64)
		if err == nil {
			hi, err = strconv.ParseFloat(strings.TrimSpace(b), 64)
		}
	}
	if !ok || err != nil || !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return 0, 0, usagef("--reward-range %q: want LO,HI with finite LO < HI (say --reward-range=-1,20: with the = sign when LO is negative)", s)
	}
	return lo, hi, nil
}

// boundSettings returns the settings of --bounds, and whether bounds are
// asked for.
func (c *Evaluator) boundSettings() (ope.BoundSettings, bool, error) {
	if !c.Bounds {
		if c.RewardRange != "" || c.Baseline != "" {
			return ope.BoundSettings{}, false, usagef("--reward-range and --baseline go with --bounds")
		}
		return ope.BoundSettings{}, false, nil
	}
	s := ope.BoundSettings{Alpha: c.Alpha, Calibration: c.BoundCalibration, Seed: c.Seed}
	if c.RewardRange != "" {
		var err error
		if s.RewardLow, s.RewardHigh, err = parseRewardRange(c.RewardRange); err != nil {
			return s, true, err
		}
	}
	return s, true, nil
}

// addBounds gives every row whose estimator has a bound (ope.Entry.Bound)
// and whose estimand is the bound's its bound on d.
func (c *Evaluator) addBounds(rep *Report, d *dataset.Dataset, opts ope.Options) {
	s, on, err := c.boundSettings()
	if !on || err != nil {
		return
	}
	done := map[string]*RowBound{} // rows of one method and estimand share one bound
	for i := range rep.Estimates {
		row := &rep.Estimates[i]
		en, ok := ope.Lookup(row.Estimator)
		if !ok || en.Bound == nil || row.Estimate == nil {
			continue
		}
		b := en.Bound(opts, s)
		if string(b.Estimand()) != row.Estimand {
			continue
		}
		key := b.Name()
		if rb, ok := done[key]; ok {
			row.RowBound = rb
			continue
		}
		rb := &RowBound{BoundLevel: 1 - c.Alpha}
		res, err := b.Bounds(d, c.Gamma)
		switch {
		case errors.Is(err, ope.ErrNoRange):
			rb.BoundNote = "no bound: " + ope.ErrNoRange.Error()
		case err != nil:
			rb.BoundNote = "no bound: " + err.Error()
		default:
			rb.BoundLow, rb.BoundHigh = finitePtr(res.Low), finitePtr(res.High)
			rb.BoundMethod, rb.BoundCalibration = res.Method, res.Calibration
			rb.BoundLevel, rb.BoundGuaranteed, rb.BoundAssumes = res.Level, res.Guaranteed, res.Assumes
			if p := rep.Data.MarkovP; res.Markov && p != nil && *p <= ope.MarkovAlpha {
				rb.BoundBroken = fmt.Sprintf("the Markov property: the logged states do not look Markov (permutation test, p = %.3g)", *p)
				rep.Warnings = append(rep.Warnings, fmt.Sprintf(
					"%s: its bound assumes Markov states (a table of q over the logged states and actions), which this log's visibly are not (permutation test, p = %.3g): states that look alike behave differently, and the bound may miss the value by any amount; it decides no verdict", res.Method, *p))
			}
		}
		if rb.BoundMethod == "" {
			rb.BoundMethod = b.Name()
		}
		done[key] = rb
		row.RowBound = rb
	}
}

// finitePtr is &v, or nil for a value that is not finite.
func finitePtr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// verdicts compares every target policy of rep with --baseline: a value,
// another target policy's name, or "behavior" (the logged returns' own
// value, bounded as a target equal to the behavior would be).
func (c *Evaluator) verdicts(rep *Report, d *dataset.Dataset) error {
	s, on, err := c.boundSettings()
	if err != nil || !on || c.Baseline == "" {
		return err
	}
	// The baseline as bounds per estimand: a known value, or the
	// baseline policy's bounds.
	type base struct {
		b    ope.Bound
		name string
	}
	baseOf := map[string][]base{} // estimand -> bounds
	label := c.Baseline
	if v, err := strconv.ParseFloat(c.Baseline, 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
		label = strconv.FormatFloat(v, 'g', -1, 64)
		for _, e := range []ope.Estimand{ope.Horizon, ope.LongRun} {
			baseOf[string(e)] = []base{{ope.Bound{Low: v, High: v, Level: 1}, "the value " + label}}
		}
	} else if c.Baseline == "behavior" {
		label = "the behavior's own value"
		if !d.HasBehavior() {
			return usagef("--baseline behavior needs behavior probabilities")
		}
		own := *d
		own.LogTarget = d.LogBehavior // the target equal to the behavior: every weight 1
		b, err := ope.HCOPE{RewardLow: s.RewardLow, RewardHigh: s.RewardHigh, Alpha: s.Alpha, Seed: s.Seed}.Bounds(&own, c.Gamma)
		if err != nil {
			return fmt.Errorf("--baseline behavior: %w", err)
		}
		baseOf[string(ope.Horizon)] = []base{{b, "the behavior's own value"}}
	} else {
		found := false
		for _, row := range rep.Estimates {
			if row.Policy == c.Baseline && row.RowBound != nil && row.BoundLow != nil && row.BoundHigh != nil && row.BoundBroken == "" {
				found = true
				baseOf[row.Estimand] = append(baseOf[row.Estimand], base{ope.Bound{Low: *row.BoundLow, High: *row.BoundHigh, Level: row.BoundLevel, Method: row.BoundMethod}, "policy " + c.Baseline})
			}
		}
		known := false
		for _, p := range rep.Policies {
			known = known || p.Name == c.Baseline
		}
		if !known {
			return usagef("--baseline %q: not a number, \"behavior\", or the name of a target policy (--target-policy NAME=FILE)", c.Baseline)
		}
		if !found {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("--baseline %s: no bound on that policy's value (see its rows' bound_note), so no verdict", c.Baseline))
		}
	}
	for _, name := range policyNames(rep) {
		if name == c.Baseline {
			continue
		}
		v := Verdict{Policy: name, Baseline: label, Verdict: ope.NotShown, Level: 1 - c.Alpha}
		who := "the target's"
		if name != "" {
			who = name + "'s"
		}
		seen := map[string]bool{}
		var better, worse []string
		// Every bound consulted may be the one that fails: the verdict
		// holds with 1 - the sum of their alphas (the union bound), not
		// with the level of the bound that happened to decide.
		var risk float64
		baseSeen := map[*base]bool{}
		for _, row := range rep.Estimates {
			if row.Policy != name || row.RowBound == nil || row.BoundLow == nil || row.BoundHigh == nil || row.BoundBroken != "" || seen[row.BoundMethod+row.Estimand] {
				continue
			}
			seen[row.BoundMethod+row.Estimand] = true
			t := ope.Bound{Low: *row.BoundLow, High: *row.BoundHigh, Level: row.BoundLevel}
			bases := baseOf[row.Estimand]
			if len(bases) > 0 {
				risk += 1 - t.Level
			}
			for i := range bases {
				b := &bases[i]
				if !baseSeen[b] {
					baseSeen[b] = true
					risk += 1 - b.b.Level
				}
				verdict, level := ope.Compare(t, b.b)
				what := fmt.Sprintf("%s on the %s value (%.0f%%)", row.BoundMethod, row.Estimand, 100*level)
				switch verdict {
				case ope.Better:
					better = append(better, what)
					v.Method, v.Guaranteed = row.BoundMethod, row.BoundGuaranteed
				case ope.Worse:
					worse = append(worse, what)
					v.Method, v.Guaranteed = row.BoundMethod, row.BoundGuaranteed
				}
			}
		}
		if risk > 0 {
			v.Level = max(0, 1-risk)
		}
		switch {
		case len(better) > 0 && len(worse) > 0:
			v.Method = ""
			v.Why = fmt.Sprintf("the bounds disagree: %s say better, %s worse; an assumption of one of them fails on this log", strings.Join(better, ", "), strings.Join(worse, ", "))
		case len(better) > 0:
			v.Verdict = ope.Better
			v.Why = fmt.Sprintf("better than %s: shown by %s", label, strings.Join(better, ", "))
		case len(worse) > 0:
			v.Verdict = ope.Worse
			v.Why = fmt.Sprintf("worse than %s: shown by %s", label, strings.Join(worse, ", "))
		default:
			v.Why = fmt.Sprintf("not shown: every bound on %s value overlaps %s (more data, a narrower bound, or a policy further from the baseline)", who, label)
			if bv, ok := bootstrapVerdict(rep, name, c.Baseline, label, c.Alpha, risk); ok {
				v = bv
			}
		}
		rep.Verdicts = append(rep.Verdicts, v)
	}
	return nil
}

// bootstrapVerdict is the verdict of target policy name against the
// baseline where no bound decides: bootstrap intervals, without a
// guarantee. An estimator's resamples of the target's value, minus the
// baseline (a value, or the same estimator's resamples of the baseline
// policy: resample r weighs the episodes alike for every policy, so they
// pair), give the difference's percentile interval; biases the two
// policies' estimates share cancel in it, and a policy against itself
// differs by exactly 0 on every resample. The estimator is the
// recommended one (rep.Recommended); where none is recommended (the
// candidates disagree), every estimator of the report's estimand, each at
// level 1 - alpha/k for k of them (Bonferroni, so that together they
// hold at 1 - alpha). Rows whose resamples keep a trained model
// ("fitted": too narrow, and left out of the recommendation too) are not
// read. Better (worse) when some interval lies above (below) 0 and none
// below (above). The level is 1 minus alpha and the alphas of the bounds
// consulted before (risk), by the union bound. It reports false when
// there is no such verdict: no rows with resamples that pair, or the
// baseline "behavior" (whose value no estimator's row holds).
func bootstrapVerdict(rep *Report, name, baseline, label string, alpha, risk float64) (Verdict, bool) {
	if baseline == "behavior" {
		return Verdict{}, false
	}
	var ests []string
	recommended := false
	for _, r := range rep.Recommended {
		if r.Policy == name && r.Estimator != nil {
			ests, recommended = []string{*r.Estimator}, true
		}
	}
	if !recommended {
		for _, r := range rep.Estimates {
			if r.Policy == name && r.Estimate != nil && r.Estimand == rep.Data.Estimand && !slices.Contains(ests, r.Estimator) {
				ests = append(ests, r.Estimator)
			}
		}
	}
	rowOf := func(policy, est string) *Row {
		for i := range rep.Estimates {
			if r := &rep.Estimates[i]; r.Policy == policy && r.Estimator == est && r.Estimate != nil && len(r.resamples) > 0 && r.Resampling != "fitted" {
				return r
			}
		}
		return nil
	}
	value, err := strconv.ParseFloat(baseline, 64)
	isValue := err == nil
	a := alpha / float64(len(ests)) // Bonferroni over the estimators read
	var above, below int
	var parts []string
	for _, est := range ests {
		t := rowOf(name, est)
		if t == nil {
			continue
		}
		d, diff := make([]float64, len(t.resamples)), *t.Estimate-value
		for r, v := range t.resamples {
			d[r] = v - value
		}
		if !isValue {
			b := rowOf(baseline, est)
			if b == nil || b.Estimand != t.Estimand || len(b.resamples) != len(t.resamples) {
				continue
			}
			for r, v := range t.resamples {
				d[r] = v - b.resamples[r]
			}
			diff = *t.Estimate - *b.Estimate
		}
		iv := ope.IntervalOf(d, make([]error, len(d)), a)
		parts = append(parts, fmt.Sprintf("%s %s [%s, %s]", est, words.Num("%+.4g", diff), words.Num("%.4g", iv.Low), words.Num("%.4g", iv.High)))
		if iv.Low > 0 {
			above++
		}
		if iv.High < 0 {
			below++
		}
	}
	if len(parts) == 0 {
		return Verdict{}, false
	}
	what := "the bootstrap"
	if !isValue {
		what = "the paired bootstrap (the same resamples of both policies)"
	}
	if recommended {
		what += " of the recommended estimator's difference"
	} else {
		what += " of every estimator's difference (none is recommended: each interval at 1 - alpha/k for k estimators, none may say the opposite)"
	}
	detail := fmt.Sprintf("%s: %s; no guarantee (a bootstrap interval, not a bound: an estimator's bias is not in it)", what, strings.Join(parts, ", "))
	v := Verdict{Policy: name, Baseline: label, Verdict: ope.NotShown, Method: "bootstrap", Level: max(0, 1-alpha-risk)}
	switch {
	case above > 0 && below == 0:
		v.Verdict, v.Why = ope.Better, fmt.Sprintf("better than %s by %s", label, detail)
	case below > 0 && above == 0:
		v.Verdict, v.Why = ope.Worse, fmt.Sprintf("worse than %s by %s", label, detail)
	default:
		v.Method = ""
		v.Why = fmt.Sprintf("not shown: every bound overlaps %s, and so does %s", label, detail)
	}
	return v, true
}

// policyNames returns the target policies of rep in order: its named
// policies, or "" for the log's own target.
func policyNames(rep *Report) []string {
	if len(rep.Policies) == 0 {
		return []string{""}
	}
	out := make([]string, len(rep.Policies))
	for i, p := range rep.Policies {
		out[i] = p.Name
	}
	return out
}

// printBounds prints the rows' bounds and the verdicts after the table.
func printBounds(out io.Writer, r *Report) {
	var lines []string
	for _, row := range r.Estimates {
		if row.RowBound == nil {
			continue
		}
		who := row.Estimator
		if row.Policy != "" {
			who = row.Policy + " " + who
		}
		if row.BoundLow == nil && row.BoundHigh == nil {
			lines = append(lines, fmt.Sprintf("  %s: %s", who, row.BoundNote))
			continue
		}
		g := "asymptotic"
		if row.BoundGuaranteed {
			g = "guaranteed"
		}
		cal := ""
		if row.BoundCalibration != "" {
			cal = " " + row.BoundCalibration
		}
		line := fmt.Sprintf("  %s: [%s, %s] %s%s, %.0f%% %s, on the %s value", who, fmtBound(row.BoundLow), fmtBound(row.BoundHigh),
			row.BoundMethod, cal, 100*row.BoundLevel, g, row.Estimand)
		if row.BoundBroken != "" {
			line += "; it assumes " + row.BoundBroken
		}
		lines = append(lines, line)
	}
	if len(lines) > 0 {
		fmt.Fprintf(out, "\nbounds:\n%s\n", strings.Join(lines, "\n"))
	}
	for _, v := range r.Verdicts {
		who := v.Policy
		if who == "" {
			who = "the target"
		}
		if v.Verdict == ope.NotShown {
			fmt.Fprintf(out, "verdict: %s against %s: %s\n", who, v.Baseline, v.Why)
			continue
		}
		fmt.Fprintf(out, "verdict: %s is %s (%.0f%%): %s\n", who, v.Verdict, 100*v.Level, v.Why)
	}
}

func fmtBound(p *float64) string {
	if p == nil {
		return "-"
	}
	return words.Num("%.6g", *p)
}
