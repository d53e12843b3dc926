package value

import (
	"errors"
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
)

// Tabular is fitted Q evaluation for discrete states and actions done
// exactly: it fits the count model of the log (FitCountModel, the
// empirical MDP: P(s'|s,a) = N(s,a,s')/N(s,a), r(s,a) the mean logged
// reward, with its documented rules for unseen pairs) and returns the
// target's value in that model, solved in closed form rather than by
// regression. With every pair logged, fitted Q evaluation with a tabular
// regressor converges to this solution (Le, Voloshin, Yue 2019), and it
// is the model the model-based estimator evaluates.
//
// Stationary models (Finite false), with P^pi the empirical chain
// P^pi(s'|s) = sum_a pi(a|s) P(s'|s,a) and r_pi(s) = sum_a pi(a|s) r(s,a):
//
//   - 0 < gamma < 1: v solves (I - gamma P^pi) v = r_pi          (1)
//     and q(s,a) = r(s,a) + gamma sum_s' P(s'|s,a) v(s').
//   - gamma = 1, the differential value: rho and v solve the Poisson
//     equation (I - P^pi) v = r_pi - rho 1                        (2)
//     with the normalisation sum_s c(s) v(s) = 0, and
//     q(s,a) = r(s,a) - rho + sum_s' P(s'|s,a) v(s').
//     c is the empirical distribution of the logged states s_t, every
//     step weighing the same (the gamma^t-weighted distribution at
//     gamma = 1). Any normalisation shifts v and
//     q by one constant, which cancels in q(s,a) - v(s') and in every
//     estimator built on them (Model.Values).
//
// Finite-horizon models (Finite true), H the longest logged episode:
//
//	q^h(s,a) = r(s,a) + gamma sum_s' P(s'|s,a) v^(h-1)(s'),   v^h(s) = sum_a pi(a|s) q^h(s,a),   (3)
//
// v^0 = 0, h = 1..H; Values indexes them by the steps left (Model).
//
// Which states are solved for: those the log shows (as s_t or as a known
// next state). The count model never leads outside them. Every other
// state, which no logged transition reaches, gets q = v = 0 in every
// mode: "nothing is known there"; it only matters when the model is read
// on other logs (Values).
//
// The long-run average and the empirical chain's closed classes. Sparse
// logs give the empirical chain closed classes that the world does not
// have: states never left (they appear only as the next state of an
// episode's last step; the count model makes them loop to themselves) and
// traps (a state logged once, with a move into a wall, loops to itself
// under every action by the pooling rule; a few states whose logged
// transitions only lead to each other). Under discounting or a finite
// horizon such a class weighs in proportion to the chance of reaching it
// within the horizon, about 1/N for a state seen once in N transitions,
// and it is kept, as the model-based estimator keeps it. The long-run
// average, however, is decided by where the chain ends up: a trap
// reachable from the rest absorbs all the mass, and rho would be the
// trap's own reward whatever the target does. Sampled Taxi logs of 200
// episodes of 400 steps have 0 to 4 such states; the raw count model's
// T-step average under pi19 drifts from -0.12 (T = 400) to -0.14 ... -0.42
// (T = 100,000) on four seeds, towards the traps' -1, where the truth is
// -0.1217. So, for gamma = 1 only, Fit keeps one closed class: the
// principal one is the strongly connected component of the empirical
// chain that holds most of the logged states (under c), and every state
// of every other closed class continues like an average logged state: its
// next state is drawn from c (its reward is kept). With the normalisation
// c . v = 0 such a state is worth v(s) = r_pi(s) - rho and
// q(s,a) = r(s,a) - rho, and the chain has one closed class, so rho is
// unique. TabularModel.Restarted counts these states. (For a world whose
// target chain truly has several closed classes the long-run average
// depends on the start, and no single rho describes it; SolveTabular,
// given a true model, refuses such a chain.)
//
// Solves: (1) and (2) block by block over the strongly connected
// components of the chain, which make the systems block triangular:
// blocks of up to 200 states by dense LU, larger ones by restarted GMRES
// (right Jacobi preconditioner, the near-constant mode deflated) to a
// relative residual of 1e-13, with dense LU as the fallback up to 3000
// states. (A dense LU of a whole Taxi system takes about 0.7 s, see
// mdp.DenseLimit; these solves take 5 to 10 ms.) (3) by H sparse matrix-vector products.
//
// The target's action distribution comes from Target.Policy (a
// policy.Discrete with the data's numbers of actions and, if it reports
// them, of states) or, if that is nil, from the log's target_prob_k
// columns (TableFromData).
//
// References:
//
//	Le, Voloshin, Yue (2019), "Batch policy learning under constraints"
//	(fitted Q evaluation); Puterman (1994), "Markov decision processes",
//	Section 8.2 (the evaluation equations of the average reward, Eq. (2));
//	Saad and Schultz (1986), "GMRES: a generalized minimal residual
//	algorithm for solving nonsymmetric linear systems".
type Tabular struct {
	// Finite selects the finite-horizon model (3) instead of the
	// stationary one.
	Finite bool
}

