package behavior

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
)

// Counts estimates pi0(a|s) for discrete states and actions by the
// smoothed frequency of a in s (Lidstone's additive smoothing):
//
//	pihat(a|s) = (n(s,a) + lambda) / (n(s) + lambda K),
//
// with n(s,a) the steps that log action a in state s, n(s) those in s, K
// the number of actions and lambda = Smoothing. A state the fit never saw
// gets the uniform 1/K; no logged action gets probability 0, so every
// ratio pi/pihat stays finite. lambda = 1/2 (the default) is the
// Krichevsky-Trofimov estimator, the posterior mean of pi0(.|s) under the
// Jeffreys prior Dirichlet(1/2, ..., 1/2); lambda = 1 is Laplace's rule.
type Counts struct {
	// Smoothing is lambda, the pseudo-count added to every action of a
	// state (0: DefaultSmoothing).
	Smoothing float64
}

// DefaultSmoothing is Counts' lambda when Smoothing is 0: the
// Krichevsky-Trofimov 1/2.
const DefaultSmoothing = 0.5

// Name returns "counts".
func (Counts) Name() string { return "counts" }

// Fit counts the logged actions of every state.
func (l Counts) Fit(d *dataset.Dataset) (Model, error) {
	lambda := l.Smoothing
	switch {
	case lambda == 0:
		lambda = DefaultSmoothing
	case !(lambda > 0) || math.IsInf(lambda, 1):
		return nil, fmt.Errorf("smoothing %v, want > 0", lambda)
	}
	if !d.Discrete() {
		return nil, fmt.Errorf("counts need discrete states (a state column); fit real states with Logistic")
	}
	if err := checkActions(d); err != nil {
		return nil, err
	}
	// The counts are kept by pair, not in a states x actions table: ids
	// are dense but may be large (a state id of 4,194,303 with an action
	// of 1,000 would ask for 33 GB), while the pairs seen are at most the
	// steps, so the model costs what the log does.
	m := &CountsModel{K: d.NumActions, Lambda: lambda, N: map[Pair]float64{}, NS: map[int32]float64{}}
	for j, s := range d.State {
		m.N[Pair{s, d.Action[j]}]++
		m.NS[s]++
	}
	return m, nil
}

// Pair is a (state, action) pair of ids.
type Pair struct{ S, A int32 }

// CountsModel holds the counts n(s,a) behind Counts' estimate.
type CountsModel struct {
	// K is the number of actions and Lambda the smoothing.
	K      int
	Lambda float64
	// N holds n(s,a) for the pairs of the fitted log, NS n(s) for its
	// states; the others count 0.
	N  map[Pair]float64
	NS map[int32]float64
}

// Prob returns pihat(a|s).
func (m *CountsModel) Prob(s, a int) float64 {
	nsa, ns := m.N[Pair{int32(s), int32(a)}], m.NS[int32(s)]
	return (nsa + m.Lambda) / (ns + m.Lambda*float64(m.K))
}

// LogProbs returns log pihat(a_j|s_j) for every step of d.
func (m *CountsModel) LogProbs(d *dataset.Dataset) ([]float64, error) {
	if !d.Discrete() || d.ActionDim > 0 || d.NumActions > m.K {
		return nil, fmt.Errorf("counts: the log has %d actions (action dimension %d), the model %d discrete ones", d.NumActions, d.ActionDim, m.K)
	}
	out := make([]float64, d.NumSteps())
	for j, s := range d.State {
		out[j] = math.Log(m.Prob(int(s), int(d.Action[j])))
	}
	return out, nil
}
