package evaluate

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/gcstart"
	"github.com/ihope-ope/ihope/internal/progress"
	"github.com/ihope-ope/ihope/internal/words"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/stream"
	"github.com/ihope-ope/ihope/value"
)

// Row is one estimator's result; the JSON names are a contract.
type Row struct {
	Estimator string   `json:"estimator"`
	Policy    string   `json:"policy,omitempty"`
	Estimate  *float64 `json:"estimate"`
	Estimand  string   `json:"estimand,omitempty"`
	Model     string   `json:"model,omitempty"`
	// Selection holds the held-out score of every function class a
	// learner on real states chose among (the winner in Model's
	// parentheses): lower is better.
	Selection     []ClassScore `json:"selection,omitempty"`
	Behavior      string       `json:"behavior,omitempty"`
	Note          string       `json:"note,omitempty"`
	Error         string       `json:"error,omitempty"`
	CILow         *float64     `json:"ci_low"`
	CIHigh        *float64     `json:"ci_high"`
	Transient     *float64     `json:"transient,omitempty"`
	TransientSE   *float64     `json:"transient_se,omitempty"`
	BootstrapBias *float64     `json:"bootstrap_bias,omitempty"`
	// Restarts is the number of networks an ensemble (bch-neural)
	// averaged, RestartEstimates their own estimates and RestartSD their
	// standard deviation: the share of the training's randomness in the
	// estimate.
	Restarts         int       `json:"restarts,omitempty"`
	RestartEstimates []float64 `json:"restart_estimates,omitempty"`
	RestartSD        *float64  `json:"restart_sd,omitempty"`
	SE               *float64  `json:"se,omitempty"`
	WaldLow          *float64  `json:"wald_low,omitempty"`
	WaldHigh         *float64  `json:"wald_high,omitempty"`
	// ESS, Units and Unit describe the estimator's final weights; the
	// estimators that weigh nothing (fqe, mql, dr, model-based) have
	// weight_units 0 and weight_unit "" (and ess 0, which means no
	// weights, not a collapse; the names are fixed, so they stay).
	ESS   float64 `json:"ess"`
	Units int     `json:"weight_units"`
	Unit  string  `json:"weight_unit"`
	// MaxWeightShare is null where a stream does not keep it and for
	// the estimators that weigh nothing.
	MaxWeightShare *float64 `json:"max_weight_share"`
	Resamples      int      `json:"bootstrap_resamples"`
	// Interval is how the interval was formed from the resamples:
	// "percentile", or "student-t" for fewer than ope.PercentileMin; a
	// "fitted" row's gains "+training" when it is widened by its
	// networks' spread (widenByTraining).
	Interval string `json:"interval,omitempty"`
	// Resampling is how the resamples were estimated: "sums" (the
	// estimator's statistics over Poisson copies of the episodes, or of
	// one episode's blocks, its features fixed by the whole log),
	// "fitted" (the model trained on the whole log kept, its evaluation
	// over the same copies: bch-neural) or "refit" (refitted on each).
	Resampling        string `json:"resampling,omitempty"`
	BootstrapFailures int    `json:"bootstrap_failures,omitempty"`
	// Seconds is the estimator's wall time, in --json only with
	// --timings (so that two runs with the same seeds print the same
	// bytes).
	Seconds float64 `json:"seconds,omitempty"`

	// IdentificationLow and IdentificationHigh are bch-kernel's
	// identification range on real states: the least and greatest
	// estimate over the ratios of its class the flow test does not reject
	// (ope.Identify).
	IdentificationLow  *float64 `json:"identification_low,omitempty"`
	IdentificationHigh *float64 `json:"identification_high,omitempty"`

	*RowBound // --bounds (bounds.go)

	weights []float64 // Result.Weights, kept for --report only
	// modelClass is Result.ModelClass, the function class a learner on
	// real states chose ("poly4"): the bootstrap's resamples refit it.
	modelClass string
	// fitted is the estimator's Result (without its weights) where it
	// trained a model the bootstrap can keep (ope.FittedSums).
	fitted *ope.Result
	// kernelRatio is bch-kernel's fitted ratio, whose class the
	// identification range searches.
	kernelRatio *ratio.KernelModel
	// resamples are the row's bootstrap estimates in resample order,
	// kept when none failed: resample r of every target policy weighs the
	// episodes alike (the multiplicities are the seed's and the episode
	// id's), so two policies' rows pair (the verdict's paired bootstrap).
	resamples []float64
}

type DataSummary struct {
	File        string   `json:"file"`
	Episodes    int      `json:"episodes"`
	Steps       int      `json:"steps"`
	MinLength   int      `json:"min_episode_length"`
	MaxLength   int      `json:"max_episode_length"`
	StateKind   string   `json:"state"`
	StateDim    int      `json:"state_dim,omitempty"`
	StatesSeen  int      `json:"states_seen,omitempty"`
	ActionsSeen int      `json:"actions_seen,omitempty"`
	MeanReward  *float64 `json:"mean_reward"`
	TargetSummary
	OpenEndings int `json:"episodes_without_next_state"`
	// Terminal counts the episodes that ended in a terminal state (the
	// terminal column): the estimators see them padded with the absorbing
	// state (dataset.Dataset.Absorbing).
	Terminal int     `json:"terminal_episodes"`
	Gamma    float64 `json:"gamma"`
	Estimand string  `json:"estimand"`
	// MarkovP is the p-value of the test of whether the logged states
	// are Markov (ope.MarkovTest), on discrete logs where an estimator
	// that assumes it ran; at most ope.MarkovAlpha, those estimators are left
	// out of the recommendation and the ranking, with a warning.
	MarkovP *float64 `json:"markov_p,omitempty"`
	// NotRun says which estimators of the default set were left out for
	// estimating another value than the one asked for.
	NotRun string `json:"not_run,omitempty"`

	// Where the behavior probabilities come from (estimate_behavior.go).
	Behavior    string       `json:"behavior"`
	BehaviorFit *BehaviorFit `json:"behavior_fit,omitempty"`
	// rewardLow and rewardHigh are the least and greatest logged reward
	// (not in the JSON), the range a normalised value cannot leave.
	rewardLow, rewardHigh float64
	// rewardRange is the largest logged reward minus the smallest (not in
	// the JSON): at gamma < 1 it bounds the gap between the T-step and
	// long-run values with gamma^T (discountTail).
	rewardRange float64
}

type BootstrapInfo struct {
	Resamples   int     `json:"resamples"`
	Alpha       float64 `json:"alpha"`
	Method      string  `json:"method"`
	BlockLength int     `json:"block_length,omitempty"`
	// SumBlockLength is, for one episode, the block length of the
	// Poisson block bootstrap of the rows whose "resampling" is "sums"
	// or "fitted" (ope.Bootstrap.SumBlockLength); BlockLength is the
	// moving-block bootstrap's, for the rows that refit.
	SumBlockLength int `json:"sum_block_length,omitempty"`
	// ResamplesRefit is the number of resamples of the estimators that
	// refit a model on each (--bootstrap-refit); ResamplesBCHNeural is
	// its old name, the same number, kept in the JSON for one release.
	ResamplesRefit     int    `json:"resamples_refit,omitempty"`
	ResamplesBCHNeural int    `json:"resamples_bch_neural,omitempty"`
	Seed               uint64 `json:"seed"`
}

