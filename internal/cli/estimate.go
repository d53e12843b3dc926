package cli

import (
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/evaluate"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/progress"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/stream"
	"github.com/ihope-ope/ihope/value"
)

type estimateCmd struct {
	Data             string   `required:"" placeholder:"FILE" help:"Logs in the log contract (.csv, .tsv, .csv.gz, .tsv.gz or .parquet; - for standard input, with --format); or shards too large for memory together, as a quoted glob ('logs/*.parquet') or a directory, read one at a time in lexical order by the estimators whose statistics stream (see docs/streaming.md)."`
	Gamma            float64  `default:"1" help:"Discount: 1 for the average reward per step, below 1 for the normalised discounted reward."`
	Estimators       []string `sep:"," placeholder:"LIST" help:"Comma-separated estimators to run (default: every one that applies but is-trajectory and is-stepwise, which ihope benchmark shows worse than their weighted twins everywhere): ${estimators}."`
	Bootstrap        int      `default:"200" help:"Bootstrap resamples for the intervals; 0 turns intervals off."`
	BootstrapRefit   int      `name:"bootstrap-refit" default:"20" help:"Bootstrap resamples for the estimators that refit a model costing seconds on every resample (bch-kernel, bch-neural; at most --bootstrap)."`
	Refit            bool     `name:"refit" help:"Refit every estimator on every bootstrap resample (the slow ones on --bootstrap-refit resamples), instead of summing statistics over Poisson copies or keeping bch-neural's trained networks fixed (see docs/intervals.md)."`
	BootstrapNeural  *int     `name:"bootstrap-neural" hidden:"" renamed:"bootstrap-refit" why:"it governs every estimator that refits on each resample, bch-kernel too"`
	NeuralBatch      int      `default:"${neuralbatch}" help:"Transitions in the sample whose kernel loss each of bch-neural's networks minimises for ${sampleiters} iterations before drawing the next (the kernel costs batch^2 per iteration)."`
	Restarts         int      `default:"${restarts}" help:"Networks bch-neural averages, each trained with its own seed derived from --train-seed; the notes give the spread of their estimates (restart_sd in --json)."`
	Reservoir        int      `default:"200000" help:"With --data shards: bch-neural trains on a sample of whole episodes of about this many steps, drawn in a first pass over the shards by a hash of --train-seed and the episode ids, and its networks are evaluated on every step in a second pass."`
	Alpha            float64  `default:"0.05" help:"Intervals have coverage 1-alpha."`
	Seed             uint64   `default:"1" help:"Seed of the bootstrap."`
	TrainSeed        uint64   `default:"1" help:"Seed of every training: bch-neural's networks, a neural value model (separate from the bootstrap's --seed; bootstrap refits draw fresh training seeds from --seed)."`
	Estimand         string   `enum:",horizon,long-run" default:"" help:"What to estimate: horizon (the normalised T-step value from the logged start states, T each episode's length) or long-run (the long-run average reward, or (1-gamma) E[V(s0)] for gamma < 1). Default: horizon for several episodes, long-run for one."`
	TargetPolicy     []string `sep:"none" placeholder:"[NAME=]FILE" help:"The target policy as a CSV (state,p0,p1,...): its whole action distribution, which model-based, fqe and dr need (or give target_prob_0, target_prob_1, ... columns). Give it several times to evaluate several policies on the same logs and rank them (NAME defaults to the file's base name)."`
	Reference        []string `sep:"none" placeholder:"NAME=VALUE" help:"A known value of target policy NAME (say from an experiment); with several policies, the ranking says how well each estimator's order matches the references (Spearman's rho, regret@1)."`
	Report           string   `placeholder:"FILE.html" help:"Also write a self-contained HTML report: the data, a forest plot of the estimates and intervals, each estimator's weights and ESS, the warnings and the command line."`
	ValueModel       string   `enum:",tabular,linear,neural" default:"" help:"Value model of fqe and dr: tabular, linear or neural (default: tabular for discrete states, linear for real ones; neural is stationary: gamma < 1 with --estimand long-run); neural also trains mql's network form on real states (default: its kernel form)."`
	RatioModel       string   `enum:",tabular,kernel,neural,marginal" default:"" help:"Ratio model of dr: tabular, kernel, neural or marginal (default: marginal under horizon, tabular or kernel under long-run); neural also trains the network forms of mwl and dualdice on real states (default: their kernel forms)."`
	Folds            int      `default:"2" help:"Cross-fitting folds of dr (1 turns cross-fitting off)."`
	BlockLength      int      `help:"Block length of the block bootstrap used for a single long episode (default: cube root of its length)."`
	Workers          int      `help:"Goroutines for the estimators and the bootstrap (default: the number of CPUs)."`
	JSON             bool     `name:"json" help:"Print exactly one JSON object on stdout."`
	Timings          bool     `help:"Also give each estimator's time in --json (seconds) and in the --report. Without it they hold only what the data, the flags and the seeds fix, so two runs write the same bytes (the table on the terminal always shows the times)."`
	TargetDraws      string   `name:"target-draws" placeholder:"FILE" help:"For logs of real-valued actions: actions drawn from the target policy at the logged states, a CSV (state_0,...,action_0,...; .tsv and .gz too) with a draw at every logged state and at every given next state, which lets fqe, dr (with their linear or neural value models), mql and mwl run where the target cannot be run by ihope."`
	Bounds           bool     `help:"Also give each row that has one a confidence bound on its estimand at level 1-alpha (bound_low, bound_high, bound_method in --json): HCOPE on the horizon value beside the trajectory-wise IS rows, the kernel Bellman interval on the long-run value beside model-based and fqe (discrete states, gamma < 1). Needs --reward-range."`
	RewardRange      string   `name:"reward-range" placeholder:"LO,HI" help:"With --bounds: the range every reward lies in, as you know it (not the sample's minimum and maximum: the bounds' guarantee rests on a range known before the data). With a negative LO write --reward-range=LO,HI."`
	Baseline         string   `placeholder:"VALUE|NAME|behavior" help:"With --bounds: a verdict per target policy against a value, another target policy (--target-policy NAME=FILE) or the behavior's own value: better or worse with the bounds' confidence, or not shown."`
	BoundCalibration string   `name:"bound-calibration" enum:"finite-sample,sign-flip" default:"finite-sample" help:"With --bounds: the kernel Bellman interval's threshold: finite-sample (a guarantee at every sample size, wide) or sign-flip (sign flips of whole episodes: asymptotic, much narrower)."`
	MaxMemory        string   `name:"max-memory" placeholder:"SIZE" help:"The memory a run may plan to use beyond the log it reads (512MB, 8GB; default: half the machine's memory): a run that would need more is refused before it allocates, with what it would take and what to do."`
	FitBehavior      bool     `name:"fit-behavior" help:"Fit the behavior policy from the logged (state, action) pairs and weigh by it: counts for discrete states, logistic regression for real ones, cross-fitted over episodes (for logs without behavior probabilities; with them, the output says how far the fitted ones are)."`

	dataFlags `embed:""` // how to read --data (data.go)
}

