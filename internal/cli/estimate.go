package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
)

type estimateCmd struct {
	Data            string   `required:"" placeholder:"FILE" help:"Logs in the log contract (.csv or .parquet)."`
	Gamma           float64  `default:"1" help:"Discount: 1 for the average reward per step, below 1 for the normalised discounted reward."`
	Estimators      []string `sep:"," placeholder:"LIST" help:"Comma-separated estimators to run (default: every one that applies): ${estimators}."`
	Bootstrap       int      `default:"200" help:"Bootstrap resamples for the intervals; 0 turns intervals off."`
	BootstrapNeural int      `default:"20" help:"Bootstrap resamples for bch-neural, which retrains its network on every resample (at most --bootstrap)."`
	NeuralBatch     int      `default:"512" help:"Transitions per minibatch of bch-neural's kernel loss. The loss adds about E[delta^2]/batch, which flattens w: a larger batch removes more of that bias at a quadratic cost in time (2048 halved it on SUMO's traffic logs, 5x slower)."`
	Alpha           float64  `default:"0.05" help:"Intervals have coverage 1-alpha."`
	Seed            uint64   `default:"1" help:"Seed of the bootstrap."`
	BlockLength     int      `help:"Block length of the block bootstrap used for a single long episode (default: cube root of its length)."`
	Workers         int      `help:"Goroutines for the bootstrap (default: the number of CPUs)."`
	JSON            bool     `name:"json" help:"Print exactly one JSON object on stdout."`
}

// logEstimators lists, in output order, the estimators that work from
// logged probabilities alone. The model-based estimator needs the target's
// full action distribution and the on-policy oracle a simulator, so they
// run only in demo and experiments.
var logEstimators = []string{"naive", "is-trajectory", "wis-trajectory", "is-stepwise", "wis-stepwise", "bch-tabular", "bch-neural"}

// newLogEstimator returns a fresh estimator by name.
func newLogEstimator(name string) ope.Estimator {
	switch name {
	case "naive":
		return &ope.Naive{}
	case "is-trajectory":
		return &ope.TrajectoryIS{}
	case "wis-trajectory":
		return &ope.TrajectoryWIS{}
	case "is-stepwise":
		return &ope.StepwiseIS{}
	case "wis-stepwise":
		return &ope.StepwiseWIS{}
	case "bch-tabular":
		return &ope.DensityRatioTabular{}
	case "bch-neural":
		return &ope.DensityRatioNeural{}
	}
	return nil
}

// applies reports whether an estimator can run on d, and why not.
func applies(name string, d *dataset.Dataset) (bool, string) {
	switch name {
	case "bch-tabular":
		if !d.Discrete() {
			return false, "bch-tabular needs a discrete state column"
		}
	case "bch-neural":
		if d.Discrete() {
			return false, "bch-neural needs real-valued state columns state_0, state_1, ..."
		}
	}
	return true, ""
}

// estimateRow is one estimator's result; the JSON names are a contract.
type estimateRow struct {
	Estimator         string   `json:"estimator"`
	Estimate          *float64 `json:"estimate"`
	Error             string   `json:"error,omitempty"`
	CILow             *float64 `json:"ci_low"`
	CIHigh            *float64 `json:"ci_high"`
	ESS               float64  `json:"ess"`
	Units             int      `json:"weight_units"`
	Unit              string   `json:"weight_unit"`
	MaxWeightShare    float64  `json:"max_weight_share"`
	Resamples         int      `json:"bootstrap_resamples"`
	BootstrapFailures int      `json:"bootstrap_failures,omitempty"`
	Seconds           float64  `json:"seconds"`
}

type dataSummary struct {
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
	ZeroTarget  int      `json:"steps_target_prob_zero"`
	LargeRatio  int      `json:"steps_ratio_over_1e6"`
	MaxLogRatio *float64 `json:"max_log_ratio"`
	OpenEndings int      `json:"episodes_without_next_state"`
	Gamma       float64  `json:"gamma"`
}

type bootstrapInfo struct {
	Resamples       int     `json:"resamples"`
	Alpha           float64 `json:"alpha"`
	Method          string  `json:"method"`
	BlockLength     int     `json:"block_length,omitempty"`
	ResamplesNeural int     `json:"resamples_bch_neural,omitempty"`
	Seed            uint64  `json:"seed"`
}

type estimateReport struct {
	Estimates []estimateRow  `json:"estimates"`
	Data      dataSummary    `json:"data"`
	Bootstrap *bootstrapInfo `json:"bootstrap"`
	Warnings  []string       `json:"warnings"`
}