// describe says in words how the intervals were formed, for the text
// table and the report: percentiles of the resamples, or, from fewer than
// ope.PercentileMin of them, the mean ± Student t × their sd (each row's
// "interval" field says which).
func (b *BootstrapInfo) describe() string {
	form := func(B int) string {
		if B < ope.PercentileMin {
			return ", as mean ± Student t × sd (too few for percentiles)"
		}
		return ""
	}
	kind := "bootstrap"
	if b.Resamples >= ope.PercentileMin {
		kind = "percentile bootstrap"
	}
	s := fmt.Sprintf("%g%% %s, %s over %s", 100*(1-b.Alpha), kind, words.Plural(b.Resamples, "resample"), b.Method)
	if b.Method == "blocks" {
		s += fmt.Sprintf(" of %s", words.Plural(b.BlockLength, "step"))
	}
	s += form(b.Resamples) + fmt.Sprintf(", seed %d", b.Seed)
	if b.ResamplesRefit > 0 {
		s += fmt.Sprintf("; %d for the estimators that refit a model on each", b.ResamplesRefit) + form(b.ResamplesRefit)
	}
	return s
}

// A Report is the whole answer of an evaluation: a row per estimator (and
// per target policy), the data's summary, how the intervals were formed,
// the warnings, the ranking of several policies, the verdicts against a
// baseline and the recommended estimate. Its JSON (WriteJSON) is ihope
// estimate --json's, whose field names are a contract; WriteText writes
// the table and WriteHTML the report.
type Report struct {
	Estimates []Row          `json:"estimates"`
	Data      DataSummary    `json:"data"`
	Bootstrap *BootstrapInfo `json:"bootstrap"`
	Warnings  []string       `json:"warnings"`

	// Several target policies (policies.go, rank.go).
	Policies []PolicyInfo `json:"policies,omitempty"`
	Ranking  *Ranking     `json:"ranking,omitempty"`

	// Verdicts against --baseline, one per target policy (bounds.go).
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// Recommended is the estimate to use, one per target policy
	// (recommend.go).
	Recommended []Recommendation `json:"recommended"`

	timings bool // Options.Timings: WriteJSON and WriteHTML keep the rows' times
}

// Prepare returns the log the estimators see: d itself, or, with
// Options.FitBehavior, d with behavior probabilities fitted from its
// logged actions. The report of Evaluate says which (data.behavior).
// Call it, if at all, before Evaluate and before reading the log's other
// target policies' columns (logio.ReadPolicies), which take d's.
func (c *Evaluator) Prepare(d *dataset.Dataset) (*dataset.Dataset, error) {
	fitted, info, err := c.fitBehavior(d)
	if err != nil {
		return nil, err
	}
	c.behavior = info
	return fitted, nil
}

// Evaluate estimates the value of each target policy on the log d (none:
// the log's own target columns) with every estimator asked for, or the
// default set that applies, and returns the whole report. refs holds
// known values of the policies by name ("" for the log's own target), for
// the ranking. file names the log in the report.
//
// Its error is nil when some estimator ran, even if others failed (their
// rows say why); NoEstimate says whether the run gave none of what was
// asked.
func (c *Evaluator) Evaluate(d *dataset.Dataset, file string, targets []Target, refs map[string]float64) (*Report, error) {
	if c.behavior == nil { // Prepare not called: it fits the behavior with Options.FitBehavior
		var err error
		if d, err = c.Prepare(d); err != nil {
			return nil, err
		}
	}
	rep, err := c.estimateTargets(d, targets, refs, c.Progress)
	if err != nil {
		return nil, err
	}
	c.behavior.apply(rep)
	rep.Data.File = file
	recommend(rep)
	if err := c.verdicts(rep, d); err != nil { // after the recommendation, which a bootstrap verdict reads
		return nil, err
	}
	if rep.Warnings == nil {
		rep.Warnings = []string{} // [] in JSON, never null
	}
	rep.timings = c.Timings
	return rep, nil
}

// NoEstimate returns the error of a run that gave no estimate of what it
// was asked for (nil if it gave one): every estimator named in
// Options.Estimators failed, or, with the default set and an estimand
// asked for, no row that ran targets it.
func (c *Evaluator) NoEstimate(rep *Report) error {
	return noEstimate(c.Estimators, c.Estimand, rep)
}

// WriteJSON writes r as one JSON object, with null for a value that is
// not finite; the rows' times only with Options.Timings.
func (r *Report) WriteJSON(w io.Writer) error {
	return encodeReport(w, r.forFiles())
}

// WriteText writes r as ihope estimate's table, with each row's time.
func (r *Report) WriteText(w io.Writer) { printEstimate(w, r) }

// WriteHTML writes r as a self-contained HTML report to path; args, the
// command line after the program's name, is shown in it.
func (r *Report) WriteHTML(path string, args []string) error {
	return writeReport(path, r.forFiles(), args)
}

// forFiles is r as the JSON and the HTML report carry it: without the
// rows' times unless asked for, so that two runs with the same seeds
// write the same bytes.
func (r *Report) forFiles() *Report {
	if r.timings {
		return r
	}
	return untimed(r)
}

// noEstimate is the error of a run that gave no estimate of what it was
// asked for: every estimator named with --estimators failed, or, with
// the default set and --estimand given (asked), no row that ran targets
// it (under --estimand long-run at gamma = 1 on a log with terminal
// episodes only the horizon estimators run, each with a note). The report
// is written before; the exit status says the request failed. Named
// estimators that ran with a note about their estimand count as run, and
// the default set's rows that do not apply change nothing.
func noEstimate(named []string, asked string, rep *Report) error {
	if len(rep.Estimates) == 0 {
		if len(named) == 0 && asked != "" {
			return fmt.Errorf("no estimate of the %s value asked for: no estimator of the default set estimates it on these logs (see the warnings)", asked)
		}
		return nil
	}
	ran, match := false, false
	for _, r := range rep.Estimates {
		if r.Estimate != nil {
			ran = true
			match = match || r.Estimand == asked
		}
	}
	switch {
	case len(named) > 0 && !ran:
		return fmt.Errorf("no estimate: %s", rep.Estimates[0].Error)
	case len(named) == 0 && asked != "" && ran && !match:
		return fmt.Errorf("no estimate of the %s value asked for: every estimator that ran targets another (see each row's note and the warnings)", asked)
	}
	return nil
}

// untimed returns rep with every row's time left out.
func untimed(rep *Report) *Report {
	out := *rep
	out.Estimates = slices.Clone(rep.Estimates)
	for i := range out.Estimates {
		out.Estimates[i].Seconds = 0
	}
	return &out
}

