package ratio

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/ihope-ope/ihope/dataset"
)

// Tabular learns the density ratio w(s) = d_pi(s)/d_pi0(s) of a discrete
// state space by minimising the paper's kernel loss with the delta kernel
// k(s'_1, s'_2) = 1[s'_1 = s'_2] exactly.
//
// For a transition i = (s_i, a_i, s'_i) with weight rho_i and
// beta_i = pi(a_i|s_i)/pi0(a_i|s_i), Delta_i(w) = w(s_i) beta_i - w(s'_i),
// and the loss of Theorem 2 becomes
//
//	D(w) = sum_{s'} ( sum_{i: s'_i = s'} rho_i Delta_i(w) )^2 / (sum_i rho_i)^2
//	     = || A w - b ||^2,
//
// where column s of A holds the rho beta weight of the transitions leaving
// s and, on the diagonal, minus the weight of those entering s (dummy
// transitions of the discounted case included), and b(s) is minus the
// weight of the dummy transitions into s. Tabular returns the minimiser of
// D(w) + lambda ||w||^2 under the normalisation
//
//	sum_s c(s) w(s) = 1,
//
// c being the empirical distribution of the logged states s_t (the paper's
// z_w = E_{d_pi0}[w], Algorithm 1), found by conjugate gradients on the
// normal equations projected onto the constraint (no stochastic gradient
// descent; see Aggregate for the weights rho and c).
//
// Non-negativity: the exact minimiser may put negative values on rarely
// logged states (on 50 Taxi episodes of 400 steps, a few to a few dozen of
// the 2000 states). The authors' code solves the same
// quadratic programme with quadprog under w >= 0 (its variable is
// w(s) d_pi0(s), with a ridge of 1e-3 on that scale); Tabular follows them
// when NonNegative is set, by a primal active-set method whose every step is
// a projected conjugate-gradient solve on the free states. Without it the
// exact minimiser is returned and TabularModel.Negative counts its negative
// entries.
//
// Regularisation: states that never occur in the data (and states whose
// column of A is zero, i.e. left only by actions the target never takes and
// never entered) are not unknowns of the problem and get w = 0. On the
// remaining states the constrained problem has a unique solution unless
// the data hold two separately balanced groups of states (generically true
// of sampled data, and true of the population weights of a chain with one
// closed class), so Ridge is 0 by default: a ridge biases w by about its
// size relative to the smallest curvature of the loss. With
// Ridge = 0 and a degenerate problem, the conjugate gradients return the
// minimiser of smallest sum_s diag(A^T A)(s) w(s)^2 (they never leave the
// range of the operator).
//
// References:
//
//	Liu, Li, Tang, Zhou (2018), Theorems 1-3, Algorithms 1-2 and Appendix
//	"Algorithm Details"; Gould, Hribar, Nocedal (2001), "On the solution of
//	equality constrained quadratic programming problems arising in
//	optimization" (projected conjugate gradients).
type Tabular struct {
	// Ridge is lambda relative to the mean diagonal of A^T A, so that it is
	// scale free: the penalty is Ridge * mean_s (A^T A)(s,s) * sum_s w(s)^2.
	// If Ridge is 0, no penalty is added. It must not be negative.
	Ridge float64

	// Tol is the relative residual at which the conjugate gradients stop:
	// the projected gradient of the Jacobi-scaled problem must fall to Tol
	// times its value at the least-norm feasible start (or times the norm
	// of that start, if larger: the start may already be the solution).
	// If Tol is 0, a default of 1e-12 is used; on Taxi it gives w to about
	// 1e-9 (1e-10 gives about 4e-8) for some 10% more iterations.
	Tol float64

	// MaxIter caps the conjugate-gradient iterations of one solve. If
	// MaxIter is 0, a default of 20 times the number of unknowns (at least
	// 1000) is used. A solve that does not converge returns an error.
	MaxIter int

	// NonNegative constrains w >= 0, as the authors' code does.
	NonNegative bool

	// MaxActiveSet caps the linear solves of the active-set method used
	// when NonNegative is set. If MaxActiveSet is 0, a default of 200 is
	// used.
	MaxActiveSet int
}