var (
	_ Learner = Tabular{}
	_ Model   = (*TabularModel)(nil)
)

// Name returns "tabular".
func (Tabular) Name() string { return "tabular" }

// FitsHorizon reports whether l fits the finite-horizon values (Finite).
func (l Tabular) FitsHorizon() bool { return l.Finite }

// Fit fits the count model of d and solves for the target's value in it
// (see Tabular). The model is a *TabularModel.
func (l Tabular) Fit(d *dataset.Dataset, gamma float64, target Target) (Model, error) {
	const name = "value: tabular"
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("%s: discount %v outside (0, 1]", name, gamma)
	}
	if d == nil || !d.Discrete() || d.NumStates <= 0 || d.NumActions <= 0 || d.ActionDim != 0 {
		return nil, fmt.Errorf("%s: needs discrete states and actions (NumStates > 0, NumActions > 0)", name)
	}
	pi, err := discreteTarget(d, target)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m, err := FitCountModel(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// The steps logged at each state: with the count model's transitions
	// they say which states the log shows and give the occupancy c.
	steps := make([]int, d.NumStates)
	for _, s := range d.State {
		steps[s]++
	}
	horizon := 0
	if l.Finite {
		horizon = d.MaxLen()
	}
	tm, err := l.solveCounts(m, pi, gamma, steps, horizon)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return tm, nil
}

// FitCounts is Fit from a log's sufficient statistics, as a stream of
// shards gathers them (package ope's sums): m is the log's count model
// (NewCountModel), pi the target, steps[s] the number of logged steps at
// state s and horizon the longest episode (read only when Finite). Given
// the statistics of a log it returns Fit's model of it, number for
// number.
func (l Tabular) FitCounts(m *CountModel, pi policy.Discrete, gamma float64, steps []int, horizon int) (*TabularModel, error) {
	const name = "value: tabular"
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("%s: discount %v outside (0, 1]", name, gamma)
	}
	if len(steps) != m.NumStates() {
		return nil, fmt.Errorf("%s: %d step counts for %d states", name, len(steps), m.NumStates())
	}
	if pi.NumActions() != m.NumActions() {
		return nil, fmt.Errorf("%s: target policy has %d actions, the data %d", name, pi.NumActions(), m.NumActions())
	}
	if !l.Finite {
		horizon = 0
	} else if horizon <= 0 {
		return nil, fmt.Errorf("%s: horizon %d", name, horizon)
	}
	tm, err := l.solveCounts(m, pi, gamma, steps, horizon)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return tm, nil
}

// solveCounts solves for the target's value in the count model m: on the
// states the log shows (logged as s_t, steps[s] > 0, or as the known
// next state of a logged transition, an outcome of a visited pair), with
// for gamma = 1 (stationary) the occupancy c(s) = steps[s] / sum steps.
func (l Tabular) solveCounts(m *CountModel, pi policy.Discrete, gamma float64, steps []int, horizon int) (*TabularModel, error) {
	nS, nA := m.NumStates(), m.NumActions()
	p := problem{m: m, pi: pi, gamma: gamma, horizon: horizon, active: make([]bool, nS)}
	total := 0
	for s, k := range steps {
		total += k
		if k == 0 {
			continue
		}
		p.active[s] = true
		for a := range nA {
			if m.visits[s*nA+a] == 0 {
				continue // pooled outcomes: next states of the visited actions
			}
			for _, o := range m.out[s*nA+a] {
				p.active[o.Next] = true
			}
		}
	}
	if gamma == 1 && horizon == 0 {
		c := make([]float64, nS)
		for s, k := range steps {
			c[s] = float64(k) / float64(total)
		}
		p.norm = c
		p.restartMinor = true
	}
	return p.solve()
}