// estimate runs the chosen estimators and the bootstrap on d for one
// target policy (nil: the logs' own target columns).
func (c *Evaluator) estimate(d *dataset.Dataset, target *Target, stderr io.Writer) (*Report, error) {
	rep := &Report{Warnings: []string{}}
	if err := c.CheckMemory(d, target); err != nil {
		return nil, err
	}
	opts, warnings, err := c.options(d, target)
	if err != nil {
		return nil, err
	}
	opts.ValueChoices = &ope.ValueChoices{} // this run's escalated value model, chosen once
	sum := dataset.Summarize(d)
	rep.Data = newDataSummary(d, sum, c.Gamma)
	rep.Data.Estimand = string(opts.Estimand)
	rep.Warnings = append(rep.Warnings, ope.DataWarnings(sum)...)
	if w := ope.HorizonWarning(sum, opts.Estimand); w != "" {
		rep.Warnings = append(rep.Warnings, w)
	}
	if w := ope.UnloggedWarning(sum); w != "" {
		rep.Warnings = append(rep.Warnings, w)
	}
	if w := ope.BalanceWarning(d, c.FitBehavior); w != "" {
		rep.Warnings = append(rep.Warnings, w)
	}
	rep.Warnings = append(rep.Warnings, warnings...)
	rep.Warnings = append(rep.Warnings, c.noBehaviorWarnings(d, opts)...)
	rep.Data.NotRun = c.otherEstimand(d, opts, nil)
	entries, skipped := c.choose(d, opts)
	var absorbed []string // estimators of the long run left out at gamma = 1 (ope.ErrAbsorbingAverage)
	var ok []ope.Entry    // the estimators that succeeded, for the intervals
	var rows []int
	runs := c.runAll(entries, skipped, d, opts, stderr)
	for i, en := range entries {
		if skipped[i] != nil {
			rep.Estimates = append(rep.Estimates, Row{Estimator: en.Name, Unit: string(en.Unit), Error: skipped[i].Error(),
				Estimand: string(en.Estimand(opts))})
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: not run: %v", en.Name, skipped[i]))
			continue
		}
		row, warnings, err := runs[i].row, runs[i].warnings, runs[i].err
		if errors.Is(err, ope.ErrAbsorbingAverage) && len(c.Estimators) == 0 {
			absorbed = append(absorbed, en.Name) // a long-run estimator on an episodic log: one line below
			continue
		}
		rep.Warnings = append(rep.Warnings, warnings...)
		if row.Estimate != nil {
			if w := ope.RangeWarning(en.Name, *row.Estimate, sum); w != "" {
				rep.Warnings = append(rep.Warnings, w)
			}
		}
		rep.Estimates = append(rep.Estimates, row)
		if row.Estimate != nil {
			ok = append(ok, en)
			rows = append(rows, len(rep.Estimates)-1)
		}
	}
	if len(absorbed) > 0 {
		also := ""
		if opts.Estimand == ope.LongRun {
			also = ", or ask for the horizon value (--estimand horizon), which model-based, fqe and dr estimate too"
		}
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: not run: they would estimate the long-run value, and %d of %s end in a terminal state, so the long-run average reward (gamma = 1) is 0 for every policy; discount (gamma < 1) to run them%s",
			strings.Join(absorbed, ", "), d.NumTerminal(), words.Plural(d.NumEpisodes(), "episode"), also))
	}
	c.checkMarkov(rep, d, ok)
	c.addBounds(rep, d, opts)
	if c.Bootstrap == 0 {
		rep.Warnings = append(rep.Warnings, rowWarnings(rep)...)
		return rep, nil
	}
	if err := c.intervals(rep, d, opts, ok, rows, stderr); err != nil {
		return nil, err
	}
	c.identification(rep, d, opts, ok)
	return rep, nil
}

// identification gives bch-kernel's rows with an interval, on real
// states, their identification range and warns where the log cannot tell
// their ratio from one that gives another value (ope.Identify).
func (c *Evaluator) identification(rep *Report, d *dataset.Dataset, opts ope.Options, ran []ope.Entry) {
	if d.StateDim == 0 {
		return
	}
	for _, en := range ran {
		dr, ok := en.New(opts).(ope.DensityRatio)
		if !ok {
			continue
		}
		k, ok := dr.Learner.(ratio.Kernel)
		if !ok {
			continue
		}
		for i := range rep.Estimates {
			row := &rep.Estimates[i]
			if row.Estimator != en.Name || row.CILow == nil || row.CIHigh == nil {
				continue
			}
			id, err := ope.Identify(en.Name, d, c.Gamma, row.kernelRatio, *row.CILow, *row.CIHigh, k, c.Seed)
			if err != nil {
				continue
			}
			rep.Warnings = append(rep.Warnings, id.Warnings...)
			if r := id.Range; r != nil && !r.Empty {
				lo, hi := r.Low, r.High
				row.IdentificationLow, row.IdentificationHigh = &lo, &hi
			}
		}
	}
}

// checkMarkov tests whether the states of a discrete log are Markov when
// an estimator that assumes it (ope.Entry.Markov) gave an estimate
// (ran), and warns when they do not look so.
func (c *Evaluator) checkMarkov(rep *Report, d *dataset.Dataset, ran []ope.Entry) {
	var markov []string
	for _, en := range ran {
		if en.Markov {
			markov = append(markov, en.Name)
		}
	}
	if len(markov) == 0 || !d.Discrete() || d.ActionDim > 0 {
		return
	}
	if c.markov == nil {
		res, err := ope.MarkovTest{Seed: c.Seed}.Run(d)
		c.markov = &markovRun{res, err}
	}
	res, err := c.markov.res, c.markov.err
	if err != nil {
		return
	}
	rep.Data.MarkovP = &res.PValue
	if res.PValue <= ope.MarkovAlpha {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"the logged states do not look Markov: what follows a step (its reward and next state) depends on the step before it, beyond the step's own state and action (permutation test, p = %.3g): states that look alike behave differently (aliased, or a state that leaves out what matters). %s model the states and may be biased by any amount; the importance-sampling estimators do not need Markov states, and the recommendation leaves the others out",
			res.PValue, strings.Join(markov, ", ")))
	}
}

// markovRun is the Markov test's result on a log.
type markovRun struct {
	res ope.MarkovResult
	err error
}

// estimatorRun is what runOne returned for one estimator.
type estimatorRun struct {
	row      Row
	warnings []string
	err      error
}

// runAll runs the estimators not skipped and returns their runs in the
// order of entries. The fast ones (ope.Entry.SlowOn false) run side by
// side on --workers goroutines: estimators are stateless and share the
// read-only dataset, so the results do not depend on the order; the slow
// ones run one after another, after them, since each trains on every
// core itself and shows its own progress bar.
func (c *Evaluator) runAll(entries []ope.Entry, skipped []error, d *dataset.Dataset, opts ope.Options, stderr io.Writer) []estimatorRun {
	runs := make([]estimatorRun, len(entries))
	var fast, slow []int
	for i, en := range entries {
		switch {
		case skipped[i] != nil:
		case en.SlowOn(d):
			slow = append(slow, i)
		default:
			fast = append(fast, i)
		}
	}
	workers := c.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(fast)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				runs[i].row, runs[i].warnings, runs[i].err = c.runOne(entries[i], d, opts, stderr)
				gcstart.Settle(d.NumSteps())
			}
		}()
	}
	// Longest first, so that the short ones fill in beside the long ones
	// and no worker is left with a long one at the end: the registry lists
	// the estimators from the simplest (a pass over the weights) to those
	// that fit a model, so its order reversed approximates that.
	for _, i := range slices.Backward(fast) {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, i := range slow {
		runs[i].row, runs[i].warnings, runs[i].err = c.runOne(entries[i], d, opts, stderr)
		gcstart.Settle(d.NumSteps())
	}
	return runs
}

// choose returns the entries of the estimators to run: those asked for
// (an error if one does not apply) or every log estimator of the default
// set (ope.Entry.Default) that applies.
// An estimator asked for by name that cannot run on these logs gets a
// row with its reason instead (in skipped, by position in the returned
// order: nil for those that run).
func (c *Evaluator) choose(d *dataset.Dataset, opts ope.Options) ([]ope.Entry, []error) {
	names, explicit := c.Estimators, len(c.Estimators) > 0
	registryDefault := false
	if !explicit {
		names, registryDefault = c.defaultEstimators()
	}
	var out []ope.Entry
	var skipped []error
	for _, name := range names {
		en, _ := ope.Lookup(name)
		if registryDefault && !inDefaultSet(en, opts) {
			continue // dominated everywhere, or another estimand's: by name only (otherEstimand says so)
		}
		err := en.Applies(d, opts)
		if err != nil && !explicit {
			continue
		}
		out = append(out, en)
		skipped = append(skipped, err)
	}
	return out, skipped
}

