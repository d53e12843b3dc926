package cli

import (
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/policy"
)

// targetPolicy is one target policy: a --target-policy (a tabular policy
// read from a file, p) or a policy the log names in its columns
// (target_prob@NAME, ...: d, the log with its target columns), and the
// name it goes by in the output.
type targetPolicy struct {
	name, file string
	p          *policy.Tabular
	d          *dataset.Dataset
}

// policyInfo describes one target policy in the JSON report: its file,
// its known value if --reference gave one, and the fields of the data
// summary that depend on the target.
type policyInfo struct {
	Name      string   `json:"name"`
	File      string   `json:"file,omitempty"`
	Reference *float64 `json:"reference,omitempty"`
	targetSummary
}

// targetSummary are the fields of a log's summary that depend on the
// target policy: the steps whose action it never takes, and the policy
// ratios' support.
type targetSummary struct {
	ZeroTarget  int      `json:"steps_target_prob_zero"`
	LargeRatio  int      `json:"steps_ratio_over_1e6"`
	MaxLogRatio *float64 `json:"max_log_ratio"`
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
func (c *estimateCmd) targets(named []*dataset.Dataset, read bool) ([]targetPolicy, map[string]float64, error) {
	var out []targetPolicy
	for _, d := range named {
		if d.Policy != "" {
			out = append(out, targetPolicy{name: d.Policy, d: d})
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
		if slices.ContainsFunc(out, func(t targetPolicy) bool { return t.name == name }) {
			return nil, nil, usagef("--target-policy: two policies named %q (the log's columns name its policies' too): name them with NAME=FILE", name)
		}
		p, err := readPolicyFile(file)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, targetPolicy{name: name, file: file, p: p})
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
				name = out[0].name
			}
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, usagef("--reference %q: %q is not a finite number", arg, val)
		}
		if ok && read && !slices.ContainsFunc(out, func(t targetPolicy) bool { return t.name == name }) {
			var names []string
			for _, t := range out {
				names = append(names, t.name)
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

// estimateTargets runs the estimators for every target policy on the same
// logs and merges the reports: one policy (or none, the logs' own target
// columns) gives estimate's usual report; several give every row its
// policy, the per-policy data fields in Policies, and the ranking.
//
// Each policy sees the logs with its own target columns: with several,
// the logged target probability is replaced by the policy file's (the
// logs carry one target's; a single policy file must agree with it, as
// before).
func (c *estimateCmd) estimateTargets(d *dataset.Dataset, targets []targetPolicy, refs map[string]float64, stderr io.Writer) (*estimateReport, error) {
	if len(targets) <= 1 {
		var t *targetPolicy
		if len(targets) == 1 {
			t = &targets[0]
			if t.d != nil {
				d = t.d
			}
		}
		rep, err := c.estimate(d, t, stderr)
		if err != nil {
			return nil, err
		}
		nameOnePolicy(rep, t, refs)
		return rep, nil
	}
	if (!d.Discrete() || d.ActionDim > 0) && slices.ContainsFunc(targets, func(t targetPolicy) bool { return t.p != nil }) {
		return nil, usagef("--target-policy needs discrete states and actions (state,p0,p1,... rows)")
	}
	var reps []*estimateReport
	for i := range targets {
		t := &targets[i]
		c.policyLabel = t.name
		td := t.d
		if t.p != nil {
			td = withLoggedTarget(d, t.p)
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
func nameOnePolicy(rep *estimateReport, t *targetPolicy, refs map[string]float64) {
	if t == nil && len(refs) == 0 {
		return
	}
	info := policyInfo{targetSummary: rep.Data.targetSummary}
	if t != nil {
		info.Name, info.File = t.name, t.file
		for i := range rep.Estimates {
			rep.Estimates[i].Policy = t.name
		}
	}
	if v, ok := refs[info.Name]; ok {
		info.Reference = &v
	}
	rep.Policies = []policyInfo{info}
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
func mergeReports(targets []targetPolicy, reps []*estimateReport, refs map[string]float64) *estimateReport {
	out := &estimateReport{Data: reps[0].Data, Bootstrap: reps[0].Bootstrap, Warnings: []string{}}
	count := map[string]int{}
	for _, r := range reps {
		for _, w := range uniq(r.Warnings) {
			count[w]++
		}
	}
	var shared []string
	for i, r := range reps {
		t := targets[i]
		info := policyInfo{Name: t.name, File: t.file, targetSummary: r.Data.targetSummary}
		if v, ok := refs[t.name]; ok {
			info.Reference = &v
		}
		out.Policies = append(out.Policies, info)
		d := &out.Data
		d.ZeroTarget, d.LargeRatio = max(d.ZeroTarget, r.Data.ZeroTarget), max(d.LargeRatio, r.Data.LargeRatio)
		if m := r.Data.MaxLogRatio; m != nil && (d.MaxLogRatio == nil || *m > *d.MaxLogRatio) {
			d.MaxLogRatio = m
		}
		for _, row := range r.Estimates {
			row.Policy = t.name
			out.Estimates = append(out.Estimates, row)
		}
		for _, w := range r.Warnings {
			switch {
			case count[w] < len(reps):
				out.Warnings = append(out.Warnings, t.name+": "+w)
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