func (c *estimateCmd) Run(e *runEnv) error {
	if !(c.Gamma > 0 && c.Gamma <= 1) {
		return usagef("--gamma %v is outside (0, 1]", c.Gamma)
	}
	if c.Bootstrap < 0 {
		return usagef("--bootstrap %d is negative", c.Bootstrap)
	}
	if !(c.Alpha > 0 && c.Alpha < 1) {
		return usagef("--alpha %v is outside (0, 1)", c.Alpha)
	}
	if c.NeuralBatch < 2 {
		return usagef("--neural-batch %d: want at least 2 transitions", c.NeuralBatch)
	}
	for _, name := range c.Estimators {
		if !slices.Contains(logEstimators, name) {
			return usagef("unknown estimator %q: choose from %s", name, strings.Join(logEstimators, ", "))
		}
	}
	d, err := dataset.ReadFile(c.Data)
	if err != nil {
		return err
	}
	rep, err := c.estimate(d, e.stderr)
	if err != nil {
		return err
	}
	rep.Data.File = c.Data
	if c.JSON {
		return json.NewEncoder(e.stdout).Encode(rep)
	}
	printEstimate(e.stdout, rep)
	return nil
}

// estimate runs the chosen estimators and the bootstrap on d.
func (c *estimateCmd) estimate(d *dataset.Dataset, stderr io.Writer) (*estimateReport, error) {
	rep := &estimateReport{Warnings: []string{}}
	rep.Data, rep.Warnings = summarize(d, c.Gamma)

	names := c.Estimators
	explicit := len(names) > 0
	if !explicit {
		names = logEstimators
	}
	var run []string
	for _, name := range names {
		if ok, why := applies(name, d); !ok {
			if explicit {
				return nil, fmt.Errorf("%s", why)
			}
			continue
		}
		run = append(run, name)
	}
	newEst := func(name string) ope.Estimator {
		est := newLogEstimator(name)
		if nn, ok := est.(*ope.DensityRatioNeural); ok {
			nn.Seed = c.Seed
			nn.Learner.BatchSize = c.NeuralBatch
		}
		return est
	}
	failed := map[int]bool{}
	for _, name := range run {
		est := newEst(name)
		if nn, ok := est.(*ope.DensityRatioNeural); ok && isTerminal(stderr) {
			nn.Learner.Progress = func(iter int, loss, heldOut float64) {
				fmt.Fprintf(stderr, "\rbch-neural: iteration %d, loss %.4g, held-out loss %.4g   ", iter, loss, heldOut)
			}
		}
		t0 := time.Now()
		res, err := est.Estimate(d, c.Gamma)
		if _, ok := est.(*ope.DensityRatioNeural); ok && isTerminal(stderr) {
			fmt.Fprint(stderr, "\r\033[K")
		}
		row := estimateRow{Estimator: est.Name(), Unit: weightUnit(est.Name()), Seconds: time.Since(t0).Seconds()}
		if err == nil && (math.IsInf(res.Value, 0) || math.IsNaN(res.Value)) {
			err = fmt.Errorf("%s: the estimate is %v", est.Name(), res.Value)
		}
		if err != nil {
			// One estimator failing (all weights zero, an overflow, a
			// solver that does not converge) does not hide the others.
			row.Error = err.Error()
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: no estimate: %v", est.Name(), err))
			rep.Estimates = append(rep.Estimates, row)
			failed[len(rep.Estimates)-1] = true
			continue
		}
		v := res.Value
		row.Estimate = &v
		row.ESS = ope.KishESS(res.Weights)
		row.Units = len(res.Weights)
		row.MaxWeightShare = ope.MaxShare(res.Weights)
		rep.Warnings = append(rep.Warnings, weightWarnings(row)...)
		if bt, ok := est.(*ope.DensityRatioTabular); ok && bt.Model != nil && bt.Model.Negative > 0 {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf(
				"bch-tabular: the learned ratio w is negative in %d states (the exact minimiser of the paper's loss is not constrained to w >= 0); a few small negative values are sampling noise, many mean too little data", bt.Model.Negative))
		}
		rep.Estimates = append(rep.Estimates, row)
	}
	if c.Bootstrap == 0 {
		return rep, nil
	}
	workers := c.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	// bch-neural retrains a network per resample, so it gets its own,
	// smaller number of resamples; the resamples it sees are the first
	// ones the other estimators see (same seed, same streams).
	var fast, slow []int // indices into run and rep.Estimates
	for i, name := range run {
		if failed[i] {
			continue
		}
		if name == "bch-neural" {
			slow = append(slow, i)
		} else {
			fast = append(fast, i)
		}
	}
	nSlow := min(c.BootstrapNeural, c.Bootstrap)
	groups := []struct {
		idx []int
		B   int
	}{{fast, c.Bootstrap}, {slow, nSlow}}
	base := ope.Bootstrap{Alpha: c.Alpha, Seed: c.Seed, BlockLength: c.BlockLength, Workers: workers}
	method, L := base.Method(d)
	rep.Bootstrap = &bootstrapInfo{Resamples: c.Bootstrap, Alpha: c.Alpha, Method: method, BlockLength: L, Seed: c.Seed}
	if method == "blocks" && c.Gamma < 1 {
		// The discounted value of one episode depends on where it starts;
		// blocks moved to other positions would change it (and the dummy
		// start transition of Algorithm 2), so there is no honest block
		// bootstrap for it.
		rep.Bootstrap = nil
		rep.Warnings = append(rep.Warnings, "one episode with gamma < 1: no intervals (the discounted value depends on where the episode starts, which a block bootstrap cannot resample); use gamma = 1 or log several episodes")
		return rep, nil
	}
	if method == "blocks" {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"one episode only: intervals come from a moving-block bootstrap with blocks of %d steps; they assume steps further apart than that are nearly independent", L))
	}
	if len(slow) > 0 {
		rep.Bootstrap.ResamplesNeural = nSlow
		if nSlow > 0 {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf(
				"bch-neural retrains its network on every resample, so its interval uses only %d resamples (--bootstrap-neural): treat its ends as rough", nSlow))
		}
	}
	total := 0
	for _, g := range groups {
		if len(g.idx) > 0 {
			total += g.B
		}
	}
	var progress func(int)
	if isTerminal(stderr) && total > 0 {
		bar := progressbar.NewOptions(total, progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription("bootstrap"), progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true), progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish())
		progress = func(int) { bar.Add(1) }
		defer bar.Finish()
	}
	for _, g := range groups {
		if len(g.idx) == 0 || g.B == 0 {
			continue
		}
		bs := base
		bs.Resamples = g.B
		bs.Progress = progress
		ivs, err := bs.Run(d, c.Gamma, func() []ope.Estimator {
			ests := make([]ope.Estimator, len(g.idx))
			for k, i := range g.idx {
				ests[k] = newEst(run[i])
			}
			return ests
		})
		if err != nil {
			return nil, err
		}
		for k, i := range g.idx {
			row := &rep.Estimates[i]
			iv := ivs[k]
			if len(iv.Estimates) > 0 {
				row.CILow, row.CIHigh = &iv.Low, &iv.High
			}
			row.Resamples = g.B
			row.BootstrapFailures = iv.Failures
			if iv.Failures > 0 {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: failed on %d of %d bootstrap resamples (first: %v); the interval uses the others",
					row.Estimator, iv.Failures, g.B, iv.FirstFailure))
			}
		}
	}
	return rep, nil
}