// inDefaultSet reports whether en runs without --estimators under opts:
// it is in the registry's default set (not dominated in every world of
// ihope benchmark) and estimates the value asked for (issue 31).
func inDefaultSet(en ope.Entry, opts ope.Options) bool {
	return en.Default() && en.Estimand(opts) == opts.Estimand.OrDefault()
}

// otherEstimand names the estimators of the default set that apply to d
// but estimate another value than the one asked for (opts.Estimand): the
// default set runs those of the estimand asked for only, so that every
// row answers the question asked (issue 31); the others run on request.
// It returns the report's line about them ("" if none).
func (c *Evaluator) otherEstimand(d *dataset.Dataset, opts ope.Options, streamable []string) string {
	names, registryDefault := c.defaultEstimators()
	if len(c.Estimators) > 0 || !registryDefault {
		return ""
	}
	var other []string
	var est ope.Estimand
	asked := opts.Estimand.OrDefault()
	for _, name := range names {
		en, _ := ope.Lookup(name)
		if !en.Default() || inDefaultSet(en, opts) || en.Applies(d, opts) != nil {
			continue
		}
		if streamable != nil && !slices.Contains(streamable, name) {
			continue
		}
		other, est = append(other, name), en.Estimand(opts)
	}
	if len(other) == 0 {
		return ""
	}
	verb, them := "estimate", "them"
	if len(other) == 1 {
		verb, them = "estimates", "it"
	}
	return fmt.Sprintf("%s %s the %s value, not the %s value asked for: not run (--estimand %s runs %s, or name %s with --estimators)",
		strings.Join(other, ", "), verb, est, asked, est, them, them)
}

// runOne runs one estimator on d and returns its row and warnings. An
// estimator that fails (all weights zero, an overflow, a solver that does
// not converge) gets an error in its row and does not hide the others.
func (c *Evaluator) runOne(en ope.Entry, d *dataset.Dataset, opts ope.Options, stderr io.Writer) (Row, []string, error) {
	finish := func() {}
	if en.SlowOn(d) && progress.IsTerminal(stderr) {
		opts.Neural.Progress, finish = trainingProgress(stderr, en.Name, opts)
		// The value network (--value-model neural, or the one the
		// selection escalates to) moves the same bar.
		opts.ValueNeural.Progress = opts.Neural.Progress
	}
	est := en.New(opts)
	t0 := time.Now()
	res, err := est.Estimate(d, c.Gamma)
	finish()
	row := Row{Estimator: en.Name, Unit: string(en.Unit), Seconds: time.Since(t0).Seconds()}
	if err == nil && (math.IsInf(res.Value, 0) || math.IsNaN(res.Value)) {
		err = fmt.Errorf("%s: the estimate is %v", en.Name, res.Value)
	}
	if err != nil {
		row.Error = err.Error()
		row.Estimand = string(en.Estimand(opts)) // what it would have targeted
		return row, []string{fmt.Sprintf("%s: no estimate: %v", en.Name, err)}, err
	}
	v := res.Value
	if v == 0 {
		v = 0 // not -0, which JSON would print
	}
	row.Estimate = &v
	if res.Trained() {
		r := res
		r.Weights = nil
		row.fitted = &r
	}
	if km, ok := res.Model.(*ratio.KernelModel); ok {
		row.kernelRatio = km
	}
	row.Estimand = string(res.Estimand)
	row.Model = res.Learner
	if res.ModelClass != "" {
		// The class the learner chose from the data, and every
		// candidate's held-out score (issue 29); a class that is its
		// learner (the network Select escalated to) is named once.
		if !strings.HasSuffix(row.Model, res.ModelClass) {
			row.Model += "(" + res.ModelClass + ")"
		}
		row.modelClass = res.ModelClass
		for _, c := range res.Selection {
			row.Selection = append(row.Selection, ClassScore{Model: c.Model, Score: c.Score, SE: c.SE})
		}
	}
	var notes []string
	if note, warn := estimandNote(res.Estimand, opts.Estimand, c.Gamma, d.MinLen()); note != "" {
		row.Note = note
		if warn {
			notes = append(notes, en.Name+": "+row.Note)
		}
	}
	if tr := res.Transient; tr != 0 && !math.IsNaN(tr) {
		row.Transient = &tr
		if se := res.TransientSE; se > 0 && !math.IsNaN(se) {
			row.TransientSE = &se
		}
	}
	if r := res.Restarts; len(r) > 0 {
		row.Restarts, row.RestartEstimates = len(r), r
		if len(r) > 1 {
			sd := stat.StdDev(r, nil)
			row.RestartSD = &sd
		}
	}
	if res.SE > 0 {
		z := distuv.UnitNormal.Quantile(1 - c.Alpha/2)
		se, lo, hi := res.SE, v-z*res.SE, v+z*res.SE
		row.SE, row.WaldLow, row.WaldHigh = &se, &lo, &hi
	}
	if len(res.Weights) > 0 && en.Unit != ope.UnitNone { // naive's equal weights are no diagnostic
		row.ESS = ope.KishESS(res.Weights)
		row.Units = len(res.Weights)
		share := ope.MaxShare(res.Weights)
		row.MaxWeightShare = &share
	}
	if c.KeepWeights {
		row.weights = res.Weights
	}
	if w := ope.ImputedWarning(en.Name, d.MaxLen(), c.Gamma, res); w != "" {
		notes = append(notes, w)
	}
	warnings := ope.WeightWarnings(en.Name, en.Unit, res.Weights)
	return row, append(append(warnings, res.Warnings...), notes...), nil
}

