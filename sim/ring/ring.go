package ring

import (
	"fmt"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
)

// The two actions of the ring.
const (
	L = 0 // s -> s-1 mod n, reward 0
	R = 1 // s -> s+1 mod n, reward 1
)

// MDP is the ring with n states. Its transition table is
//
//	T(s'|s, L) = I(s' = s-1 mod n),  T(s'|s, R) = I(s' = s+1 mod n),
//	r(s, a)    = I(a = R)
//
// (Appendix B). The reset distribution is uniform over the n states; it is
// also the stationary distribution of every policy that picks R with the
// same probability in every state, so a log started from the reset
// distribution is stationary from its first step.
type MDP struct {
	n    int
	out  [][2][1]mdp.Outcome // out[s][a] is the single outcome
	init []float64
}

var _ mdp.Finite = (*MDP)(nil)

// New returns the ring with n states. The paper requires n odd (so that the
// chain of every policy with 0 < P(R) < 1 is aperiodic and ergodic) and
// n >= 3.
func New(n int) (*MDP, error) {
	if n < 3 || n%2 == 0 {
		return nil, fmt.Errorf("ring: %d states, want an odd number >= 3", n)
	}
	m := &MDP{n: n, out: make([][2][1]mdp.Outcome, n), init: make([]float64, n)}
	for s := 0; s < n; s++ {
		m.out[s][L][0] = mdp.Outcome{Next: (s - 1 + n) % n, Prob: 1, Reward: 0}
		m.out[s][R][0] = mdp.Outcome{Next: (s + 1) % n, Prob: 1, Reward: 1}
		m.init[s] = 1 / float64(n)
	}
	return m, nil
}

// NumStates returns n.
func (m *MDP) NumStates() int { return m.n }

// NumActions returns 2 (L and R).
func (m *MDP) NumActions() int { return 2 }

// Initial returns the uniform distribution over the n states. It must not
// be modified.
func (m *MDP) Initial() []float64 { return m.init }

// Outcomes returns the single deterministic outcome of action a in state s.
func (m *MDP) Outcomes(s, a int) []mdp.Outcome { return m.out[s][a][:] }

// Policy returns the policy on the n-state ring that picks R with
// probability pR and L with probability 1 - pR in every state. The paper's
// behavior policy is Policy(n, rho) and its target is Policy(n, 1-rho).
// It panics unless n >= 1 and 0 <= pR <= 1 (callers validate user input).
func Policy(n int, pR float64) *policy.Tabular {
	if n < 1 || !(pR >= 0 && pR <= 1) {
		panic(fmt.Sprintf("ring: policy with %d states and P(R) = %v", n, pR))
	}
	rows := make([][]float64, n)
	for s := range rows {
		rows[s] = []float64{1 - pR, pR}
	}
	t, err := policy.NewTabular(rows)
	if err != nil {
		panic(err) // unreachable: the rows are valid distributions
	}
	return t
}
