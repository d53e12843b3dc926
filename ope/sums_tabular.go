package ope

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/value"
)

var (
	_ CountSums = (*ModelBasedSums)(nil)
	_ CountSums = (*FQESums)(nil)
	_ CountSums = (*PairRatioSums)(nil)
	_ CountSums = (*MQLSums)(nil)
	_ Summer    = FQE{}
	_ Summer    = PairRatio{}
	_ Summer    = MinimaxQ{}
)

// givenTable returns the rows of a given discrete target as a
// *policy.Tabular (nil: none given, the logs' target_prob_k columns
// apply), or an error if the target cannot be tabulated.
func givenTable(name string, t value.Target) (*policy.Tabular, error) {
	switch p := t.Policy.(type) {
	case nil:
		if t.Continuous != nil {
			return nil, fmt.Errorf("%s cannot stream with a target over real actions", name)
		}
		return nil, nil
	case *policy.Tabular:
		return p, nil
	case interface{ NumStates() int }:
		rows := make([][]float64, p.NumStates())
		for s := range rows {
			rows[s] = make([]float64, t.Policy.NumActions())
			for a := range rows[s] {
				rows[s][a] = t.Policy.Prob(s, a)
			}
		}
		return policy.NewTabular(rows)
	}
	return nil, fmt.Errorf("%s cannot stream with a target policy that does not say its number of states", name)
}

// FQESums are tabular fqe's statistics: the count model's
// (TabularCounts). Finish solves the target's value in the count model
// with value.Tabular.FitCounts, the in-memory learner's own solve, and
// reads it at the logged starts as FQE.Estimate does: the mean of
// g0(T_i) v^(T_i)(s_0) over the (first state, length) pairs (horizon),
// of (1 - gamma) v(s_0) (long run, gamma < 1), or rho (gamma = 1).
//
// The bound FQE.Estimate checks the values against (checkBounded) holds
// by construction here: the count model is an MDP whose rewards are
// means of logged rewards, so its values never exceed what the rewards
// allow.
type FQESums struct {
	*TabularCounts
	Estimand Estimand
	Finite   bool
}

// NewSums implements Summer for the tabular learner (Value nil on
// discrete data, or value.Tabular), the linear one (value.Linear, in
// two passes: LinearFQESums) and the neural one (value.Neural, in two
// passes: SampleSums, trained on a sample of episodes drawn in the
// first); the others refuse.
func (e FQE) NewSums(gamma float64, copies int) (Sums, error) {
	const name = "fqe"
	if err := checkSumsArgs(name, gamma, copies); err != nil {
		return nil, err
	}
	est := e.Estimand.OrDefault()
	finite := est == Horizon
	if e.Value != nil {
		if err := checkValueEstimand(name, e.Value, est); err != nil {
			return nil, err
		}
	}
	switch l := e.Value.(type) {
	case nil:
	case value.Tabular: // its Finite is the estimand's (checkValueEstimand)
	case value.Linear:
		return newLinearFQESums(l, est, gamma, copies)
	case value.Neural:
		return newSampleValueSums(name, l, e.Target, est, gamma, copies, e.Reservoir, e.SampleSeed), nil
	default:
		return nil, fmt.Errorf("%s cannot stream with the %s value learner (its fit needs every step at once); the tabular learner streams", name, e.Value.Name())
	}
	target, err := givenTable(name, e.Target)
	if err != nil {
		return nil, err
	}
	return &FQESums{TabularCounts: newTabularCounts(gamma, copies, target), Estimand: est, Finite: finite}, nil
}

// Add implements Sums.
func (s *FQESums) Add(d *dataset.Dataset, e int, mult []int) error {
	return s.add("fqe", d, e, mult)
}

// SetCounts implements CountSums.
func (s *FQESums) SetCounts(c *TabularCounts) { s.TabularCounts = c }

// Merge implements Sums.
func (s *FQESums) Merge(o Sums) error {
	t, ok := o.(*FQESums)
	if !ok {
		return fmt.Errorf("fqe: cannot merge sums of type %T", o)
	}
	if t.Estimand != s.Estimand || t.Finite != s.Finite {
		return fmt.Errorf("fqe: cannot merge sums of other settings")
	}
	return s.merge("fqe", t.TabularCounts)
}

// Finish implements Sums.
func (s *FQESums) Finish(c int) (Result, WeightSummary, error) {
	const name = "fqe"
	fail := func(err error) (Result, WeightSummary, error) {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: value: tabular: %w", name, err)
	}
	if s.Episodes[c] == 0 {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: no episodes", name)
	}
	target, err := s.target()
	if err != nil {
		return fail(err)
	}
	if err := s.checkTarget(target); err != nil {
		return fail(err)
	}
	m, err := s.countModel(c)
	if err != nil {
		return fail(err)
	}
	tm, err := value.Tabular{Finite: s.Finite}.FitCounts(m, target, s.Gamma, s.stateSteps(c), s.MaxLen[c])
	if err != nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
	}
	var v float64
	if s.Estimand == LongRun {
		v, err = s.longRunValue(c, tm.Rho(), func(st int) float64 { return tm.V(0, st) })
		if err != nil {
			return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
		}
	} else {
		v = s.horizonValue(c, tm.V)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Result{}, WeightSummary{}, fmt.Errorf("%s: the value model gives %v", name, v)
		}
	}
	return Result{Value: v, Estimand: s.Estimand, Model: tm, Learner: "tabular"}, WeightSummary{}, nil
}