// intervals runs the bootstrap for the estimators that succeeded (rows
// are their rows in rep) and fills in their intervals.
//
// One bootstrap semantics for the log in memory and a stream of shards:
// with several episodes, every episode has a Poisson(1) multiplicity in
// each resample (ope.PoissonCounts of the seed and its id). The
// estimators whose statistics are sums over episodes (package stream) take
// their interval from copies of those sums weighted by the
// multiplicities, filled in one pass over the log (two for the learners
// whose features the whole log fixes): the code a stream of shards runs,
// so the log in memory and as one shard give the same interval
// (TestMemoryEqualsOneShard); their row's "resampling" is "sums". The
// estimators that train a model (bch-neural) keep the model trained on
// the whole log and sum its evaluation over the same copies ("fitted",
// as a stream does). The others refit on each resample (the same
// multiplicities, ope.Bootstrap.Poisson; "refit"), and the slow ones
// among them get only --bootstrap-refit resamples: the first ones the
// others see. --refit refits every estimator.
//
// One episode is cut into blocks: the estimators whose sums add block by
// block (ope.BlockSums: bch-kernel, bch-neural) weigh each block of
// --block-length steps by its own Poisson(1) multiplicity
// (ope.BlockCounts); the others refit on moving-block resamples.
func (c *Evaluator) intervals(rep *Report, d *dataset.Dataset, opts ope.Options, entries []ope.Entry, rows []int, stderr io.Writer) error {
	workers := c.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	base := ope.Bootstrap{Alpha: c.Alpha, Seed: c.Seed, BlockLength: c.BlockLength, Workers: workers}
	method, L := base.Method(d)
	if method == "episodes" {
		base.Poisson, method = true, poissonMethod
	}
	rep.Bootstrap = &BootstrapInfo{Resamples: c.Bootstrap, Alpha: c.Alpha, Method: method, BlockLength: L, Seed: c.Seed}
	if err := base.Check(d, c.Gamma); err != nil {
		rep.Bootstrap = nil
		rep.Warnings = append(rep.Warnings, err.Error())
		rep.Warnings = append(rep.Warnings, rowWarnings(rep)...) // the Wald intervals and dr's standard error
		return nil
	}
	type group struct {
		idx []int // indices into entries and rows
		B   int
	}
	// The estimators whose sums give their interval first, then those
	// that keep their trained model; those left, and those whose sums
	// failed where the estimator did not, refit.
	blocks := 0
	if method == "blocks" {
		blocks = base.SumBlockLength(d.NumSteps())
	}
	var refit, summed, fitted []int
	for i, en := range entries {
		switch {
		case c.Refit:
			refit = append(refit, i)
		case (base.Poisson || blocks > 0) && rep.Estimates[rows[i]].fitted != nil:
			// Before the sums: a bch-kernel fit with a value test sums
			// its loss with that value (ope.FittedSums).
			fitted = append(fitted, i)
		case (base.Poisson || blocks > 0) && summable(en, d, opts, c.Gamma, blocks > 0):
			summed = append(summed, i)
		default:
			refit = append(refit, i)
		}
	}
	if len(summed) > 0 {
		names := make([]string, len(summed))
		for k, i := range summed {
			names[k] = entries[i].Name
		}
		res, err := c.sumIntervals(d, names, opts, blocks, stderr)
		if err != nil {
			return err
		}
		for k, i := range summed {
			est := res.Estimates[k]
			if est.Err != nil || est.Interval == nil {
				refit = append(refit, i)
				continue
			}
			row := &rep.Estimates[rows[i]]
			applyInterval(rep, row, *est.Interval, c.Bootstrap)
			row.Resampling = "sums"
		}
	}
	for _, i := range fitted {
		row := &rep.Estimates[rows[i]]
		iv, trained, err := c.fittedInterval(d, entries[i].New(opts), *row.fitted, blocks, stderr)
		if err != nil {
			refit = append(refit, i)
			continue
		}
		if !trained { // bch-kernel's sums with its value test: no networks
			applyInterval(rep, row, iv, c.Bootstrap)
			row.Resampling = "sums"
			continue
		}
		if len(row.RestartEstimates) > 1 {
			iv = widenByTraining(iv, *row.Estimate, *row.RestartSD, c.Alpha)
		}
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"%s: its interval keeps the networks trained on the whole log and resamples their evaluation only (widened by the networks' spread when there are several): it does not count how the fit itself would move on another log, and it is too narrow (measured on a linear-Gaussian system: it held the truth in 70%% to 80%% of seeds where 90%% was asked); the recommendation leaves it out. --refit retrains on every resample, which counts it, slowly", row.Estimator))
		row.Resampling = "fitted" // before applyInterval: its warning covers the networks' spread
		applyInterval(rep, row, iv, c.Bootstrap)
	}
	nSlow := min(c.BootstrapRefit, c.Bootstrap)
	fast, slow := group{B: c.Bootstrap}, group{B: nSlow}
	for _, i := range refit {
		if entries[i].SlowOn(d) {
			slow.idx = append(slow.idx, i)
			rep.Bootstrap.ResamplesRefit, rep.Bootstrap.ResamplesBCHNeural = nSlow, nSlow
		} else {
			fast.idx = append(fast.idx, i)
		}
	}
	if len(slow.idx) > 0 && nSlow > 0 {
		var names []string
		for _, i := range slow.idx {
			names = append(names, entries[i].Name)
		}
		verb := "refits its model"
		if len(names) > 1 {
			verb = "refit their models"
		}
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"%s %s on every resample, so the bootstrap interval uses only %d resamples (--bootstrap-refit): treat its ends as rough", strings.Join(names, " and "), verb, nSlow))
	}
	for _, g := range []group{fast, slow} {
		if len(g.idx) == 0 || g.B == 0 {
			continue
		}
		bs := base
		bs.Resamples = g.B
		// A bar per group: a slow refit costs seconds where the others
		// cost milliseconds, so one bar over both would predict the end
		// from the fast resamples' pace.
		progress, finish := bootstrapProgress(stderr, g.B, c.groupLabel(entries, g.idx))
		bs.Progress = progress
		ests := make([]ope.Estimator, len(g.idx))
		for k, i := range g.idx {
			ests[k] = entries[i].New(resampleOptions(opts, rep.Estimates[rows[i]]))
		}
		ivs, err := bs.Run(d, c.Gamma, ests)
		finish()
		if err != nil {
			return err
		}
		for k, i := range g.idx {
			row := &rep.Estimates[rows[i]]
			applyInterval(rep, row, ivs[k], g.B)
			row.Resampling = "refit"
		}
	}
	if method == "blocks" {
		rep.Warnings = append(rep.Warnings, blocksWarning(rep, L, blocks))
	}
	rep.Warnings = append(rep.Warnings, rowWarnings(rep)...)
	return nil
}

// blocksWarning says how the intervals of one episode were formed: the
// rows that refit from moving blocks of L steps, those that sum from
// Poisson-weighted blocks of sumL steps (whose length it records in
// rep.Bootstrap).
func blocksWarning(rep *Report, L, sumL int) string {
	var summed, refit []string
	for _, row := range rep.Estimates {
		switch row.Resampling {
		case "sums", "fitted":
			summed = append(summed, row.Estimator)
		case "refit":
			refit = append(refit, row.Estimator)
		}
	}
	var parts []string
	if len(summed) > 0 {
		rep.Bootstrap.SumBlockLength = sumL
		parts = append(parts, fmt.Sprintf("%s from a Poisson block bootstrap (blocks of %d steps, each weighted by its own Poisson draw in every resample)", strings.Join(summed, ", "), sumL))
	}
	if len(refit) > 0 {
		parts = append(parts, fmt.Sprintf("%s from a moving-block bootstrap with blocks of %d steps", strings.Join(refit, ", "), L))
	}
	return "one episode only: the intervals of " + strings.Join(parts, "; those of ") + "; they assume steps further apart than a block are nearly independent"
}

// summable reports whether estimator en's interval on d comes from its
// statistics' Poisson copies (intervals): its statistics are sums over
// episodes on logs like d (stream.Applies) that hold no trained model
// (ope.SampleSums: bch-neural and the neural forms retrain on every
// resample), and d has no episode ending in a terminal state (the sums
// pad those to the log's longest episode, known only at the end). With
// blocks (one episode), the sums must also add block by block
// (ope.BlockSums).
func summable(en ope.Entry, d *dataset.Dataset, opts ope.Options, gamma float64, blocks bool) bool {
	opts.RealStates = d.StateDim > 0 // as a stream's (newStats)
	if d.Terminal != nil && slices.Contains(d.Terminal, true) {
		return false
	}
	if stream.Applies(en.Name, d, opts) != nil {
		return false
	}
	sums, err := en.New(opts).(ope.Summer).NewSums(gamma, 1)
	if err != nil {
		return false
	}
	if _, trained := sums.(*ope.SampleSums); trained {
		return false
	}
	if _, ok := sums.(ope.BlockSums); blocks && !ok {
		return false
	}
	return true
}

