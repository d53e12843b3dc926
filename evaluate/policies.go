package evaluate

import (
	"io"
	"math"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/policy"
)

// Target is one target policy: a --target-policy (a tabular policy
// read from a file, p) or a policy the log names in its columns
// (target_prob@NAME, ...: d, the log with its target columns), and the
// name it goes by in the output.
type Target struct {
	Name   string           // how the report names it ("" for the log's own unnamed target columns)
	File   string           // the file Policy was read from, for messages and the report
	Policy *policy.Tabular  // a tabular policy (discrete states and actions), or nil
	Data   *dataset.Dataset // the log with this policy's target columns (target_prob@NAME), or nil
}

// PolicyInfo describes one target policy in the JSON report: its file,
// its known value if --reference gave one, and the fields of the data
// summary that depend on the target.
type PolicyInfo struct {
	Name      string   `json:"name"`
	File      string   `json:"file,omitempty"`
	Reference *float64 `json:"reference,omitempty"`
	TargetSummary
}

// TargetSummary are the fields of a log's summary that depend on the
// target policy: the steps whose action it never takes, and the policy
// ratios' support.
type TargetSummary struct {
	ZeroTarget  int      `json:"steps_target_prob_zero"`
	LargeRatio  int      `json:"steps_ratio_over_1e6"`
	MaxLogRatio *float64 `json:"max_log_ratio"`
}

// estimateTargets runs the estimators for every target policy on the same
// logs and merges the reports: one policy (or none, the logs' own target
// columns) gives estimate's usual report; several give every row its
// policy, the per-policy data fields in Policies, and the ranking.
//
// Each policy sees the logs with its own target columns: with several,
// the logged target probability is replaced by the policy file's (the
// logs carry one target's; a single policy file must agree with it, as
// before).
func (c *Evaluator) estimateTargets(d *dataset.Dataset, targets []Target, refs map[string]float64, stderr io.Writer) (*Report, error) {
	c.markov = nil // the log's own test, shared by its target policies
	defer func() { c.markov = nil }()
	if len(targets) <= 1 {
		var t *Target
		if len(targets) == 1 {
			t = &targets[0]
			if t.Data != nil {
				d = t.Data
			}
		}
		rep, err := c.estimate(d, t, stderr)
		if err != nil {
			return nil, err
		}
		nameOnePolicy(rep, t, refs)
		return rep, nil
	}
	if (!d.Discrete() || d.ActionDim > 0) && slices.ContainsFunc(targets, func(t Target) bool { return t.Policy != nil }) {
		return nil, usagef("--target-policy needs discrete states and actions (state,p0,p1,... rows)")
	}
	var reps []*Report
	for i := range targets {
		t := &targets[i]
		c.policyLabel = t.Name
		td := t.Data
		if t.Policy != nil {
			td = withLoggedTarget(d, t.Policy)
		}
		if c.recalibrate != nil {
			var err error
			if td, err = c.recalibrate(td); err != nil {
				return nil, err
			}
		}
		rep, err := c.estimate(td, t, stderr)
		if err != nil {
			return nil, err
		}
		reps = append(reps, rep)
	}
	return mergeReports(targets, reps, refs), nil
}

// nameOnePolicy names the one target policy t (nil: the logs' own) of
// rep, in its rows and in Policies with its reference, if t or a
// reference is given: a run in memory and a stream of shards alike.
func nameOnePolicy(rep *Report, t *Target, refs map[string]float64) {
	if t == nil && len(refs) == 0 {
		return
	}
	info := PolicyInfo{TargetSummary: rep.Data.TargetSummary}
	if t != nil {
		info.Name, info.File = t.Name, t.File
		for i := range rep.Estimates {
			rep.Estimates[i].Policy = t.Name
		}
	}
	if v, ok := refs[info.Name]; ok {
		info.Reference = &v
	}
	rep.Policies = []PolicyInfo{info}
}

// withLoggedTarget returns a shallow copy of d whose logged target
// probabilities, log pi(a_t|s_t), are p's: SetTargetPolicy then fills in
// the rest of p's distribution and checks it. States or actions p does
// not cover keep the logged value, so that SetTargetPolicy names them.
func withLoggedTarget(d *dataset.Dataset, p *policy.Tabular) *dataset.Dataset {
	out := *d
	out.LogTarget = slices.Clone(d.LogTarget)
	nS, nA := p.NumStates(), p.NumActions()
	for j := range out.LogTarget {
		if s, a := int(d.State[j]), int(d.Action[j]); s >= 0 && s < nS && a >= 0 && a < nA {
			out.LogTarget[j] = math.Log(p.Prob(s, a))
		}
	}
	return &out
}

// mergeReports merges the reports of several target policies on one log
// (reps[i] of targets[i]) into one: the rows of every policy in turn,
// each with its policy; the data summary of the log, whose target fields
// are the largest over the policies (each policy's own are in Policies);
// the warnings, each prefixed with its policy unless every policy gave
// it; and the ranking.
func mergeReports(targets []Target, reps []*Report, refs map[string]float64) *Report {
	out := &Report{Data: reps[0].Data, Bootstrap: reps[0].Bootstrap, Warnings: []string{}}
	count := map[string]int{}
	for _, r := range reps {
		for _, w := range uniq(r.Warnings) {
			count[w]++
		}
	}
	var shared []string
	for i, r := range reps {
		t := targets[i]
		info := PolicyInfo{Name: t.Name, File: t.File, TargetSummary: r.Data.TargetSummary}
		if v, ok := refs[t.Name]; ok {
			info.Reference = &v
		}
		out.Policies = append(out.Policies, info)
		d := &out.Data
		d.ZeroTarget, d.LargeRatio = max(d.ZeroTarget, r.Data.ZeroTarget), max(d.LargeRatio, r.Data.LargeRatio)
		if m := r.Data.MaxLogRatio; m != nil && (d.MaxLogRatio == nil || *m > *d.MaxLogRatio) {
			d.MaxLogRatio = m
		}
		for _, row := range r.Estimates {
			row.Policy = t.Name
			out.Estimates = append(out.Estimates, row)
		}
		for _, w := range r.Warnings {
			switch {
			case count[w] < len(reps):
				out.Warnings = append(out.Warnings, t.Name+": "+w)
			case !slices.Contains(shared, w):
				shared = append(shared, w)
			}
		}
	}
	out.Warnings = append(shared, out.Warnings...)
	out.Ranking = newRanking(out)
	return out
}

// uniq returns the distinct strings of s, in order.
func uniq(s []string) []string {
	var out []string
	for _, x := range s {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