// TabularModel is a learned tabular density ratio.
type TabularModel struct {
	// W[s] is the estimate of w(s) = d_pi(s)/d_pi0(s) for every state
	// s < NumStates of the data; it is 0 for states that are not unknowns of
	// the problem (see Tabular).
	W []float64

	// Unknowns is the number of states whose ratio was solved for.
	Unknowns int

	// Iterations is the total number of conjugate-gradient iterations, and
	// Solves the number of linear solves (1 unless NonNegative is set).
	Iterations int
	Solves     int

	// Residual is the final relative residual of the last solve (at most
	// Tol).
	Residual float64

	// Negative is the number of states with W[s] < 0 (always 0 when
	// NonNegative is set).
	Negative int

	// Loss is D(W) = ||A W - b||^2, the kernel loss at the solution,
	// normalised by the squared total weight of the transitions (the ridge
	// penalty is not included).
	Loss float64
}

// Ratio returns the learned w(s), or 0 for a state outside the model.
func (m *TabularModel) Ratio(s int) float64 {
	if s < 0 || s >= len(m.W) {
		return 0
	}
	return m.W[s]
}

// StepRatios returns w(s_j) for every step j of d (0 for a state outside
// the model).
func (m *TabularModel) StepRatios(d *dataset.Dataset) ([]float64, error) {
	if !d.Discrete() {
		return nil, errors.New("ratio: a tabular ratio needs discrete states")
	}
	w := make([]float64, len(d.State))
	for j, s := range d.State {
		w[j] = m.Ratio(int(s))
	}
	return w, nil
}

// Warnings says in plain words when the exact minimiser is negative in
// some states.
func (m *TabularModel) Warnings() []string {
	if m.Negative == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the learned ratio w is negative in %d states (the exact minimiser of the paper's loss is not constrained to w >= 0); a few small negative values are sampling noise, many mean too little data", m.Negative)}
}

// Edge is the total weight of the transitions from state From to state To:
// Weight = sum_i rho_i and RatioWeight = sum_i rho_i beta_i over the
// transitions i with s_i = From and s'_i = To.
type Edge struct {
	From, To    int
	Weight      float64
	RatioWeight float64
}

// Counts is the tabular problem aggregated by state: the input of
// Tabular.Solve. It can come from logged data (Aggregate) or be built from a
// model's exact distributions, in which case the solve returns the exact
// ratio: for the average reward (gamma = 1),
//
//	Weight(s, s')      = sum_a d_pi0(s) pi0(a|s) P(s'|s,a),
//	RatioWeight(s, s') = sum_a d_pi0(s) pi(a|s) P(s'|s,a),
//	Restart = nil,  Norm = d_pi0;
//
// for 0 < gamma < 1, with d_pi0 the normalised discounted visitation
// (1-gamma) sum_t gamma^t d_pi0,t and d_0 the initial distribution, the same
// edges times gamma, Restart = (1 - gamma) d_0 and Norm = d_pi0.
type Counts struct {
	NumStates int

	// Edges may come in any order and may repeat a (From, To) pair; repeats
	// are summed.
	Edges []Edge

	// Restart[s] is the total weight of the dummy transitions into s of the
	// discounted case (Algorithm 2): each adds 1 - w(s) to the residual of
	// state s. Nil for the average reward.
	Restart []float64

	// Norm[s] is the weight of s in the normalisation
	// sum_s Norm[s] w(s) = sum_s Norm[s]; it need not sum to 1.
	Norm []float64
}

// Aggregate sums the logged transitions of d by (s, s') with the weights of
// the paper:
//
//   - gamma = 1 (Algorithm 1): every step with a known next state has
//     rho = 1, and Norm counts the logged states s_t.
//   - 0 < gamma < 1 (Algorithm 2): step t has rho = gamma^(t+1), every
//     episode adds a dummy transition of weight 1 into its first state
//     (Restart), and Norm[s] sums gamma^t over the steps with s_t = s
//     (gamma^t/(1 - gamma) for an episode's last step in an absorbing
//     state kept for ever, Dataset.DiscountTail).
//
// The relative weights follow the augmented distribution of the Appendix,
// (1-gamma) gamma^(t+1) for step t >= -1, the dummy being step -1: that is
// what makes the population version of the loss vanish at the true ratio
// (Theorem 3). (Weighing the dummy by 1-gamma instead of 1 while weighing
// step t by gamma^(t+1) would not.)
func Aggregate(d *dataset.Dataset, gamma float64) (*Counts, error) {
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("ratio: discount %v outside (0, 1]", gamma)
	}
	if !d.Discrete() || d.NumStates <= 0 || d.NumStates > math.MaxInt32 {
		return nil, errors.New("ratio: the tabular learner needs discrete states")
	}
	nS := d.NumStates
	sums := newEdgeSums(nS, d.NumSteps())
	c := &Counts{NumStates: nS, Norm: make([]float64, nS)}
	if gamma < 1 {
		c.Restart = make([]float64, nS)
	}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		if hi == lo {
			continue
		}
		if gamma < 1 {
			s0 := int(d.State[lo])
			if s0 < 0 || s0 >= nS {
				return nil, fmt.Errorf("ratio: episode %q step 0: state %d outside [0, %d)", d.IDs[e], s0, nS)
			}
			c.Restart[s0]++
		}
		g := 1.0 // gamma^t
		for j := lo; j < hi; j++ {
			t, s := j-lo, int(d.State[j])
			if s < 0 || s >= nS {
				return nil, fmt.Errorf("ratio: episode %q step %d: state %d outside [0, %d)", d.IDs[e], t, s, nS)
			}
			if j == hi-1 {
				// An absorbing state kept for ever weighs its whole
				// discounted tail (Dataset.DiscountTail): without it the
				// constraint undercounted z and, the loss not being
				// homogeneous in w for gamma < 1, bent w itself.
				c.Norm[s] += g * d.DiscountTail(e, gamma)
			} else {
				c.Norm[s] += g
			}
			g1 := g * gamma // gamma^(t+1)
			if next, ok := d.NextState(e, j); ok {
				if next < 0 || next >= nS {
					return nil, fmt.Errorf("ratio: episode %q step %d: next state %d outside [0, %d)", d.IDs[e], t, next, nS)
				}
				lt, lb := d.LogTarget[j], d.LogBehavior[j]
				lr := lt - lb
				beta := math.Exp(lr)
				if math.IsNaN(lr) || math.IsInf(lb, 0) || math.IsInf(beta, 1) {
					return nil, fmt.Errorf("ratio: episode %q step %d: log-probabilities %v (target), %v (behavior) give no finite ratio",
						d.IDs[e], t, lt, lb)
				}
				sums.add(s, next, g1, g1*beta)
			}
			g = g1
		}
	}
	c.Edges = sums.sorted()
	return c, nil
}