// sumIntervals fills the named estimators' statistics over d, with
// c.Bootstrap Poisson copies, as a stream of one shard does, and returns
// their estimates and intervals. blocks > 0 cuts d's one episode into
// blocks of that many steps, each a unit of the copies.
func (c *Evaluator) sumIntervals(d *dataset.Dataset, names []string, opts ope.Options, blocks int, stderr io.Writer) (*stream.Results, error) {
	opts.RealStates = d.StateDim > 0 // as a stream's (newStats)
	s, err := stream.New(stream.Config{Estimators: names, Gamma: c.Gamma, Resamples: c.Bootstrap, Seed: c.Seed, Alpha: c.Alpha, Options: opts})
	if err != nil {
		return nil, err
	}
	n := d.NumEpisodes()
	passes := 1
	if s.FirstPass() {
		passes = 2
	}
	label := "bootstrap, Poisson copies of the sums"
	if c.policyLabel != "" {
		label = c.policyLabel + ": " + label
	}
	progress, finish := bootstrapProgress(stderr, passes*n, label)
	defer finish()
	each := func(add func(d *dataset.Dataset, lo, hi int) error) error {
		for e := range n {
			if err := add(d, e, e+1); err != nil {
				return err
			}
			if progress != nil {
				progress(0)
			}
		}
		return nil
	}
	if passes == 2 {
		if err := each(s.AddFirst); err != nil {
			return nil, err
		}
		s.EndFirst()
	}
	add := s.Add
	if blocks > 0 {
		add = func(d *dataset.Dataset, lo, hi int) error { return s.AddBlocks(d, lo, blocks) }
	}
	if err := each(add); err != nil {
		return nil, err
	}
	return s.Finish()
}

// widenByTraining widens the interval [iv.Low, iv.High] of a model kept
// fixed (the evaluation's spread around est) by the spread of the
// networks' own estimates (sd): each end moves to est ± sqrt(e² + (z
// sd)²), e its distance from est and z the normal quantile of the level.
// The kept model's interval counts neither the training's randomness nor
// the fit's sampling spread; the networks' sd measures the first and,
// not divided by the square root of their number, stands in for part of
// the second. On the 1-d linear-Gaussian system the evaluation's spread
// alone held the truth in 3 of 8 seeds at 90%, widened in 14 of 20 (one
// episode) and 16 of 20 (40 episodes) (docs/intervals.md).
func widenByTraining(iv ope.Interval, est, sd, alpha float64) ope.Interval {
	if !(sd > 0) {
		return iv
	}
	z := distuv.UnitNormal.Quantile(1 - alpha/2)
	lo, hi := math.Min(iv.Low, est), math.Max(iv.High, est)
	iv.Low = est - math.Hypot(est-lo, z*sd)
	iv.High = est + math.Hypot(hi-est, z*sd)
	iv.Method += "+training"
	return iv
}

// fittedInterval is the interval of an estimator that trained a model on
// d (res its Result): the model kept, its evaluation summed over Poisson
// copies of the episodes, or of blocks of that many steps of d's one
// episode (ope.FittedSums); trained is true. For bch-kernel with a value
// test it is the interval of its sums, the loss re-solved on every copy
// with the value kept, and trained is false.
func (c *Evaluator) fittedInterval(d *dataset.Dataset, est ope.Estimator, res ope.Result, blocks int, stderr io.Writer) (iv ope.Interval, trained bool, err error) {
	s, ok, err := ope.FittedSums(est, res, d, c.Gamma, c.Bootstrap+1)
	if err != nil || !ok {
		return ope.Interval{}, false, fmt.Errorf("%s: no fitted sums (%v)", est.Name(), err)
	}
	_, trained = s.(*ope.SampleSums)
	label := est.Name() + ": bootstrap, Poisson copies of the sums"
	if trained {
		label = est.Name() + ": bootstrap, its trained model kept"
	}
	if c.policyLabel != "" {
		label = c.policyLabel + ": " + label
	}
	progress, finish := bootstrapProgress(stderr, d.NumEpisodes(), label)
	defer finish()
	mult := make([]int, c.Bootstrap+1)
	for e := range d.NumEpisodes() {
		if blocks > 0 {
			err = s.(ope.BlockSums).AddBlocks(d, e, blocks, func(b int) []int {
				mult[0] = 1
				ope.BlockCounts(c.Seed, d.IDs[e], b, mult[1:])
				return mult
			})
		} else {
			mult[0] = 1
			ope.PoissonCounts(c.Seed, d.IDs[e], mult[1:])
			err = s.Add(d, e, mult)
		}
		if err != nil {
			return ope.Interval{}, false, err
		}
		if progress != nil {
			progress(0)
		}
	}
	return ope.SumsInterval(est.Name(), s, c.Bootstrap, c.Alpha), trained, nil
}

// applyInterval fills in row's interval from B resamples, and warns of a
// bootstrap bias beyond half its width and of failed resamples.
func applyInterval(rep *Report, row *Row, iv ope.Interval, B int) {
	if len(iv.Estimates) > 0 {
		row.CILow, row.CIHigh = &iv.Low, &iv.High
		row.Interval = iv.Method
		bias := stat.Mean(iv.Estimates, nil) - *row.Estimate
		row.BootstrapBias = &bias
		if half := (iv.High - iv.Low) / 2; biasedBootstrap(&bias, half) {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf(
				"%s: the bootstrap puts its estimate %.3g away from the mean of its resamples, more than half the interval's width (%.3g): the estimator is biased on these logs, and its percentile interval may not hold the truth",
				row.Estimator, bias, half))
		}
	}
	row.Resamples = B
	row.BootstrapFailures = iv.Failures
	if iv.Failures == 0 && len(iv.Estimates) == B {
		row.resamples = iv.Estimates
	}
	if iv.Failures > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: failed on %d of %d bootstrap resamples (first: %v); the interval uses the others",
			row.Estimator, iv.Failures, B, iv.FirstFailure))
	}
	if row.RestartSD != nil && row.CILow != nil && row.Resampling != "fitted" {
		if half := (*row.CIHigh - *row.CILow) / 2; trainingDominates(row.RestartSD, half) {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf(
				"%s: its %d networks' estimates spread by sd %.3g, more than a quarter of the interval's width (%.3g): the training, not the data, dominates the uncertainty; raise --restarts",
				row.Estimator, row.Restarts, *row.RestartSD, 2*half))
		}
	}
}

// transientWarnings says when a density-ratio estimate's first and second
// halves of the episodes differ by more than its interval's half-width,
// or, without an interval, by more than 3 standard errors of the gap: the
// logs start in a transient (from a reset). The paper's ratio then does
// not estimate the long-run value it reports: on reset logs it lands near
// the T-step value (Taxi: -0.1412 against the 400-step -0.1412 and the
// long-run -0.1217; a linear-Gaussian system started off its stationary
// law: -3.32 against the 50-step -3.32 and the long-run -4.04).
func transientWarnings(rep *Report) []string {
	T, gamma := rep.Data.MaxLength, rep.Data.Gamma
	if discountTail(gamma, rep.Data.MinLength) < transientDiscountFloor { // the shortest episode's gap is the largest
		// The T-step and long-run discounted values agree to within
		// gamma^T of the rewards' range: there is no transient to speak
		// of, and a discounted ratio weighs early steps differently by
		// design (an audit saw the warning on 54 of 60 bch-kernel runs at
		// gamma = 0.95, T = 200, where the two values agreed to 2e-5).
		return nil
	}
	var out []string
	for _, row := range rep.Estimates {
		if row.Transient == nil {
			continue
		}
		var by string
		switch gap := math.Abs(*row.Transient); {
		case row.CILow != nil:
			if half := (*row.CIHigh - *row.CILow) / 2; gap > half {
				by = fmt.Sprintf("more than the interval's half-width %.3g", half)
			}
		case row.TransientSE != nil:
			if z := gap / *row.TransientSE; z > 3 {
				by = fmt.Sprintf("%.1f standard errors of the gap", z)
			}
		}
		if by != "" {
			out = append(out, fmt.Sprintf("%s: the weighted rewards of the episodes' first and second halves differ by %.3g, %s. Either the logs start in a transient (then this estimator lands between the long-run value it reports and the %d-step value, often near the latter) or its ratio does not make the logged steps look like the target's; %s",
				row.Estimator, *row.Transient, by, T, transientAdvice(rep)))
		}
	}
	return out
}

