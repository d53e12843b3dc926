package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Discrete is a stochastic policy over actions 0..NumActions()-1.
type Discrete interface {
	NumActions() int
	// Prob returns pi(a|s).
	Prob(s, a int) float64
	// Sample draws an action in state s.
	Sample(rng *rand.Rand, s int) int
}

// Tabular is a policy given by a table of action probabilities, one row
// per state.
type Tabular struct {
	nS, nA int
	p      []float64 // row-major, nS x nA
}

var _ Discrete = (*Tabular)(nil)

// NewTabular returns the policy whose row s is probs[s]. Every row must
// have the same length, non-negative entries and sum to 1 within 1e-6
// (the authors' CSV files carry about 17 digits). Rows are stored as given,
// not renormalised, so a policy read from a file and written back is
// bit-for-bit the same.
func NewTabular(probs [][]float64) (*Tabular, error) {
	if len(probs) == 0 || len(probs[0]) == 0 {
		return nil, fmt.Errorf("policy: empty table")
	}
	nS, nA := len(probs), len(probs[0])
	t := &Tabular{nS: nS, nA: nA, p: make([]float64, nS*nA)}
	for s, row := range probs {
		if len(row) != nA {
			return nil, fmt.Errorf("policy: state %d has %d actions, want %d", s, len(row), nA)
		}
		if err := CheckRow(row); err != nil {
			return nil, fmt.Errorf("policy: %s", err.(*RowError).at(fmt.Sprintf("state %d", s)))
		}
		copy(t.p[s*nA:(s+1)*nA], row)
	}
	return t, nil
}

// CheckRow returns a *RowError unless row is a probability distribution:
// entries finite and non-negative, summing to 1 within 1e-6. It is the
// one check of a tabular target's rows (NewTabular, ReadCSV, the value
// learners' tables of target_prob_k columns).
func CheckRow(row []float64) error {
	sum := 0.0
	for a, v := range row {
		if !(v >= 0) || math.IsInf(v, 0) {
			return &RowError{Action: a, Value: v}
		}
		sum += v
	}
	if math.Abs(sum-1) > 1e-6 {
		return &RowError{Action: -1, Value: sum}
	}
	return nil
}

// RowError says why a row is not a probability distribution: Action is
// the first action whose probability Value is negative or not finite,
// or -1 when the row's sum Value is not 1.
type RowError struct {
	Action int
	Value  float64
}

func (e *RowError) Error() string {
	if e.Action >= 0 {
		return fmt.Sprintf("action %d: probability %v", e.Action, e.Value)
	}
	return fmt.Sprintf("probabilities sum to %v, want 1", e.Value)
}

// at returns the error after the name of the row's place: "state 4
// action 2: probability -0.1" or "state 4: probabilities sum to 1.1,
// want 1".
func (e *RowError) at(place string) string {
	if e.Action >= 0 {
		return place + " " + e.Error()
	}
	return place + ": " + e.Error()
}

// Uniform returns the policy that picks every action with probability 1/nA.
func Uniform(nS, nA int) *Tabular {
	t := &Tabular{nS: nS, nA: nA, p: make([]float64, nS*nA)}
	for i := range t.p {
		t.p[i] = 1 / float64(nA)
	}
	return t
}

// NumStates returns the number of rows.
func (t *Tabular) NumStates() int { return t.nS }

// NumActions returns the number of actions.
func (t *Tabular) NumActions() int { return t.nA }

// Prob returns pi(a|s).
func (t *Tabular) Prob(s, a int) float64 { return t.p[s*t.nA+a] }

// Row returns the action probabilities of state s. It must not be modified.
func (t *Tabular) Row(s int) []float64 { return t.p[s*t.nA : (s+1)*t.nA] }

// Sample draws an action from row s.
func (t *Tabular) Sample(rng *rand.Rand, s int) int { return Draw(rng, t.Row(s)) }

// Draw samples an index from the probabilities p by inverting their
// cumulative sums; rounding that leaves the uniform draw above the last
// partial sum picks the last index of positive probability, so an action
// of probability 0 is never drawn.
func Draw(rng *rand.Rand, p []float64) int {
	u := rng.Float64()
	acc := 0.0
	last := 0
	for a, v := range p {
		acc += v
		if v > 0 {
			last = a
		}
		if u < acc {
			return a
		}
	}
	return last
}

// Mixture returns (1-alpha)*a + alpha*b, the behavior policies of the
// paper's Section 5 (alpha = 0 gives a, alpha = 1 gives b).
func Mixture(alpha float64, a, b *Tabular) (*Tabular, error) {
	if a.nS != b.nS || a.nA != b.nA {
		return nil, fmt.Errorf("policy: mixture of %dx%d and %dx%d tables", a.nS, a.nA, b.nS, b.nA)
	}
	if !(alpha >= 0 && alpha <= 1) {
		return nil, fmt.Errorf("policy: mixing ratio %v outside [0, 1]", alpha)
	}
	t := &Tabular{nS: a.nS, nA: a.nA, p: make([]float64, len(a.p))}
	for i := range t.p {
		t.p[i] = (1-alpha)*a.p[i] + alpha*b.p[i]
	}
	return t, nil
}

// SoftmaxQ returns pi(a|s) proportional to exp(Q[s][a] / temp), computed
// with the row maximum subtracted so large Q values do not overflow.
func SoftmaxQ(q [][]float64, temp float64) (*Tabular, error) {
	if !(temp > 0) {
		return nil, fmt.Errorf("policy: softmax temperature %v, want > 0", temp)
	}
	probs := make([][]float64, len(q))
	for s, row := range q {
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, v)
		}
		p := make([]float64, len(row))
		sum := 0.0
		for a, v := range row {
			p[a] = math.Exp((v - m) / temp)
			sum += p[a]
		}
		for a := range p {
			p[a] /= sum
		}
		probs[s] = p
	}
	return NewTabular(probs)
}