// PairRatioSums are the statistics of mwl and dualdice in their tabular
// form (TabularCounts). Finish builds the state-action problem with
// kernelloss.FromCounts, solves for w with the learner's own tabular solve
// (ratio.MWL.FitCounts, ratio.DualDICE.FitCounts) and weighs the
// transitions' reward sums by it, pair by pair.
type PairRatioSums struct {
	*TabularCounts
	// Learner is "mwl" or "dualdice", Ridge DualDICE's.
	Learner   string
	Ridge     float64
	Normalise bool
}

// NewSums implements Summer for the tabular forms of mwl and dualdice
// (discrete states), with RealStates their kernel forms (real states,
// two passes: PairKernelSums), and their neural forms (SampleSums:
// trained on a sample of episodes drawn in a first pass, evaluated on
// every step in the second).
func (e PairRatio) NewSums(gamma float64, copies int) (Sums, error) {
	name := e.Name()
	if err := checkSumsArgs(name, gamma, copies); err != nil {
		return nil, err
	}
	s := &PairRatioSums{Learner: name, Normalise: e.Normalise}
	var kernel ratio.PairKernel
	switch l := e.Learner.(type) {
	case ratio.MWL:
		if l.Neural {
			return newSamplePairSums(e, gamma, copies), nil
		}
		kernel = l.Kernel
	case ratio.DualDICE:
		if l.Neural {
			return newSamplePairSums(e, gamma, copies), nil
		}
		s.Ridge, kernel = l.Ridge, l.Kernel
	default:
		return nil, fmt.Errorf("%s cannot stream: its fit needs every step at once", name)
	}
	if e.RealStates {
		if e.Target.Policy != nil || e.Target.Continuous != nil {
			return nil, fmt.Errorf("%s streams on real states with the target's distribution in the target_prob_k columns only", name)
		}
		return newPairKernelSums(name, kernel, s.Ridge, e.Normalise, gamma, copies)
	}
	target, err := givenTable(name, e.Target)
	if err != nil {
		return nil, err
	}
	s.TabularCounts = newTabularCounts(gamma, copies, target)
	return s, nil
}

// Add implements Sums.
func (s *PairRatioSums) Add(d *dataset.Dataset, e int, mult []int) error {
	return s.add(s.Learner, d, e, mult)
}

// SetCounts implements CountSums.
func (s *PairRatioSums) SetCounts(c *TabularCounts) { s.TabularCounts = c }

// Merge implements Sums.
func (s *PairRatioSums) Merge(o Sums) error {
	t, ok := o.(*PairRatioSums)
	if !ok {
		return fmt.Errorf("%s: cannot merge sums of type %T", s.Learner, o)
	}
	if t.Learner != s.Learner || t.Ridge != s.Ridge || t.Normalise != s.Normalise {
		return fmt.Errorf("%s: cannot merge sums of other settings", s.Learner)
	}
	return s.merge(s.Learner, t.TabularCounts)
}

// Finish implements Sums.
func (s *PairRatioSums) Finish(c int) (Result, WeightSummary, error) {
	name := s.Learner
	fail := func(err error) (Result, WeightSummary, error) {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: ratio: %s: %w", name, name, err)
	}
	target, err := s.target()
	if err != nil {
		return fail(err)
	}
	if err := s.checkTarget(target); err != nil {
		return fail(err)
	}
	pp, err := s.pairProblem(c, target)
	if err != nil {
		return fail(err)
	}
	var m *ratio.PairTabularModel
	switch name {
	case "mwl":
		m, err = ratio.MWL{}.FitCounts(pp, s.Gamma)
	case "dualdice":
		m, err = ratio.DualDICE{Ridge: s.Ridge}.FitCounts(pp, s.Gamma)
	default:
		err = fmt.Errorf("unknown learner %q", name)
	}
	if err != nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
	}
	ps := s.pairWeights(c, m.Ratio)
	if ps.N == 0 || !(ps.Den > 0) {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: the learned weights sum to %v over %d transitions", name, ps.Den, ps.N)
	}
	val := ps.Num / float64(ps.N)
	if s.Normalise {
		val = ps.Num / ps.Den
	}
	if math.IsNaN(val) || math.IsInf(val, 0) {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: the estimate is %v", name, val)
	}
	var ws WeightSummary
	if c == 0 {
		for k := range s.Pairs {
			ws.Units += int(s.RewardCount[0][k])
		}
		if ps.Sq > 0 {
			ws.ESS, ws.MaxShare = ps.Abs*ps.Abs/ps.Sq, ps.Top/ps.Abs
		}
	}
	res := Result{Value: val, Estimand: LongRun, Model: m, Learner: "tabular"}
	if c == 0 {
		res.Warnings = s.imputed(name, target)
	}
	return res, ws, nil
}

