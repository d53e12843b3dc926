package mdp

import (
	"fmt"

	"github.com/ihope-ope/ihope/policy"
)

// chain is the Markov chain P_pi of a policy in a tabular MDP, stored
// row-wise (CSR): the successors of state s are next[start[s]:start[s+1]]
// with probabilities prob[...]; r[s] is the expected reward r_pi(s).
type chain struct {
	n     int
	start []int32
	next  []int32
	prob  []float64
	r     []float64
}

// newChain builds P_pi and r_pi, merging the outcomes of all actions that
// lead to the same next state. It panics if pi and m disagree on the number
// of actions (a programmer's mistake).
func newChain(m Finite, pi policy.Discrete) *chain {
	n, nA := m.NumStates(), m.NumActions()
	if pi.NumActions() != nA {
		panic(fmt.Sprintf("mdp: policy has %d actions, MDP %d", pi.NumActions(), nA))
	}
	c := &chain{n: n, start: make([]int32, n+1), r: make([]float64, n)}
	acc := make([]float64, n) // scratch row, zero between states
	seen := make([]bool, n)
	var touched []int32
	for s := 0; s < n; s++ {
		r := 0.0
		for a := 0; a < nA; a++ {
			p := pi.Prob(s, a)
			if p == 0 {
				continue
			}
			for _, o := range m.Outcomes(s, a) {
				q := p * o.Prob
				if q == 0 {
					continue
				}
				r += q * o.Reward
				if !seen[o.Next] {
					seen[o.Next] = true
					touched = append(touched, int32(o.Next))
				}
				acc[o.Next] += q
			}
		}
		c.r[s] = r
		for _, j := range touched {
			c.next = append(c.next, j)
			c.prob = append(c.prob, acc[j])
			acc[j], seen[j] = 0, false
		}
		touched = touched[:0]
		c.start[s+1] = int32(len(c.next))
	}
	return c
}

// push sets dst = src P_pi (dst is overwritten).
func (c *chain) push(dst, src []float64) {
	clear(dst)
	for s, ds := range src {
		if ds == 0 {
			continue
		}
		lo, hi := c.start[s], c.start[s+1]
		next, prob := c.next[lo:hi], c.prob[lo:hi]
		for k, j := range next {
			dst[j] += ds * prob[k]
		}
	}
}

// reward returns sum_s d(s) r_pi(s).
func (c *chain) reward(d []float64) float64 {
	v := 0.0
	for s, ds := range d {
		v += ds * c.r[s]
	}
	return v
}