// SolveTabular returns the value of pi in the tabular MDP m on all its
// states, by the equations of Tabular: stationary if horizon is 0
// (Eq. (1) for gamma < 1, the Poisson equation (2) for gamma = 1 with the
// normalisation sum_s norm(s) v(s) = 0), finite-horizon (3) with
// H = horizon steps otherwise. norm is only read for the stationary
// gamma = 1 solve; nil means m.Initial(); it is rescaled to sum to 1.
//
// It is Tabular.Fit without the data: Fit calls the same solver on the
// count model of a log, restricted to the logged states. Given the true
// model it returns the true values, so that
//
//	(1 - gamma) sum_s d0(s) v(s) = sum_s d_pi(s) r_pi(s)      (gamma < 1, d_pi the normalised discounted visitation),
//	rho = sum_s d_pi(s) r_pi(s)                               (gamma = 1, d_pi the stationary distribution),
//	sum_s d0(s) v^H(s) / sum_{t<H} gamma^t = mdp.Value(m, pi, d0, H, gamma).
//
// For gamma = 1 the chain of pi must have one closed class (else rho is
// not unique and SolveTabular returns an error). pi must have m's number
// of actions and give a distribution for every state of m.
func SolveTabular(m mdp.Finite, pi policy.Discrete, gamma float64, horizon int, norm []float64) (*TabularModel, error) {
	const name = "value: solve"
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("%s: discount %v outside (0, 1]", name, gamma)
	}
	if horizon < 0 {
		return nil, fmt.Errorf("%s: horizon %d", name, horizon)
	}
	if pi.NumActions() != m.NumActions() {
		return nil, fmt.Errorf("%s: policy has %d actions, MDP %d", name, pi.NumActions(), m.NumActions())
	}
	nS := m.NumStates()
	p := problem{m: m, pi: pi, gamma: gamma, horizon: horizon, active: make([]bool, nS)}
	for s := range p.active {
		p.active[s] = true
	}
	if gamma == 1 && horizon == 0 {
		if norm == nil {
			norm = m.Initial()
		}
		if len(norm) != nS {
			return nil, fmt.Errorf("%s: normalisation of length %d, MDP has %d states", name, len(norm), nS)
		}
		sum := 0.0
		for s, v := range norm {
			if !(v >= 0) || math.IsInf(v, 1) {
				return nil, fmt.Errorf("%s: normalisation weight %v of state %d", name, v, s)
			}
			sum += v
		}
		if !(sum > 0) || math.IsInf(sum, 1) {
			return nil, fmt.Errorf("%s: normalisation weights sum to %v", name, sum)
		}
		p.norm = make([]float64, nS)
		for s, v := range norm {
			p.norm[s] = v / sum
		}
	}
	tm, err := p.solve()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return tm, nil
}

// problem is one solve: the model, the policy, the discount, the horizon
// (0: stationary), the states solved for, and for the differential
// model the normalisation c (a distribution on all states, 0 outside the
// active ones) and whether minor closed classes restart from c.
type problem struct {
	m       mdp.Finite
	pi      policy.Discrete
	gamma   float64
	horizon int
	active  []bool
	norm    []float64
	// restartMinor makes the closed classes other than the principal one
	// restart from norm (Tabular's rule for gamma = 1).
	restartMinor bool
}