// edgeSums sums the weights of repeated (from, to) pairs as they come,
// each pair's sums in the order of its transitions, holding one record per
// distinct pair (15,000 on the paper's Taxi seed) rather than one per
// step. The pairs are found through an open-addressing hash table of
// positions in sums (4 bytes a slot, at most half full): about a third of
// the memory of a map from the pair to its position, which matters to a
// short run, where every page of fresh memory costs a fault.
type edgeSums struct {
	nS    int
	slots []int32   // position in sums + 1, 0 for an empty slot; len a power of 2
	shift uint      // 64 - log2(len(slots))
	sums  []pairSum // in order of first appearance
}

// pairSum is an Edge in 24 bytes instead of 32.
type pairSum struct {
	from, to int32
	wt, rw   float64
}

// newEdgeSums returns an empty edgeSums for states below nS, with room
// for 4 pairs a state (Taxi logs have 7 to 25), or maxPairs if fewer can
// come.
func newEdgeSums(nS, maxPairs int) *edgeSums {
	a := &edgeSums{nS: nS}
	a.sums = make([]pairSum, 0, max(1, min(maxPairs, max(1024, 4*nS))))
	a.rehash(cap(a.sums))
	return a
}

// rehash makes room in the table for n pairs at least.
func (a *edgeSums) rehash(n int) {
	size := 1 << bits.Len(uint(2*n-1)) // a power of 2 >= 2n
	a.slots, a.shift = make([]int32, size), uint(64-bits.Len(uint(size-1)))
	for k, e := range a.sums {
		i := a.slot(e.from, e.to)
		for a.slots[i] != 0 {
			i = (i + 1) & (len(a.slots) - 1)
		}
		a.slots[i] = int32(k) + 1
	}
}

// slot is the first slot probed for a pair (Fibonacci hashing).
func (a *edgeSums) slot(from, to int32) int {
	return int((uint64(uint32(from))<<32 | uint64(uint32(to))) * 0x9e3779b97f4a7c15 >> a.shift)
}