func weightUnit(name string) string {
	switch name {
	case "is-trajectory", "wis-trajectory":
		return "episode"
	case "naive":
		return ""
	}
	return "step"
}

// weightWarnings says in plain words when an estimator's weights collapse:
// a Kish effective sample size below 5% of the episodes (trajectory-wise
// weights) or 0.5% of the steps (step weights), or, with eight units or
// more, one weight carrying over a quarter of the total. Equal weights on
// a handful of units are not a collapse.
func weightWarnings(r estimateRow) []string {
	if r.Units < 2 || r.Unit == "" {
		return nil
	}
	if r.ESS == 0 {
		return []string{fmt.Sprintf("%s: every weight is 0 (the target never takes the logged actions), so its estimate carries no information", r.Estimator)}
	}
	frac := 0.05
	if r.Unit == "step" {
		frac = 0.005
	}
	if r.ESS < frac*float64(r.Units) || (r.Units >= 8 && r.MaxWeightShare > 0.25) {
		return []string{fmt.Sprintf("%s: the weights collapse onto a few %ss (effective sample size %.1f of %d; the largest weight carries %.0f%% of the total); its estimate rests on very little data",
			r.Estimator, r.Unit, r.ESS, r.Units, 100*r.MaxWeightShare)}
	}
	return nil
}

