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
	K := d.NumActions
	m := &CountsModel{K: K, Lambda: lambda, N: make([]float64, d.NumStates*K)}
	for j, s := range d.State {
		m.N[int(s)*K+int(d.Action[j])]++
	}
	return m, nil
}

// CountsModel holds the counts n(s,a) behind Counts' estimate.
type CountsModel struct {
	// K is the number of actions and Lambda the smoothing.
	K      int
	Lambda float64
	// N holds n(s,a) at N[s*K+a] for the states of the fitted log.
	N []float64
}

// Prob returns pihat(a|s).
func (m *CountsModel) Prob(s, a int) float64 {
	var nsa, ns float64
	if (s+1)*m.K <= len(m.N) {
		row := m.N[s*m.K : (s+1)*m.K]
		nsa = row[a]
		for _, c := range row {
			ns += c
		}
	}
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
