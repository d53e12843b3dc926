package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/words"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim/rollout"
)

type demoCmd struct {
	worldFlags `embed:""`
	N          int     `short:"n" default:"200" help:"Number of logged episodes."`
	T          int     `short:"T" default:"400" help:"Steps per episode (the truncation length)."`
	Gamma      float64 `default:"1" help:"Discount: 1 for the average reward per step, below 1 for the normalised discounted reward."`
	Seed       uint64  `default:"1" help:"Seed of the logged data (the on-policy oracle uses seed+1)."`
	Estimand   string  `enum:"horizon,long-run" default:"horizon" help:"The truth to compare with: horizon (the T-step value from reset, what the paper's figures measure) or long-run (the long-run average reward, or (1-gamma) E[V(s0)])."`
	JSON       bool    `name:"json" help:"Print one JSON object instead of a table."`
}

// demoRow is one estimator's line of the demo.
type demoRow struct {
	Estimator string   `json:"estimator"`
	Estimate  *float64 `json:"estimate"`
	Estimand  string   `json:"estimand,omitempty"`
	Model     string   `json:"model,omitempty"`
	Error     string   `json:"failure,omitempty"`
	// SignedError is the estimate minus the truth (null when the
	// estimator failed). Diff is the same number under its old name,
	// "error" (0 when the estimator failed), kept for one release:
	// estimate --json's "error" is a message.
	SignedError *float64 `json:"signed_error"`
	Diff        float64  `json:"error"`
	ESS         float64  `json:"ess,omitempty"`
	Seconds     float64  `json:"seconds"`
}

type demoReport struct {
	World    string    `json:"world"`
	Episodes int       `json:"episodes"`
	Steps    int       `json:"steps_per_episode"`
	Gamma    float64   `json:"gamma"`
	Seed     uint64    `json:"seed"`
	Estimand string    `json:"estimand"`
	Truth    float64   `json:"truth"`
	Rows     []demoRow `json:"estimates"`
	Seconds  float64   `json:"seconds"`
}

func (c *demoCmd) Run(e *runEnv) error {
	if c.N <= 0 || c.T <= 0 {
		return usagef("-n and -T must be positive")
	}
	if !(c.Gamma > 0 && c.Gamma <= 1) {
		return usagef("--gamma %v is outside (0, 1]", c.Gamma)
	}
	start := time.Now()
	w, err := c.build(e.stderr)
	if err != nil {
		return err
	}
	rep, err := runDemo(w, c.N, c.T, c.Gamma, c.Seed, ope.Estimand(c.Estimand))
	if err != nil {
		return err
	}
	rep.Seconds = time.Since(start).Seconds()
	if c.JSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printDemo(e.stdout, rep)
	return nil
}

// demoEstimators returns every registered estimator that applies to a
// tabular world whose target policy and simulator are known, in registry
// order (the order of the table). The oracle's rollouts use oracleSeed.
func demoEstimators(w *world, d *dataset.Dataset, oracleSeed uint64, est ope.Estimand) []ope.Estimator {
	opts := ope.Options{Target: w.target, Sim: rollout.Simulator{Env: w.sim, Target: w.target}, OracleSeed: oracleSeed, Estimand: est}
	ests, _ := ope.New(ope.Applicable(d, opts), opts) // names from the registry
	return ests
}

func runDemo(w *world, n, T int, gamma float64, seed uint64, estimand ope.Estimand) (*demoReport, error) {
	d, err := sampleWorld(w, n, T, seed)
	if err != nil {
		return nil, err
	}
	rep := &demoReport{World: w.desc, Episodes: n, Steps: T, Gamma: gamma, Seed: seed, Estimand: string(estimand)}
	if estimand == ope.LongRun {
		if rep.Truth, err = mdp.LongRun(w.table, w.target, gamma); err != nil {
			return nil, err
		}
	} else {
		rep.Truth = mdp.Value(w.table, w.target, nil, T, gamma)
	}
	for _, est := range demoEstimators(w, d, seed+1, estimand) {
		t0 := time.Now()
		res, err := est.Estimate(d, gamma)
		if err != nil {
			// Show the failure in its row; the other estimators still run.
			rep.Rows = append(rep.Rows, demoRow{Estimator: est.Name(), Error: err.Error(), Seconds: time.Since(t0).Seconds()})
			continue
		}
		diff := res.Value - rep.Truth
		rep.Rows = append(rep.Rows, demoRow{
			Estimator:   est.Name(),
			Estimate:    &res.Value,
			Estimand:    string(res.Estimand),
			Model:       res.Learner,
			SignedError: &diff,
			Diff:        diff,
			ESS:         ope.KishESS(res.Weights),
			Seconds:     time.Since(t0).Seconds(),
		})
	}
	return rep, nil
}

func printDemo(out io.Writer, r *demoReport) {
	quantity := "average reward per step"
	if r.Gamma < 1 {
		quantity = fmt.Sprintf("normalised discounted reward, gamma = %g", r.Gamma)
	}
	fmt.Fprintf(out, "%s\n%s x %s logged (seed %d); quantity: %s; estimand: %s\n\n", r.World, words.Plural(r.Episodes, "episode"), words.Plural(r.Steps, "step"), r.Seed, quantity, r.Estimand)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "estimator\testimate\terror\t|error|/truth\tESS\ttargets\ttime\t")
	fmt.Fprintf(tw, "truth (exact)\t%s\t\t\t\t%s\t\t\n", words.Num("%.6f", r.Truth), r.Estimand)
	for _, row := range r.Rows {
		if row.Error != "" {
			fmt.Fprintf(tw, "%s\tfailed\t\t\t\t\t%s\t\n", row.Estimator, words.Duration(row.Seconds))
			continue
		}
		ess := ""
		if row.ESS > 0 {
			ess = fmt.Sprintf("%.1f", row.ESS)
		}
		targets := row.Estimand
		if targets != r.Estimand {
			targets += " *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f%%\t%s\t%s\t%s\t\n", row.Estimator, words.Num("%.6f", *row.Estimate), words.Num("%+.6f", *row.SignedError),
			100*math.Abs(*row.SignedError/r.Truth), ess, targets, words.Duration(row.Seconds))
	}
	tw.Flush()
	for _, row := range r.Rows {
		if row.Estimand != "" && row.Estimand != r.Estimand {
			note := ""
			if r.Estimand == string(ope.Horizon) {
				note = " (the paper evaluates its density ratio this way)"
			}
			fmt.Fprintf(out, "\n* targets the %s value, not the %s truth it is compared with%s\n", row.Estimand, r.Estimand, note)
			break
		}
	}
	fmt.Fprintf(out, "\ntotal time %s\n", words.Duration(r.Seconds))
}
