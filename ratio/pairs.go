package ratio

import (
	"errors"
	"fmt"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/kernelloss"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/value"
)

// PairLearner fits a state-action ratio
//
//	w(s, a) = d_pi(s, a) / d_D(s, a)
//
// between the target's state-action visitation d_pi (normalised
// discounted for gamma < 1, stationary for gamma = 1) and the distribution
// d_D of the logged transitions (s, a), every transition weighing the
// same whatever its time step. Such a ratio needs the target's whole
// action distribution at the next and start states (target) but no
// behavior probabilities: an estimator weights step j by w(s_j, a_j)
// alone,
//
//	R = E_D[w r] = (1/n) sum_j w(s_j, a_j) r_j   (or its self-normalised form),
//
// the sum over the n logged transitions. MWL and DualDICE are pair
// learners.
type PairLearner interface {
	// Name is the learner's name, which is also its estimator's.
	Name() string
	// FitPairs learns w from the logged transitions of d with discount
	// gamma in (0, 1] and the target's action distribution: target.Policy
	// for discrete states, else the logs' target_prob_k columns.
	FitPairs(d *dataset.Dataset, gamma float64, target value.Target) (PairModel, error)
}

// PairModel is a learned state-action ratio. Its StepRatios are
// w(s_j, a_j) (not w(s_j): an estimator multiplies them by nothing), 0
// for a step whose pair the model knows nothing about.
type PairModel interface {
	Model
	// MeanRatio returns E_D[w], the mean of w over the transitions the model
	// was fitted on: 1 where the fit imposes it (gamma = 1) or where the
	// flow it solves conserves mass.
	MeanRatio() float64
}

var (
	_ PairLearner = MWL{}
	_ PairLearner = DualDICE{}
	_ PairModel   = (*PairTabularModel)(nil)
	_ PairModel   = (*PairKernelModel)(nil)
	_ Warner      = (*PairKernelModel)(nil)
)

// PairTabularModel is a state-action ratio of discrete states and
// actions, learned on the pooled classes of kernelloss.Chain.
type PairTabularModel struct {
	// W[s*NumActions + a] is w(s, a) for every logged pair, 0 for the
	// others.
	W          []float64
	NumActions int

	// Pairs is the number of logged pairs, Transitions the number of
	// transitions.
	Pairs, Transitions int

	// MeanW is E_D[w] and Value E_D[w r], the unnormalised estimate.
	MeanW, Value float64

	// Loss is the squared flow residual at the solution (0 up to
	// rounding for the exact solve), Iterations the solver's steps and
	// Residual its final relative residual.
	Loss       float64
	Iterations int
	Residual   float64

	// Restarted counts the states of closed classes other than the
	// principal one (gamma = 1), which restart from the logged-state
	// distribution (see kernelloss.Chain).
	Restarted int

	// Lambda is DualDICE's absolute ridge (0 for the exact solve).
	Lambda float64
}

// MeanRatio returns E_D[w].
func (m *PairTabularModel) MeanRatio() float64 { return m.MeanW }

// Ratio returns w(s, a), 0 outside the model.
func (m *PairTabularModel) Ratio(s, a int) float64 {
	i := s*m.NumActions + a
	if s < 0 || a < 0 || a >= m.NumActions || i >= len(m.W) {
		return 0
	}
	return m.W[i]
}

// StepRatios returns w(s_j, a_j) for every step j of d.
func (m *PairTabularModel) StepRatios(d *dataset.Dataset) ([]float64, error) {
	if !d.Discrete() || d.ActionDim != 0 {
		return nil, errors.New("ratio: a tabular state-action ratio needs discrete states and actions")
	}
	w := make([]float64, d.NumSteps())
	for j := range w {
		w[j] = m.Ratio(int(d.State[j]), int(d.Action[j]))
	}
	return w, nil
}

// pairTarget returns the tabular target of discrete logs: target.Policy,
// or the table of the logs' target_prob_k columns.
func pairTarget(d *dataset.Dataset, t value.Target) (policy.Discrete, error) {
	switch {
	case t.Policy != nil:
		return t.Policy, nil
	case t.Continuous != nil:
		return nil, errors.New("the state-action learners need discrete actions")
	}
	return value.TableFromData(d)
}