// imputed is ImputedWarning for mwl, dualdice and mql on discrete
// states, whose exact minimax solves impute the never-logged pairs as the
// count model does (the same bias on sparse logs) without holding one:
// from the counts (copy 0), the share of the target's long-run steps that
// the count model of the log sends to pairs it never shows.
func (s *TabularCounts) imputed(name string, target *policy.Tabular) []string {
	m, err := s.countModel(0)
	if err != nil {
		return nil
	}
	if w := imputedWarning(name, m, target, s.MaxLen[0], s.Gamma, LongRun); w != "" {
		return []string{w}
	}
	return nil
}

// MQLSums are mql's statistics in its tabular form (TabularCounts).
// Finish builds the state-action problem with kernelloss.FromCounts, solves
// for q with value.MQL.FitCounts, the in-memory solve, and reads it at
// the logged starts: (1 - gamma) times the mean of v(s_0), or rho
// (gamma = 1).
type MQLSums struct {
	*TabularCounts
}

// NewSums implements Summer for mql's tabular form (discrete states),
// with RealStates its kernel form (real states, two passes:
// MQLKernelSums), and its neural form (SampleSums: trained on a sample
// of episodes drawn in the first pass, evaluated on every step in the
// second).
func (e MinimaxQ) NewSums(gamma float64, copies int) (Sums, error) {
	const name = "mql"
	if err := checkSumsArgs(name, gamma, copies); err != nil {
		return nil, err
	}
	if e.Value.Neural {
		return newSampleValueSums(name, e.Value, e.Target, LongRun, gamma, copies, e.Reservoir, e.SampleSeed), nil
	}
	if e.RealStates {
		if e.Target.Policy != nil || e.Target.Continuous != nil {
			return nil, fmt.Errorf("%s streams on real states with the target's distribution in the target_prob_k columns only", name)
		}
		return newMQLKernelSums(e.Value, gamma, copies)
	}
	target, err := givenTable(name, e.Target)
	if err != nil {
		return nil, err
	}
	return &MQLSums{TabularCounts: newTabularCounts(gamma, copies, target)}, nil
}

// Add implements Sums.
func (s *MQLSums) Add(d *dataset.Dataset, e int, mult []int) error {
	return s.add("mql", d, e, mult)
}

// SetCounts implements CountSums.
func (s *MQLSums) SetCounts(c *TabularCounts) { s.TabularCounts = c }

// Merge implements Sums.
func (s *MQLSums) Merge(o Sums) error {
	t, ok := o.(*MQLSums)
	if !ok {
		return fmt.Errorf("mql: cannot merge sums of type %T", o)
	}
	return s.merge("mql", t.TabularCounts)
}

// Finish implements Sums.
func (s *MQLSums) Finish(c int) (Result, WeightSummary, error) {
	const name = "mql"
	fail := func(err error) (Result, WeightSummary, error) {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: value: mql: %w", name, err)
	}
	target, err := s.target()
	if err != nil {
		return fail(err)
	}
	if err := s.checkTarget(target); err != nil {
		return fail(err)
	}
	pp, err := s.pairProblem(c, target)
	if err != nil {
		return fail(err)
	}
	m, err := value.MQL{}.FitCounts(pp, s.Gamma)
	if err != nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
	}
	v, err := s.longRunValue(c, m.Rho(), m.V)
	if err != nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
	}
	res := Result{Value: v, Estimand: LongRun, Model: m, Learner: "tabular"}
	if c == 0 {
		res.Warnings = s.imputed(name, target)
	}
	return res, WeightSummary{}, nil
}

// unitWeights implements unitWeigher: the per-step weights w(s_j, a_j) /
// sum_k w(s_k, a_k) over the steps with a known next state (0 at the
// others), w the ratio res.Model copy 0 solved for.
func (s *PairRatioSums) unitWeights(d *dataset.Dataset, res Result) ([]float64, Unit, error) {
	m, ok := res.Model.(*ratio.PairTabularModel)
	if !ok {
		return nil, UnitStep, fmt.Errorf("%s: finished with a model of type %T", s.Learner, res.Model)
	}
	w := make([]float64, d.NumSteps())
	den := 0.0
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			if hasNext(d, e, j) {
				w[j] = m.Ratio(int(d.State[j]), int(d.Action[j]))
				den += w[j]
			}
		}
	}
	for j := range w {
		w[j] /= den
	}
	return w, UnitStep, nil
}