// testNeural holds the settings of the neural value learner and of the
// neural minimax forms, which no flag sets: zero (their defaults) but in
// the tests, which shorten the trainings (a neural fqe trains for about
// 10 s with the defaults, on any log).
var testNeural struct {
	value   value.Neural
	minimax value.MinimaxNeural
}

// options are the evaluation's options the flags give.
func (c *estimateCmd) options(stderr io.Writer) evaluate.Options {
	o := evaluate.Options{Gamma: c.Gamma, Estimators: c.Estimators, Bootstrap: c.Bootstrap, BootstrapRefit: c.BootstrapRefit, Refit: c.Refit,
		NeuralBatch: c.NeuralBatch, Restarts: c.Restarts, Reservoir: c.Reservoir, Alpha: c.Alpha, Seed: c.Seed, TrainSeed: c.TrainSeed,
		Estimand: c.Estimand, ValueModel: c.ValueModel, RatioModel: c.RatioModel, Folds: c.Folds, BlockLength: c.BlockLength,
		Workers: c.Workers, Timings: c.Timings, KeepWeights: c.Report != "", Bandit: c.Bandit, DrawsFile: c.TargetDraws,
		Bounds: c.Bounds, RewardRange: c.RewardRange, Baseline: c.Baseline, BoundCalibration: c.BoundCalibration,
		MaxMemory: c.MaxMemory, FitBehavior: c.FitBehavior, NeuralValue: testNeural.value, NeuralMinimax: testNeural.minimax}
	if progress.IsTerminal(stderr) {
		o.Progress = stderr
	}
	return o
}

