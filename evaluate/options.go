package evaluate

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/value"
)

// Options are the settings of an evaluation. They are the flags of ihope
// estimate, under the same names (docs/estimators.md and
// docs/intervals.md say what each does); the zero value of a field is
// not always its flag's default, so start from Defaults.
type Options struct {
	Gamma          float64  // the discount: 1 for the average reward per step
	Estimators     []string // the estimators to run (nil: the default set that applies)
	Bootstrap      int      // resamples for the intervals; 0 turns them off
	BootstrapRefit int      // resamples of the estimators that refit a model on each (at most Bootstrap)
	Refit          bool     // refit every estimator on every resample, not only those whose statistics do not sum
	NeuralBatch    int      // bch-neural's sample size per draw
	Restarts       int      // networks bch-neural averages
	Reservoir      int      // steps of whole episodes bch-neural trains on over shards
	Alpha          float64  // intervals have coverage 1-Alpha
	Seed           uint64   // the bootstrap's seed
	TrainSeed      uint64   // every training's seed
	Estimand       string   // "", "horizon" or "long-run"
	ValueModel     string   // fqe's and dr's value model: "", "tabular", "linear", "neural"
	RatioModel     string   // dr's ratio model: "", "tabular", "kernel", "neural", "marginal"
	Folds          int      // dr's cross-fitting folds
	BlockLength    int      // the block bootstrap's block length for one long episode (0: its cube root)
	Workers        int      // goroutines (0: the number of CPUs)
	Timings        bool     // keep each row's time in the JSON and the HTML report
	KeepWeights    bool     // keep each row's weights, which the HTML report draws
	Bandit         bool     // the log is a contextual bandit's: one step an episode, its horizon value only

	// Draws are actions drawn from the target at the logged states, for
	// logs of real-valued actions; DrawsFile names them in messages.
	Draws     *policy.Draws
	DrawsFile string

	Bounds           bool   // confidence bounds beside the rows that have one
	RewardRange      string // "LO,HI": the range every reward lies in, known before the data
	Baseline         string // VALUE, a target policy's name or "behavior": a verdict per policy
	BoundCalibration string // "finite-sample" or "sign-flip"

	MaxMemory   string // the memory a run may plan to use beyond the log ("8GB"; "": half the machine's)
	FitBehavior bool   // fit the behavior policy from the logged actions

	// NeuralValue and NeuralMinimax are the settings of the neural value
	// model and of the neural minimax forms (zero: their defaults).
	NeuralValue   value.Neural
	NeuralMinimax value.MinimaxNeural

	// Progress, if not nil, is where the bars of long steps are drawn: a
	// terminal (progress.IsTerminal), never a pipe or a file.
	Progress io.Writer
}

// Defaults returns the options of ihope estimate without flags.
func Defaults() Options {
	return Options{Gamma: 1, Bootstrap: 200, BootstrapRefit: 20, NeuralBatch: ratio.DefaultBatchSize, Restarts: ratio.DefaultRestarts,
		Reservoir: 200000, Alpha: 0.05, Seed: 1, TrainSeed: 1, Folds: 2, BoundCalibration: "finite-sample"}
}

// A SettingsError is a mistake in the options, or in how they fit the
// log, rather than in the log itself (ihope estimate exits with its usage
// status for one).
type SettingsError struct{ Err error }

func (e SettingsError) Error() string { return e.Err.Error() }
func (e SettingsError) Unwrap() error { return e.Err }

func usagef(format string, a ...any) error { return SettingsError{fmt.Errorf(format, a...)} }

// IsSettingsError reports whether err is, or wraps, a SettingsError.
func IsSettingsError(err error) bool {
	var se SettingsError
	return errors.As(err, &se)
}

// LogEstimators lists, in output order, the estimators that can run on
// logs alone (the others need a simulator or the target's whole policy).
var LogEstimators = func() []string {
	var out []string
	for _, e := range ope.Registry() {
		if e.LogsOnly() {
			out = append(out, e.Name)
		}
	}
	return out
}()

// An Evaluator evaluates target policies on logs with one set of
// options. New checks the options; Prepare (which
// fits the behavior with Options.FitBehavior) gives the log the
// estimators see; Evaluate runs
// them and returns the whole report. An Evaluator is for one log: it
// keeps the behavior it fitted, for the report.
type Evaluator struct {
	Options

	policyLabel string // the target policy being estimated, for the progress bars (several policies)
	// markov is the Markov test of the log being evaluated, run once for
	// all its target policies (the test reads no policy); nil until run.
	markov *markovRun
	// recalibrate, set by FitBehavior on discrete states, calibrates
	// the fitted behavior probabilities to another target's (several
	// policies).
	recalibrate func(*dataset.Dataset) (*dataset.Dataset, error)
	behavior    *behaviorInfo // where the behavior probabilities come from (FitBehavior)
	movable     bool          // ihope-beam's statistics: leave out the estimators whose sums cannot move (stream.Movable)
}

// New returns an Evaluator for o, or a SettingsError naming what is wrong
// with o.
func New(o Options) (*Evaluator, error) {
	if !(o.Gamma > 0 && o.Gamma <= 1) {
		return nil, usagef("--gamma %v is outside (0, 1]", o.Gamma)
	}
	if o.Bootstrap < 0 {
		return nil, usagef("--bootstrap %d is negative", o.Bootstrap)
	}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return nil, usagef("--alpha %v is outside (0, 1)", o.Alpha)
	}
	if o.NeuralBatch < 2 {
		return nil, usagef("--neural-batch %d: want at least 2 transitions", o.NeuralBatch)
	}
	if o.Reservoir < 1 {
		return nil, usagef("--reservoir %d: want at least 1", o.Reservoir)
	}
	if o.Restarts < 1 {
		return nil, usagef("--restarts %d: want at least 1", o.Restarts)
	}
	for _, name := range o.Estimators {
		if _, ok := ope.Lookup(name); !ok || !slices.Contains(LogEstimators, name) {
			return nil, usagef("unknown estimator %q: choose from %s", name, strings.Join(LogEstimators, ", "))
		}
	}
	o.Estimators = uniq(o.Estimators) // naive,naive runs once
	if _, _, err := memoryLimit(o.MaxMemory); err != nil {
		return nil, err
	}
	c := &Evaluator{Options: o}
	if _, _, err := c.boundSettings(); err != nil {
		return nil, err
	}
	return c, nil
}