func (p *problem) solve() (*TabularModel, error) {
	nS := p.m.NumStates()
	tm := &TabularModel{nS: nS, nA: p.m.NumActions(), gamma: p.gamma, horizon: p.horizon, rho: math.NaN(),
		mdp: p.m, pi: p.pi, idx: make([]int32, nS)}
	for s := range tm.idx {
		tm.idx[s] = -1
		if p.active[s] {
			tm.idx[s] = int32(len(tm.states))
			tm.states = append(tm.states, s)
		}
	}
	n := len(tm.states)
	differential := p.gamma == 1 && p.horizon == 0
	var norm []float64 // on the active states
	if differential {
		norm = make([]float64, n)
		for i, s := range tm.states {
			norm[i] = p.norm[s]
		}
		tm.norm = norm
	}
	c, err := newChain(p.m, p.pi, tm.states, tm.idx, nil, nil)
	if err != nil {
		return nil, err
	}
	if differential && p.restartMinor {
		if restart, k := c.minorClasses(norm); k > 0 {
			tm.restart, tm.Restarted = restart, k
			if c, err = newChain(p.m, p.pi, tm.states, tm.idx, restart, norm); err != nil {
				return nil, err
			}
		}
	}
	tm.chain = c
	switch {
	case p.horizon > 0:
		tm.vh = c.finite(nil, p.horizon, p.gamma)
		return tm, nil
	case differential:
		if classes := c.closedClasses(); len(classes) > 1 {
			return nil, fmt.Errorf("the average reward is not unique: under the target, the chain has %d closed classes (states %d and %d are in different ones, and no transition leads from one to the other)",
				len(classes), tm.states[classes[0]], tm.states[classes[1]])
		}
		tm.v, tm.rho, tm.Iterations, tm.Residual, err = c.solveDifferential(norm)
	default:
		tm.v, tm.Iterations, tm.Residual, err = c.solveDiscounted(p.gamma)
	}
	if err != nil {
		return nil, err
	}
	tm.q = make([]float64, nS*tm.nA)
	for i, s := range tm.states {
		for a := range tm.nA {
			tm.q[s*tm.nA+a] = tm.qAt(i, s, a, tm.v)
		}
	}
	return tm, nil
}

// finite extends the table of v^h (h = 0..len(vh)/n - 1, v^0 = 0, one row
// of n entries per h) to h = 0..H by Eq. (3), v^h = r_pi + gamma P_pi
// v^(h-1), and returns it (a new table; vh is not modified).
func (c *chain) finite(vh []float64, H int, gamma float64) []float64 {
	n := c.n
	have := len(vh) / max(n, 1)
	if have == 0 {
		have = 1
	}
	out := make([]float64, (H+1)*n)
	copy(out, vh)
	for h := have; h <= H; h++ {
		cur, prev := out[h*n:(h+1)*n], out[(h-1)*n:h*n]
		c.mulP(cur, prev)
		for i := range cur {
			cur[i] = c.r[i] + gamma*cur[i]
		}
	}
	return out
}

// TabularModel is a value model fitted by Tabular or solved by
// SolveTabular. It is read-only and safe for concurrent use.
type TabularModel struct {
	// Iterations is the number of GMRES steps of the stationary solve
	// (0 if every block was solved by LU) and Residual the relative
	// residual of Eq. (1) or (2) on the states solved for,
	// ||r_pi - rho 1 - (I - gamma P_pi) v||_2 / ||r_pi - rho 1||_2 (rho = 0
	// for gamma < 1); both are 0 for a finite-horizon model.
	Iterations int
	Residual   float64
	// Restarted is the number of states that the differential model
	// (gamma = 1) restarts from the logged-state distribution: the states
	// of the closed classes other than the principal one (see Tabular).
	Restarted int

	nS, nA  int
	gamma   float64
	horizon int // 0: stationary
	rho     float64
	mdp     mdp.Finite
	pi      policy.Discrete
	states  []int   // the states solved for
	idx     []int32 // state -> index in states, or -1
	chain   *chain
	norm    []float64 // differential: c on the states solved for
	restart []bool    // differential: states that restart from c

	q []float64 // stationary: q(s,a) at s*nA+a
	v []float64 // stationary: v on the states solved for
	// vh is the finite-horizon table, v^h(states[i]) at h*len(states)+i,
	// h = 0..horizon.
	vh []float64
}

// Rho returns the average reward of the differential model (stationary,
// gamma = 1), NaN for the others.
func (m *TabularModel) Rho() float64 { return m.rho }

// Horizon returns H for a finite-horizon model, 0 for a stationary one.
func (m *TabularModel) Horizon() int { return m.horizon }

// MDP returns the model the values were solved in: the *CountModel of
// the log for Tabular.Fit.
func (m *TabularModel) MDP() mdp.Finite { return m.mdp }

// Policy returns the target policy the values were solved for.
func (m *TabularModel) Policy() policy.Discrete { return m.pi }

// Q returns q(s,a) of a stationary model, or q^h(s,a) of a finite-horizon
// one with h steps left, 1 <= h <= Horizon() (h is ignored by a
// stationary model). It is 0 for a state that was not solved for.
func (m *TabularModel) Q(h, s, a int) float64 {
	i := m.idx[s]
	if i < 0 {
		return 0
	}
	if m.horizon == 0 {
		return m.q[s*m.nA+a]
	}
	if h < 1 || h > m.horizon {
		panic(fmt.Sprintf("value: q^%d of a model of horizon %d", h, m.horizon))
	}
	n := len(m.states)
	return m.qAt(int(i), s, a, m.vh[(h-1)*n:h*n])
}