func (c *estimateCmd) Run(e *runEnv) error {
	ev, err := evaluate.New(c.options(e.stderr))
	if err != nil {
		return err
	}
	if c.Report != "" {
		// --target-policy is NAME=FILE or FILE: both halves are tried.
		inputs := []string{c.Data, c.TargetDraws, c.WriteMapping}
		for _, arg := range c.TargetPolicy {
			_, file, _ := strings.Cut(arg, "=")
			inputs = append(inputs, arg, file)
		}
		if err := evaluate.CheckReportPath(c.Report, inputs); err != nil {
			return err
		}
	}
	if c.Bounds && c.Data != "-" && stream.IsPattern(c.Data) {
		return usagef("--bounds reads the log in memory: give one file, not shards")
	}
	if c.Data != "-" && stream.IsPattern(c.Data) {
		return c.runStream(e, ev)
	}
	files, _, err := c.targets(nil, false)
	if err != nil {
		return err
	}
	if c.TargetDraws != "" {
		if ev.Draws, err = readDraws(c.TargetDraws); err != nil {
			return err
		}
	}
	if len(files) > 0 {
		c.dataFlags.target, c.dataFlags.targetFile = files[0].Policy, files[0].File // a log without target columns takes the first file's
		first := files[0]
		c.dataFlags.beforeTarget = func(d *dataset.Dataset) error { return ev.CheckMemory(d, &first) }
	}
	d, err := c.read(c.Data, e.stderr)
	if err != nil {
		return err
	}
	if d, err = ev.Prepare(d); err != nil {
		return err
	}
	named, err := c.readPolicies(c.Data, d, e.stderr)
	if err != nil {
		return err
	}
	targets, refs, err := c.targets(named, true)
	if err != nil {
		return err
	}
	rep, err := ev.Evaluate(d, displayName(c.Data, stdinName), targets, refs)
	if err != nil {
		return err
	}
	if err := c.write(e, ev, rep); err != nil {
		return err
	}
	return ev.NoEstimate(rep)
}

// write writes rep: the report if asked for, then the JSON or the table.
func (c *estimateCmd) write(e *runEnv, ev *evaluate.Evaluator, rep *evaluate.Report) error {
	if c.Report != "" {
		if err := rep.WriteHTML(c.Report, e.args); err != nil {
			return err
		}
	}
	if c.JSON {
		return rep.WriteJSON(e.stdout)
	}
	rep.WriteText(e.stdout)
	return nil
}

// runStream estimates from shards (--data a glob or a directory) with
// package stream: one shard in memory at a time, the estimators whose
// statistics are sums, Poisson bootstrap intervals.
func (c *estimateCmd) runStream(e *runEnv, ev *evaluate.Evaluator) error {
	if c.TargetDraws != "" {
		return usagef("--target-draws: the estimators of real actions (fqe, dr, mql, mwl) do not stream; run them on one file that fits in memory")
	}
	for _, f := range []struct {
		set  bool
		flag string
	}{{len(c.TargetPolicy) > 1, "--target-policy given more than once"}, {c.Report != "", "--report"}, {c.FitBehavior, "--fit-behavior"},
		{len(c.Reference) > 0, "--reference"}, {c.WriteMapping != "", "--write-mapping"}, {len(c.Categorical) > 0, "--categorical"}} {
		if f.set {
			return usagef("%s does not work with shards (--data %s): it needs the whole log in memory; give one file", f.flag, c.Data)
		}
	}
	o, err := c.dataFlags.options(c.Data)
	if err != nil {
		return err
	}
	targets, refs, err := c.targets(nil, true)
	if err != nil {
		return err
	}
	files, err := stream.Files(c.Data)
	if err != nil {
		return err
	}
	prev := log.Writer() // parquet-go's own messages, as read does
	if !c.Verbose {
		log.SetOutput(io.Discard)
	}
	defer log.SetOutput(prev)
	rep, err := ev.EvaluateShards(files, o, c.Data, targets, refs)
	if err != nil {
		return targetHint(err)
	}
	return c.write(e, ev, rep)
}