// transientDiscountFloor is the gamma^T below which transientWarnings is
// silent at gamma < 1.
const transientDiscountFloor = 0.01

// discountTail is gamma^T for episodes of at least T = minLen steps (1 at
// gamma = 1 or without episodes): at gamma < 1 the normalised T-step and
// long-run values differ by at most that times the range of the rewards,
// which the notes and warnings that compare the two estimands weigh.
func discountTail(gamma float64, minLen int) float64 {
	if gamma >= 1 || minLen <= 0 {
		return 1
	}
	return math.Pow(gamma, float64(minLen))
}

// estimandNoteFloor is the gamma^T below which a row's other estimand is
// a note, not a warning (estimandNote): the two values then differ by at
// most 0.1% of the rewards' range. (0.01 was tried first; a review found
// Taxi at gamma = 0.95, T = 100, gamma^T = 0.0059, rewards from -1 to 20:
// a bound of 0.12, beyond the intervals' half-widths of 0.07.)
const estimandNoteFloor = 1e-3

// estimandNote is the note for a row whose estimator targets got when
// asked was requested (none if they agree), and whether it is a warning.
// At gamma < 1 on episodes of at least minLen steps the normalised T-step
// and long-run values differ by at most gamma^T times the range of the
// expected rewards; below estimandNoteFloor the note says so and warns no
// more (on the README's Pendulum, gamma = 0.99 and T = 1000: 4.3e-05,
// where every density-ratio row used to warn).
func estimandNote(got, asked ope.Estimand, gamma float64, minLen int) (note string, warn bool) {
	if got == "" || got == asked {
		return "", false
	}
	note = fmt.Sprintf("targets the %s value, not the %s value asked for", got, asked)
	if g := discountTail(gamma, minLen); g < estimandNoteFloor {
		return fmt.Sprintf("%s; at gamma = %g over episodes of %d steps or more the two differ by at most %.2g times the rewards' range", note, gamma, minLen, g), false
	}
	return note, true
}

// transientAdvice says where the two values the transient separates can
// be read in rep: the long-run rows of fqe, dr and mwl that gave an
// estimate, and the rows of the T-step value or the flag that asks for it.
func transientAdvice(rep *Report) string {
	var long, horizon []string
	for _, r := range rep.Estimates {
		if r.Estimate == nil {
			continue
		}
		switch {
		case r.Estimand == string(ope.LongRun) && slices.Contains([]string{"fqe", "dr", "mwl"}, r.Estimator):
			long = append(long, r.Estimator)
		case r.Estimand == string(ope.Horizon) && slices.Contains([]string{"wis-stepwise", "fqe", "dr"}, r.Estimator):
			horizon = append(horizon, r.Estimator)
		}
	}
	var parts []string
	switch len(long) {
	case 0:
	case 1:
		parts = append(parts, "for the long-run value see "+long[0])
	default:
		parts = append(parts, "for the long-run value compare "+strings.Join(long, ", ")+", and trust them where they agree")
	}
	T := rep.Data.MaxLength
	switch {
	case len(horizon) > 0:
		parts = append(parts, fmt.Sprintf("for the %d-step value see %s", T, strings.Join(horizon, ", ")))
	case rep.Data.Estimand != string(ope.Horizon):
		parts = append(parts, fmt.Sprintf("for the %d-step value --estimand horizon", T))
	}
	if len(parts) == 0 {
		return "compare the estimators of the value you need"
	}
	return strings.Join(parts, "; ")
}

// newDataSummary is the JSON form of a log's summary.
func newDataSummary(d *dataset.Dataset, s dataset.Summary, gamma float64) DataSummary {
	return summaryOf(d.StateDim, s, gamma)
}

// summaryOf is the JSON form of a log's summary, given its state
// dimension (0: discrete states).
func summaryOf(stateDim int, s dataset.Summary, gamma float64) DataSummary {
	out := DataSummary{Episodes: s.Episodes, Steps: s.Steps, MinLength: s.MinLength, MaxLength: s.MaxLength,
		ActionsSeen: s.ActionsSeen, TargetSummary: TargetSummary{ZeroTarget: s.ZeroTarget, LargeRatio: s.LargeRatio},
		OpenEndings: s.OpenEndings, Terminal: s.Terminal, Gamma: gamma, rewardRange: s.MaxReward - s.MinReward,
		rewardLow: s.MinReward, rewardHigh: s.MaxReward}
	if !math.IsNaN(s.MeanReward) {
		v := s.MeanReward
		out.MeanReward = &v
	}
	if !math.IsNaN(s.MaxLogRatio) {
		v := s.MaxLogRatio
		out.MaxLogRatio = &v
	}
	if stateDim == 0 {
		out.StateKind = "discrete"
		out.StatesSeen = s.StatesSeen
	} else {
		out.StateKind = "real"
		out.StateDim = stateDim
	}
	return out
}