// V returns v(s) of a stationary model, or v^h(s) with h steps left,
// 0 <= h <= Horizon(), of a finite-horizon one.
func (m *TabularModel) V(h, s int) float64 {
	i := m.idx[s]
	if i < 0 {
		return 0
	}
	if m.horizon == 0 {
		return m.v[i]
	}
	if h < 0 || h > m.horizon {
		panic(fmt.Sprintf("value: v^%d of a model of horizon %d", h, m.horizon))
	}
	return m.vh[h*len(m.states)+int(i)]
}

// qAt returns q(s,a) of state s = states[i] from the values next of the
// states solved for (v for a stationary model, v^(h-1) for q^h):
// r(s,a) + gamma sum_s' P(s'|s,a) next(s'), minus rho for the
// differential model, whose restarting states continue from the
// logged-state distribution c instead of their outcomes.
func (m *TabularModel) qAt(i, s, a int, next []float64) float64 {
	q := 0.0
	outs := m.mdp.Outcomes(s, a)
	if m.restart != nil && m.restart[i] {
		for _, o := range outs {
			q += o.Prob * o.Reward
		}
		for j, c := range m.norm {
			q += c * next[j]
		}
		return q - m.rho
	}
	for _, o := range outs {
		q += o.Prob * (o.Reward + m.gamma*next[m.idx[o.Next]])
	}
	if m.horizon == 0 && m.gamma == 1 {
		q -= m.rho
	}
	return q
}

// Values returns q(s_j, a_j), v(s_j) and v(s'_j) at every step j of d, as
// value.Model documents: for a finite-horizon model, q^h and v^h with h
// the steps left in the episode and v^(h-1) at the next state (0 after
// the last step). d must have the model's numbers of states and actions.
// States that were not solved for (never seen in the log the model was
// fitted on) have q = v = 0. A finite-horizon model read on episodes
// longer than its horizon extends its table for the call.
func (m *TabularModel) Values(d *dataset.Dataset) (q, v, next []float64, err error) {
	if d == nil || !d.Discrete() || d.ActionDim != 0 {
		return nil, nil, nil, errors.New("value: tabular: needs discrete states and actions")
	}
	if d.NumStates != m.nS || d.NumActions != m.nA {
		return nil, nil, nil, fmt.Errorf("value: tabular: data have %d states and %d actions, the model %d and %d",
			d.NumStates, d.NumActions, m.nS, m.nA)
	}
	N := d.NumSteps()
	q, v, next = make([]float64, N), make([]float64, N), make([]float64, N)
	n := len(m.states)
	vh := m.vh
	if m.horizon > 0 {
		if H := d.MaxLen(); H > m.horizon {
			vh = m.chain.finite(vh, H, m.gamma)
		}
	}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			s, a := int(d.State[j]), int(d.Action[j])
			if s < 0 || s >= m.nS || a < 0 || a >= m.nA {
				return nil, nil, nil, fmt.Errorf("value: tabular: episode %q step %d: state %d or action %d out of range",
					d.IDs[e], j-lo, s, a)
			}
			ns, ok := d.NextState(e, j)
			if ok && (ns < 0 || ns >= m.nS) {
				return nil, nil, nil, fmt.Errorf("value: tabular: episode %q step %d: next state %d out of range", d.IDs[e], j-lo, ns)
			}
			i := m.idx[s]
			if m.horizon == 0 {
				if i >= 0 {
					q[j], v[j] = m.q[s*m.nA+a], m.v[i]
				}
				next[j] = math.NaN()
				if ok {
					next[j] = 0
					if k := m.idx[ns]; k >= 0 {
						next[j] = m.v[k]
					}
				}
				continue
			}
			h := hi - j // steps left
			if i >= 0 {
				q[j] = m.qAt(int(i), s, a, vh[(h-1)*n:h*n])
				v[j] = vh[h*n+int(i)]
			}
			switch {
			case h == 1:
				next[j] = 0
			case !ok:
				next[j] = math.NaN()
			default:
				if k := m.idx[ns]; k >= 0 {
					next[j] = vh[(h-1)*n+int(k)]
				}
			}
		}
	}
	return q, v, next, nil
}