// add adds a transition's weights to its pair's.
func (a *edgeSums) add(from, to int, wt, rw float64) {
	f, t := int32(from), int32(to)
	i := a.slot(f, t)
	for {
		k := a.slots[i]
		if k == 0 {
			break
		}
		if e := &a.sums[k-1]; e.from == f && e.to == t {
			e.wt += wt
			e.rw += rw
			return
		}
		i = (i + 1) & (len(a.slots) - 1)
	}
	if len(a.sums) == cap(a.sums) {
		// Double: append grows a large slice by a quarter, which
		// allocates about five times the final size in all.
		a.sums = append(make([]pairSum, 0, 2*cap(a.sums)), a.sums...)
	}
	a.sums = append(a.sums, pairSum{f, t, wt, rw})
	a.slots[i] = int32(len(a.sums))
	if 2*len(a.sums) > len(a.slots) {
		a.rehash(len(a.sums))
	}
}

// sorted returns the edges grouped by From in increasing order, each
// group in order of first appearance of To (a counting sort, stable).
func (a *edgeSums) sorted() []Edge {
	start := make([]int, a.nS+1)
	for _, e := range a.sums {
		start[e.from+1]++
	}
	for s := range a.nS {
		start[s+1] += start[s]
	}
	out := make([]Edge, len(a.sums))
	for _, e := range a.sums {
		out[start[e.from]] = Edge{From: int(e.from), To: int(e.to), Weight: e.wt, RatioWeight: e.rw}
		start[e.from]++
	}
	return out
}

// Fit learns w from the logged transitions of d with discount gamma in
// (0, 1]: it aggregates them (Aggregate) and solves (Solve). The model is
// a *TabularModel.
func (l Tabular) Fit(d *dataset.Dataset, gamma float64) (Model, error) {
	c, err := Aggregate(d, gamma)
	if err != nil {
		return nil, err
	}
	m, err := l.Solve(c)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Name returns "tabular".
func (Tabular) Name() string { return "tabular" }

// Solve returns the minimiser of the loss defined by c (see Tabular).
func (l Tabular) Solve(c *Counts) (*TabularModel, error) {
	if !(l.Ridge >= 0) || math.IsInf(l.Ridge, 0) {
		return nil, fmt.Errorf("ratio: ridge %v, want a finite value >= 0", l.Ridge)
	}
	if l.Tol < 0 || math.IsNaN(l.Tol) || l.MaxIter < 0 || l.MaxActiveSet < 0 {
		return nil, fmt.Errorf("ratio: tolerance %v, iteration caps %d and %d, want >= 0", l.Tol, l.MaxIter, l.MaxActiveSet)
	}
	sys, err := newSystem(c, l.Ridge)
	if err != nil {
		return nil, err
	}
	tol := l.Tol
	if tol == 0 {
		tol = 1e-12
	}
	maxIter := l.MaxIter
	if maxIter == 0 {
		maxIter = max(1000, 20*sys.m)
	}
	maxSolves := l.MaxActiveSet
	if maxSolves == 0 {
		maxSolves = 200
	}

	y := make([]float64, sys.m)
	for j, cj := range sys.chat {
		y[j] = cj / sys.cc // the feasible point of least norm
	}
	model := &TabularModel{Unknowns: sys.m}
	it, res, err := sys.cg(y, tol, maxIter)
	model.Iterations += it
	model.Solves++
	model.Residual = res
	if err != nil {
		return nil, err
	}
	if l.NonNegative {
		if err := sys.activeSet(y, tol, maxIter, maxSolves, model); err != nil {
			return nil, err
		}
	}

	model.W = make([]float64, c.NumStates)
	for j, s := range sys.states {
		model.W[s] = y[j] * sys.dinv[j]
		if model.W[s] < 0 {
			model.Negative++
		}
	}
	model.Loss = sys.loss(y)
	return model, nil
}

// TV returns the weighted total-variation distance
//
//	TV = 1/2 sum_s | w(s) dPi0(s) - dPi(s) |
//
// between the estimate w * d_pi0 of d_pi and d_pi itself (Figure 1(e) of the
// paper). It panics if the lengths differ.
func TV(w, dPi0, dPi []float64) float64 {
	if len(w) != len(dPi0) || len(w) != len(dPi) {
		panic("ratio: TV of slices of different lengths")
	}
	tv := 0.0
	for s := range w {
		tv += math.Abs(w[s]*dPi0[s] - dPi[s])
	}
	return tv / 2
}