// fitPairTabular aggregates d and solves its tabular problem
// (solvePairTabular).
func fitPairTabular(name string, d *dataset.Dataset, gamma float64, target value.Target, ridge float64) (*PairTabularModel, error) {
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("ratio: %s: discount %v outside (0, 1]", name, gamma)
	}
	pi, err := pairTarget(d, target)
	if err != nil {
		return nil, fmt.Errorf("ratio: %s: %w", name, err)
	}
	pp, err := kernelloss.FromData(d, pi)
	if err != nil {
		return nil, fmt.Errorf("ratio: %s: %w", name, err)
	}
	return solvePairTabular(name, pp, gamma, ridge)
}

// FitCounts learns the tabular w from the problem of a log's sufficient
// statistics (kernelloss.FromCounts, as package ope's streaming sums build
// it): FitPairs's tabular fit without the data.
func (l MWL) FitCounts(pp *kernelloss.Pairs, gamma float64) (*PairTabularModel, error) {
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("ratio: mwl: discount %v outside (0, 1]", gamma)
	}
	return solvePairTabular("mwl", pp, gamma, 0)
}

// FitCounts learns the tabular w from the problem of a log's sufficient
// statistics (kernelloss.FromCounts, as package ope's streaming sums build
// it): FitPairs's tabular fit without the data.
func (l DualDICE) FitCounts(pp *kernelloss.Pairs, gamma float64) (*PairTabularModel, error) {
	if l.Ridge < 0 {
		return nil, fmt.Errorf("ratio: dualdice: ridge %v, want >= 0", l.Ridge)
	}
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("ratio: dualdice: discount %v outside (0, 1]", gamma)
	}
	return solvePairTabular("dualdice", pp, gamma, l.Ridge)
}

// solvePairTabular builds the pooled chain of pp and solves for the flow,
// exactly (ridge 0) or with DualDICE's ridge.
func solvePairTabular(name string, pp *kernelloss.Pairs, gamma, ridge float64) (*PairTabularModel, error) {
	ch, err := pp.Chain(gamma)
	if err != nil {
		return nil, fmt.Errorf("ratio: %s: %w", name, err)
	}
	var f *kernelloss.Flow
	if ridge > 0 {
		f, err = ch.RidgeFlow(ridge, 0, 0)
	} else {
		f, err = ch.Flow()
	}
	if err != nil {
		return nil, fmt.Errorf("ratio: %s: %w", name, err)
	}
	return newPairTabularModel(pp, ch, f), nil
}

// newPairTabularModel is the model of a solved flow.
func newPairTabularModel(pp *kernelloss.Pairs, ch *kernelloss.Chain, f *kernelloss.Flow) *PairTabularModel {
	m := &PairTabularModel{W: make([]float64, pp.NumStates*pp.NumActions), NumActions: pp.NumActions,
		Pairs: len(pp.State), Transitions: pp.Transitions, Loss: f.Loss, Iterations: f.Iterations,
		Residual: f.Residual, Restarted: ch.Restarted, Lambda: f.Lambda}
	for p, u := range f.U {
		m.W[int(pp.State[p])*pp.NumActions+int(pp.Action[p])] = u / pp.Weight[p]
		m.MeanW += u
		m.Value += u * pp.Reward[p]
	}
	return m
}

// SolvePairs returns the state-action ratio of the population of a
// tabular world m: d_D(s, a) = dD[s*NumActions + a] (rescaled to sum to
// 1; the pairs with dD > 0 are the logged ones), m's outcomes, rewards
// and initial distribution, and the target pi. With every pair the target
// visits in the support of dD it is d_pi(s, a) / d_D(s, a) exactly, the
// common limit of MWL and DualDICE on ever larger logs drawn from dD.
func SolvePairs(m mdp.Finite, dD []float64, pi policy.Discrete, gamma float64) (*PairTabularModel, error) {
	pp, err := kernelloss.FromModel(m, dD, pi)
	if err != nil {
		return nil, fmt.Errorf("ratio: %w", err)
	}
	ch, err := pp.Chain(gamma)
	if err != nil {
		return nil, fmt.Errorf("ratio: %w", err)
	}
	f, err := ch.Flow()
	if err != nil {
		return nil, fmt.Errorf("ratio: %w", err)
	}
	return newPairTabularModel(pp, ch, f), nil
}