// targets returns the target policies: those the log names in its
// columns (named, one dataset each; a log with unnamed target columns has
// none), then the --target-policy files; and it parses --reference. A
// policy file is named NAME in NAME=FILE, or else by its file's base name
// without the extension; names must differ. A reference names its policy
// (NAME=VALUE), except that the one policy of a run with at most one may
// be given as a bare VALUE. The returned map holds the references by
// policy name ("" for the logs' own target when no policy is named).
//
// Before the log is read (read false) it checks what the flags alone
// decide, so that their mistakes come first; a reference to a policy no
// file names may still name one of the log's columns, and is checked
// once it is read.
func (c *estimateCmd) targets(named []*dataset.Dataset, read bool) ([]evaluate.Target, map[string]float64, error) {
	var out []evaluate.Target
	for _, d := range named {
		if d.Policy != "" {
			out = append(out, evaluate.Target{Name: d.Policy, Data: d})
		}
	}
	for _, arg := range c.TargetPolicy {
		name, file, ok := strings.Cut(arg, "=")
		if !ok || strings.ContainsAny(name, `/\`) { // a path with '=' in it
			name, file = strings.TrimSuffix(filepath.Base(arg), filepath.Ext(arg)), arg
		}
		if name == "" || file == "" {
			return nil, nil, usagef("--target-policy %q: want FILE or NAME=FILE", arg)
		}
		if slices.ContainsFunc(out, func(t evaluate.Target) bool { return t.Name == name }) {
			return nil, nil, usagef("--target-policy: two policies named %q (the log's columns name its policies' too): name them with NAME=FILE", name)
		}
		p, err := readPolicyFile(file)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, evaluate.Target{Name: name, File: file, Policy: p})
	}
	refs := map[string]float64{}
	for _, arg := range c.Reference {
		name, val, ok := strings.Cut(arg, "=")
		if !ok {
			if len(out) > 1 {
				return nil, nil, usagef("--reference %q: with several target policies, say which: NAME=VALUE", arg)
			}
			name, val = "", arg
			if len(out) == 1 {
				name = out[0].Name
			}
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, usagef("--reference %q: %q is not a finite number", arg, val)
		}
		if ok && read && !slices.ContainsFunc(out, func(t evaluate.Target) bool { return t.Name == name }) {
			var names []string
			for _, t := range out {
				names = append(names, t.Name)
			}
			if len(names) == 0 {
				return nil, nil, usagef("--reference %q names a policy, but no --target-policy is given and the log names none: give the bare value", arg)
			}
			return nil, nil, usagef("--reference %q: no target policy %q (the policies are %s)", arg, name, strings.Join(names, ", "))
		}
		if _, dup := refs[name]; dup {
			return nil, nil, usagef("--reference: two values for policy %q", name)
		}
		refs[name] = v
	}
	return out, refs, nil
}

func readPolicyFile(path string) (*policy.Tabular, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := policy.ReadCSV(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// readDraws reads a --target-draws file, whose format its name gives.
func readDraws(path string) (*policy.Draws, error) {
	format, err := drawsFormat(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return policy.ReadDraws(f, format, path)
}

// drawsFormat is the format a --target-draws name gives: CSV or TSV,
// plain or gzip-compressed (a usage error otherwise).
func drawsFormat(path string) (logio.Format, error) {
	f, err := logio.FormatOf(path)
	if err != nil || f == logio.Parquet {
		return "", usagef("--target-draws %q: want a file name ending in .csv, .tsv, .csv.gz or .tsv.gz", path)
	}
	return f, nil
}