func printEstimate(out io.Writer, r *Report) {
	d := r.Data
	quantity := "average reward per step"
	if d.Gamma < 1 {
		quantity = fmt.Sprintf("normalised discounted reward, gamma = %g", d.Gamma)
	}
	fmt.Fprintf(out, "%s: %s, %s (lengths %d..%d), %s states", d.File, words.Plural(d.Episodes, "episode"), words.Plural(d.Steps, "step"), d.MinLength, d.MaxLength, d.StateKind)
	if d.StateKind == "discrete" {
		fmt.Fprintf(out, " (%d seen), %d actions seen", d.StatesSeen, d.ActionsSeen)
	}
	if d.Terminal > 0 {
		fmt.Fprintf(out, "; %d of %s ended in a terminal state", d.Terminal, words.Plural(d.Episodes, "episode"))
	}
	fmt.Fprint(out, openEndingsNote(d))
	mean := "-"
	if d.MeanReward != nil {
		mean = words.Num("%.6g", *d.MeanReward)
	}
	fmt.Fprintf(out, "\nquantity: %s, estimand %s; mean logged reward %s\n", quantity, d.Estimand, mean)
	printBehavior(out, d)
	if b := r.Bootstrap; b != nil {
		fmt.Fprintf(out, "intervals: %s\n", b.describe())
	}
	if len(r.Policies) <= 1 {
		if len(r.Policies) == 1 {
			printPolicy(out, r.Policies[0])
		}
		fmt.Fprintln(out)
		printRows(out, r.Estimates)
		printRecommended(out, r, policyNames(r)[0])
	} else {
		for _, p := range r.Policies {
			fmt.Fprintln(out)
			printPolicy(out, p)
			printRows(out, rowsOf(r, p.Name))
			printRecommended(out, r, p.Name)
		}
	}
	for _, row := range r.Estimates {
		if row.WaldLow != nil && row.CILow != nil {
			name := row.Estimator
			if row.Policy != "" && len(r.Policies) > 1 {
				name = row.Policy + ", " + name
			}
			fmt.Fprintf(out, "%s: influence-function (Wald) interval [%s, %s], clustered by episode; the table shows the bootstrap's\n",
				name, words.Num("%.6g", *row.WaldLow), words.Num("%.6g", *row.WaldHigh))
		}
	}
	for _, row := range r.Estimates {
		if row.IdentificationLow != nil {
			fmt.Fprintf(out, "%s: identification range [%s, %s]: the estimates of the ratios in its class that the log does not reject (flow test, %g)\n",
				row.Estimator, words.Num("%.6g", *row.IdentificationLow), words.Num("%.6g", *row.IdentificationHigh), ope.IdentificationAlpha)
		}
	}
	for _, row := range r.Estimates {
		if row.RestartSD != nil {
			lo, hi := slices.Min(row.RestartEstimates), slices.Max(row.RestartEstimates)
			kept := row.Restarts - 2*(row.Restarts/4)
			fmt.Fprintf(out, "%s: %d networks (--restarts), weighted by the mean ratio of the middle %d by their own estimates, which range over [%s, %s], sd %s\n",
				row.Estimator, row.Restarts, kept, words.Num("%.4g", lo), words.Num("%.4g", hi), words.Num("%.3g", *row.RestartSD))
		}
	}
	if d.NotRun != "" {
		fmt.Fprintln(out, d.NotRun)
	}
	printBounds(out, r)
	if r.Ranking != nil {
		printRanking(out, r.Ranking)
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(out, "\nwarnings:")
		for _, w := range r.Warnings {
			fmt.Fprintln(out, "  -", w)
		}
	}
}

// policyTitle names a target policy and its file, if it has one (a
// policy of the log's columns has none), or says none, when it is the
// logs' own unnamed one.
func policyTitle(p PolicyInfo, none string) string {
	switch {
	case p.Name == "":
		return none
	case p.File == "":
		return "target policy " + p.Name + " (the log's columns)"
	}
	return fmt.Sprintf("target policy %s (%s)", p.Name, p.File)
}

// printPolicy names a target policy, its file and its reference value.
func printPolicy(out io.Writer, p PolicyInfo) {
	fmt.Fprint(out, policyTitle(p, "target policy of the logs"))
	if p.Reference != nil {
		fmt.Fprintf(out, ", reference value %s", words.Num("%.6g", *p.Reference))
	}
	fmt.Fprintln(out)
}

// rowsOf returns the rows of one target policy.
func rowsOf(r *Report, policy string) []Row {
	var out []Row
	for _, row := range r.Estimates {
		if row.Policy == policy {
			out = append(out, row)
		}
	}
	return out
}

// printRows prints a table of estimates.
func printRows(out io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "estimator\testimate\tinterval\tESS\tmax share\ttime\t")
	for _, row := range rows {
		ci := "-"
		switch {
		case row.CILow != nil:
			tag := "boot"
			if row.Interval == "student-t" {
				tag = "t"
			}
			ci = fmt.Sprintf("[%s, %s] %s", words.Num("%.6g", *row.CILow), words.Num("%.6g", *row.CIHigh), tag)
		case row.WaldLow != nil:
			ci = fmt.Sprintf("[%s, %s] wald", words.Num("%.6g", *row.WaldLow), words.Num("%.6g", *row.WaldHigh))
		}
		ess, share := "-", "-"
		if row.Unit != "" {
			ess = fmt.Sprintf("%.1f/%s", row.ESS, words.Plural(row.Units, row.Unit))
			if row.MaxWeightShare != nil {
				share = fmt.Sprintf("%.1f%%", 100**row.MaxWeightShare)
			}
		}
		if row.Estimate == nil {
			fmt.Fprintf(tw, "%s\tfailed\t-\t-\t-\t%s\t\n", row.Estimator, words.Duration(row.Seconds))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", row.Estimator, words.Num("%.6g", *row.Estimate), ci, ess, share, words.Duration(row.Seconds))
	}
	tw.Flush()
}

// options are the registry options the flags and the logs give: the
// estimand, and the target's whole action distribution for discrete
// states (from a --target-policy, which fills the logs' columns, or from
// the logs' target_prob_k columns).
func (c *Evaluator) options(d *dataset.Dataset, target *Target) (ope.Options, []string, error) {
	o := ope.Options{Seed: c.TrainSeed, Neural: ratio.Neural{BatchSize: c.NeuralBatch}, Restarts: c.Restarts,
		ValueModel: c.ValueModel, RatioModel: c.RatioModel, Folds: c.Folds, Estimand: ope.DefaultEstimand(d),
		ValueNeural: c.NeuralValue, Minimax: c.NeuralMinimax}
	if c.Estimand != "" {
		o.Estimand = ope.Estimand(c.Estimand)
	}
	o.Estimand = c.banditEstimand(o.Estimand)
	var warnings []string
	if c.Draws != nil {
		if d.ActionDim == 0 {
			return o, nil, usagef("--target-draws is for logs of real-valued actions (action_0, action_1, ...); these logs have discrete actions: give target_prob_k columns or --target-policy")
		}
		if err := c.Draws.Check(d); err != nil {
			return o, nil, fmt.Errorf("%s: %w", c.DrawsFile, err)
		}
		o.TargetContinuous = c.Draws
		if c.Draws.MaxPerState() == 1 {
			o.Samples = 1 // one draw per state: more samples would repeat it
		}
	}
	if target != nil && target.Policy != nil {
		if !d.Discrete() || d.ActionDim > 0 {
			return o, nil, usagef("--target-policy needs discrete states and actions (state,p0,p1,... rows)")
		}
		if err := d.SetTargetPolicy(target.Policy); err != nil {
			return o, nil, fmt.Errorf("%s: %w", target.File, err)
		}
	}
	if d.Discrete() && d.ActionDim == 0 && d.HasTargetProbs() {
		t, err := value.TableFromData(d)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("the target's action distribution is not a function of the state (%v): model-based and the tabular value models are left out", err))
		} else {
			o.Target = t
		}
	}
	return o, warnings, nil
}

// readPolicyFile reads a tabular policy CSV (state,p0,...,p{K-1}).

// ClassScore is one function class a learner chose among, with its
// held-out score and that score's standard error (ope.ClassScore).
type ClassScore struct {
	Model string  `json:"model"`
	Score float64 `json:"score"`
	SE    float64 `json:"se"`
}

// resampleOptions are the options of a row's estimator on the bootstrap's
// resamples: opts, with the value model's class fixed to the one the
// whole log chose (the row's modelClass, "poly4"), so that a resample
// refits one class instead of choosing among five over five folds (26
// fits: on 150 Pendulum episodes of 1,000 steps, 25 s a resample). The
// interval then holds the class fixed; its choice's own variability is
// not in it.
func resampleOptions(opts ope.Options, row Row) ope.Options {
	var deg int
	if _, err := fmt.Sscanf(row.modelClass, "poly%d", &deg); err == nil {
		opts.ValueDegree = deg
	}
	if net := (value.Neural{}).Name(); row.modelClass == net && opts.ValueModel == "" {
		opts.ValueModel = net // the network Select escalated to
	}
	return opts
}