// summarize describes the data and checks the behavior policy's support.
func summarize(d *dataset.Dataset, gamma float64) (dataSummary, []string) {
	s := dataSummary{Episodes: len(d.Episodes), Steps: d.NumSteps(), Gamma: gamma, MinLength: math.MaxInt}
	warnings := []string{}
	states := map[int]bool{}
	actions := map[int]bool{}
	var firstLarge string
	var meanR float64 // running mean: no overflow for huge rewards
	seen := 0
	maxLR := math.Inf(-1)
	for i := range d.Episodes {
		ep := &d.Episodes[i]
		s.MinLength = min(s.MinLength, len(ep.Steps))
		s.MaxLength = max(s.MaxLength, len(ep.Steps))
		if n := len(ep.Steps); n > 0 && !ep.Steps[n-1].HasNext {
			s.OpenEndings++
		}
		for t := range ep.Steps {
			st := &ep.Steps[t]
			seen++
			meanR += (st.Reward - meanR) / float64(seen)
			if d.Discrete() {
				states[st.State] = true
			}
			if d.NumActions > 0 {
				actions[st.Action] = true
			}
			lr := st.LogRatio()
			if math.IsInf(st.LogTarget, -1) {
				s.ZeroTarget++
				continue
			}
			maxLR = math.Max(maxLR, lr)
			if lr > math.Log(1e6) {
				if s.LargeRatio == 0 {
					firstLarge = fmt.Sprintf("episode %q, t = %d, ratio %.3g", ep.ID, t, math.Exp(lr))
				}
				s.LargeRatio++
			}
		}
	}
	if s.Steps > 0 && !math.IsInf(meanR, 0) {
		s.MeanReward = &meanR
	}
	if !math.IsInf(maxLR, 0) {
		s.MaxLogRatio = &maxLR
	}
	if d.Discrete() {
		s.StateKind = "discrete"
		s.StatesSeen = len(states)
	} else {
		s.StateKind = "real"
		s.StateDim = d.StateDim
	}
	s.ActionsSeen = len(actions)
	if s.LargeRatio > 0 {
		warnings = append(warnings, fmt.Sprintf("support: %d logged steps have pi/pi0 > 1e6 (first: %s): the behavior policy hardly ever takes actions the target favours there, so every importance-weighted estimate is fragile",
			s.LargeRatio, firstLarge))
	}
	if s.OpenEndings > 0 {
		warnings = append(warnings, fmt.Sprintf("%d episodes end without next_state: their last step is used for rewards but not as a transition by the density-ratio estimators", s.OpenEndings))
	}
	return s, warnings
}

func printEstimate(out io.Writer, r *estimateReport) {
	d := r.Data
	quantity := "average reward per step"
	if d.Gamma < 1 {
		quantity = fmt.Sprintf("normalised discounted reward, gamma = %g", d.Gamma)
	}
	fmt.Fprintf(out, "%s: %d episodes, %d steps (lengths %d..%d), %s states", d.File, d.Episodes, d.Steps, d.MinLength, d.MaxLength, d.StateKind)
	if d.StateKind == "discrete" {
		fmt.Fprintf(out, " (%d seen), %d actions seen", d.StatesSeen, d.ActionsSeen)
	}
	mean := "-"
	if d.MeanReward != nil {
		mean = fmt.Sprintf("%.6g", *d.MeanReward)
	}
	fmt.Fprintf(out, "\nquantity: %s; mean logged reward %s\n", quantity, mean)
	if b := r.Bootstrap; b != nil {
		fmt.Fprintf(out, "intervals: %g%% percentile bootstrap, %d resamples over %s", 100*(1-b.Alpha), b.Resamples, b.Method)
		if b.Method == "blocks" {
			fmt.Fprintf(out, " of %d steps", b.BlockLength)
		}
		fmt.Fprintf(out, ", seed %d\n", b.Seed)
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "estimator\testimate\tinterval\tESS\tmax share\ttime\t")
	for _, row := range r.Estimates {
		ci := "-"
		if row.CILow != nil {
			ci = fmt.Sprintf("[%.6g, %.6g]", *row.CILow, *row.CIHigh)
		}
		ess, share := "-", "-"
		if row.Unit != "" {
			ess = fmt.Sprintf("%.1f/%d %ss", row.ESS, row.Units, row.Unit)
			share = fmt.Sprintf("%.1f%%", 100*row.MaxWeightShare)
		}
		if row.Estimate == nil {
			fmt.Fprintf(tw, "%s\tfailed\t-\t-\t-\t%s\t\n", row.Estimator, fmtDuration(row.Seconds))
			continue
		}
		fmt.Fprintf(tw, "%s\t%.6g\t%s\t%s\t%s\t%s\t\n", row.Estimator, *row.Estimate, ci, ess, share, fmtDuration(row.Seconds))
	}
	tw.Flush()
	if len(r.Warnings) > 0 {
		fmt.Fprintln(out, "\nwarnings:")
		for _, w := range r.Warnings {
			fmt.Fprintln(out, "  -", w)
		}
	}
}
