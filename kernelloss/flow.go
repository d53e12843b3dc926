package kernelloss

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/internal/scc"
)

// Chain is the state-level form of the tabular problem of Pairs with the
// pooled function classes of the state-action learners: a function f of
// the logged pairs (a test function of minimax weight learning, the dual
// variable nu of DualDICE, the q of minimax Q-learning) is extended to the
// pairs the log never shows by
//
//	f(s, a) = sum_{b logged at s} d_D(s, b) / d_D(s) f(s, b)   (a never logged at a state s that was left),
//	f(s, a) = sum_s~ c(s~) f(s~, pi~)                            (s never left: it only ends episodes),
//
// d_D(s) = sum_b d_D(s, b) and c(s) = d_D(s) the logged-state
// distribution: an action never logged at s behaves like the behavior's
// own mix of the actions logged there (the count model's pooling rule),
// and a state never left like an average logged state. Then
// f(s, pi) = sum_{p logged at s} pi~(p) f(p) with the pooled target
//
//	pi~(s, a) = pi(a|s) + pi_U(s) d_D(s, a) / d_D(s),   pi_U(s) = sum of pi(b|s) over the actions b never logged at s,
//
// and the flow of the target's visitation through the logged pairs is
// the operator M on state masses x: mass x(s) of a state never left moves
// to the logged states in proportion to c, every logged state's mass
// x~(s) splits over its pairs as u(p) = pi~(p) x~(s), and the pairs carry
// it to their next states,
//
//	M x = sum_p u(p) P(.|p).
//
// M conserves mass (1^T M = 1^T): nothing the target does leaks out of the
// logged pairs.
//
// For gamma = 1 the chain of M may have several closed classes (states
// whose logged transitions only lead to each other), and then the
// stationary flow is not unique (sparse logs make traps: a state logged
// once, with a move into a wall, loops to itself). As value.Tabular does,
// the strongly connected component holding the most logged mass (under
// c) is kept, and the pairs of the states of every closed class other
// than it lead to c instead of their logged next states (Restarted counts
// these states).
type Chain struct {
	pp    *Pairs
	gamma float64

	// States are the states of the problem (those of the logged pairs,
	// their next states and the start states), Never marks those with no
	// logged pair and Restart those whose pairs restart from c.
	States  []int32
	Never   []bool
	Restart []bool
	idx     []int32 // state -> index in States, -1 outside
	c       []float64
	d0      []float64

	// Pooled is pi~(p) of every pair; next and prob are the pairs'
	// outcomes in compact state indices (pairs of restarting states lead
	// to c instead).
	Pooled    []float64
	Restarted int
	next      []int32
	prob      []float64
}

// Chain returns the pooled state chain of the problem for discount gamma.
func (pp *Pairs) Chain(gamma float64) (*Chain, error) {
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("discount %v outside (0, 1]", gamma)
	}
	nS, nA := pp.NumStates, pp.NumActions
	ch := &Chain{pp: pp, gamma: gamma, idx: make([]int32, nS), Pooled: make([]float64, len(pp.State))}
	for s := range ch.idx {
		ch.idx[s] = -1
	}
	add := func(s int32) {
		if ch.idx[s] < 0 {
			ch.idx[s] = int32(len(ch.States))
			ch.States = append(ch.States, s)
		}
	}
	for s, v := range pp.Init {
		if v > 0 {
			add(int32(s))
		}
	}
	for p, s := range pp.State {
		add(s)
		for k := pp.Start[p]; k < pp.Start[p+1]; k++ {
			add(pp.Next[k])
		}
	}
	n := len(ch.States)
	ch.Never = make([]bool, n)
	ch.Restart = make([]bool, n)
	ch.c = make([]float64, n)
	ch.d0 = make([]float64, n)
	for i := range ch.Never {
		ch.Never[i] = true
	}
	for s, v := range pp.Init {
		if v > 0 {
			ch.d0[ch.idx[s]] = v
		}
	}
	// Pooled target: pi plus the unlogged actions' mass spread by d_D.
	for lo := 0; lo < len(pp.State); {
		s := pp.State[lo]
		hi := lo
		for hi < len(pp.State) && pp.State[hi] == s {
			hi++
		}
		ds, piU := 0.0, 1.0
		for p := lo; p < hi; p++ {
			ds += pp.Weight[p]
			piU -= pp.Pi[int(s)*nA+int(pp.Action[p])]
		}
		piU = math.Max(piU, 0)
		for p := lo; p < hi; p++ {
			ch.Pooled[p] = pp.Pi[int(s)*nA+int(pp.Action[p])] + piU*pp.Weight[p]/ds
		}
		i := ch.idx[s]
		ch.Never[i] = false
		ch.c[i] = ds
		lo = hi
	}
	ch.next = make([]int32, len(pp.Next))
	ch.prob = append([]float64(nil), pp.Prob...)
	for k, s := range pp.Next {
		ch.next[k] = ch.idx[s]
	}
	if gamma == 1 {
		if err := ch.restartMinor(); err != nil {
			return nil, err
		}
	}
	return ch, nil
}

// restartMinor marks as restarting the states of every closed class of
// the chain other than the principal component, the strongly connected
// component holding the most logged mass (value.Tabular's rule): with
// them restarting from c, the principal component is the one closed
// class.
func (ch *Chain) restartMinor() error {
	n := len(ch.States)
	pp := ch.pp
	// The graph of M: pair outcomes of positive pooled mass, and the
	// moves of states never left to the logged states. Those moves go
	// through one extra node, n, with an edge to every state c puts mass
	// on: the same reachability, so the same components of the real
	// states, with edges in number the states never left plus c's
	// support rather than their product (10^6 states, most never left,
	// asked for tens of gigabytes).
	start := make([]int32, n+2)
	var next []int32
	hub := int32(n)
	for i := range n {
		if ch.Never[i] {
			next = append(next, hub)
		} else {
			lo, hi := ch.pairRange(i)
			for p := lo; p < hi; p++ {
				if ch.Pooled[p] == 0 {
					continue
				}
				for k := pp.Start[p]; k < pp.Start[p+1]; k++ {
					next = append(next, ch.next[k])
				}
			}
		}
		start[i+1] = int32(len(next))
	}
	for i, v := range ch.c {
		if v > 0 {
			next = append(next, int32(i))
		}
	}
	start[n+1] = int32(len(next))
	comp, ncomp := scc.Tarjan(n+1, start, next)
	closed := make([]bool, ncomp)
	for k := range closed {
		closed[k] = true
	}
	for i := range n + 1 {
		for _, j := range next[start[i]:start[i+1]] {
			if comp[j] != comp[i] {
				closed[comp[i]] = false
			}
		}
	}
	mass := make([]float64, ncomp)
	for i, v := range ch.c {
		mass[comp[i]] += v
	}
	best := 0
	for k := range mass {
		if mass[k] > mass[best] {
			best = k
		}
	}
	for i := range n {
		if closed[comp[i]] && comp[i] != best {
			ch.Restart[i] = true
			ch.Restarted++
		}
	}
	return nil
}

// pairRange returns the pairs of state index i (none for a state never
// left).
func (ch *Chain) pairRange(i int) (lo, hi int) {
	if ch.Never[i] {
		return 0, 0
	}
	s := ch.States[i]
	nA := ch.pp.NumActions
	lo = len(ch.pp.State)
	for a := range nA {
		if p := ch.pp.Index[int(s)*nA+a]; p >= 0 {
			lo = int(p)
			break
		}
	}
	hi = lo
	for hi < len(ch.pp.State) && ch.pp.State[hi] == s {
		hi++
	}
	return lo, hi
}

// toPairs sets u(p) = pi~(p) x~(s_p): the mass x of the states split over
// their pairs, the states never left moving theirs to the logged states
// in proportion to c first.
func (ch *Chain) toPairs(u, x []float64) {
	xn := 0.0
	for i, v := range x {
		if ch.Never[i] {
			xn += v
		}
	}
	for p, s := range ch.pp.State {
		i := ch.idx[s]
		u[p] = ch.Pooled[p] * (x[i] + ch.c[i]*xn)
	}
}

// toPairsT is the transpose of toPairs: z(i) = sum_{p at i} pi~(p) v(p)
// for a logged state, sum_j c(j) z(j) for a state never left.
func (ch *Chain) toPairsT(z, v []float64) {
	clear(z)
	for p, s := range ch.pp.State {
		z[ch.idx[s]] += ch.Pooled[p] * v[p]
	}
	cz := Dot(ch.c, z)
	for i, never := range ch.Never {
		if never {
			z[i] = cz
		}
	}
}

// toStates sets y = sum_p u(p) P'(.|p), P' the pairs' outcomes (c for the
// pairs of restarting states).
func (ch *Chain) toStates(y, u []float64) {
	clear(y)
	pp := ch.pp
	rest := 0.0
	for p, v := range u {
		if v == 0 {
			continue
		}
		if ch.Restart[ch.idx[pp.State[p]]] {
			rest += v
			continue
		}
		for k := pp.Start[p]; k < pp.Start[p+1]; k++ {
			y[ch.next[k]] += v * ch.prob[k]
		}
	}
	if rest != 0 {
		for i, c := range ch.c {
			y[i] += rest * c
		}
	}
}

// toStatesT is the transpose of toStates: t(p) = P'(.|p) . v.
func (ch *Chain) toStatesT(t, v []float64) {
	pp := ch.pp
	cv := Dot(ch.c, v)
	for p, s := range pp.State {
		if ch.Restart[ch.idx[s]] {
			t[p] = cv
			continue
		}
		sum := 0.0
		for k := pp.Start[p]; k < pp.Start[p+1]; k++ {
			sum += ch.prob[k] * v[ch.next[k]]
		}
		t[p] = sum
	}
}

// Solver settings of the state-level systems: GMRES's relative residual,
// restart and step cap.
const (
	flowTol     = 1e-13
	flowRestart = 40
	flowMaxIter = 5000
)

// Flow is the target's state-action visitation on the logged pairs.
type Flow struct {
	// U is u(p) = d_pi(p) per pair, the visitation; the ratio is
	// w(p) = U[p] / Weight[p].
	U []float64
	// X is the mass of every state of the chain (Chain.States), x~ after
	// the states never left have moved theirs.
	X []float64
	// Iterations is the number of Krylov steps (or conjugate-gradient
	// iterations) and Residual the final relative residual.
	Iterations int
	Residual   float64
	// Loss is the squared flow residual sum_p (pi~(p) x~(s_p) - u(p))^2
	// (0 up to rounding for the exact solve).
	Loss float64
	// Lambda is the absolute ridge of RidgeFlow (0 for Flow).
	Lambda float64
}

// Flow solves the flow equations of the target's visitation exactly:
//
//	x = (1 - gamma) d0 + gamma M x   (0 < gamma < 1),    x = M x, 1^T x = 1   (gamma = 1),
//
// then u(p) = pi~(p) x~(s_p). Since 1^T M = 1^T every solution has
// 1^T x = 1, so the system is solved as the nonsingular
// (I - gamma M + gamma c 1^T) x = (1 - gamma) d0 + gamma c (for gamma = 1,
// (I - M + c 1^T) x = c, nonsingular with one closed class), by GMRES
// with the Jacobi preconditioner.
func (ch *Chain) Flow() (*Flow, error) {
	n := len(ch.States)
	g := ch.gamma
	u := make([]float64, len(ch.pp.State))
	y := make([]float64, n)
	apply := func(dst, x []float64) {
		ch.toPairs(u, x)
		ch.toStates(y, u)
		sx := 0.0
		for _, v := range x {
			sx += v
		}
		for i := range dst {
			dst[i] = x[i] - g*y[i] + g*ch.c[i]*sx
		}
	}
	b := make([]float64, n)
	for i := range b {
		b[i] = (1-g)*ch.d0[i] + g*ch.c[i]
	}
	x := append([]float64(nil), ch.c...)
	it, res, err := GMRES(apply, ch.diag(false), b, x, flowTol, flowRestart, flowMaxIter)
	if err != nil {
		return nil, fmt.Errorf("flow: %w", err)
	}
	f := &Flow{U: make([]float64, len(ch.pp.State)), X: make([]float64, n), Iterations: it, Residual: res}
	ch.toPairs(f.U, x)
	xn := 0.0
	for i, v := range x {
		if ch.Never[i] {
			xn += v
		}
	}
	for i, v := range x {
		if !ch.Never[i] {
			f.X[i] = v + ch.c[i]*xn
		}
	}
	f.Loss = ch.flowLoss(f.U)
	return f, nil
}

// diag returns the Jacobi preconditioner of I - gamma M (or its
// transpose) plus the rank-one term: 1 - gamma M_ii + gamma c_i, with
// M_ii the pooled probability of staying in a logged state (1 for states
// never left, whose diagonal the rank-one terms dominate).
func (ch *Chain) diag(transpose bool) []float64 {
	n := len(ch.States)
	d := make([]float64, n)
	for i := range d {
		d[i] = 1 + ch.gamma*ch.c[i]
	}
	pp := ch.pp
	for p, s := range pp.State {
		i := ch.idx[s]
		if ch.Restart[i] {
			d[i] -= ch.gamma * ch.Pooled[p] * ch.c[i]
			continue
		}
		for k := pp.Start[p]; k < pp.Start[p+1]; k++ {
			if ch.next[k] == i {
				d[i] -= ch.gamma * ch.Pooled[p] * ch.prob[k]
			}
		}
	}
	for i, v := range d {
		if !(v > 1e-12) {
			d[i] = 1
		}
	}
	return d
}

// flowLoss returns sum_p (pi~(p) x~(s_p) - u(p))^2 with
// x = (1 - gamma) d0 + gamma M' u (M' u the states u leads to).
func (ch *Chain) flowLoss(u []float64) float64 {
	n := len(ch.States)
	x := make([]float64, n)
	ch.toStates(x, u)
	for i := range x {
		x[i] = (1-ch.gamma)*ch.d0[i] + ch.gamma*x[i]
	}
	v := make([]float64, len(u))
	ch.toPairs(v, x)
	l := 0.0
	for p := range v {
		l += (v[p] - u[p]) * (v[p] - u[p])
	}
	return l
}

// Values is the target's value on the chain: Q per pair, V per state of
// the chain, and Rho the average reward (gamma = 1; 0 otherwise).
type Values struct {
	Q, V       []float64
	Rho        float64
	Iterations int
	Residual   float64
}

// Values solves the Bellman equations of the target on the logged pairs
// with the pooled classes, the transpose of Flow's system:
//
//	q(p) = r(p) - rho + gamma P'(.|p) . v,   v = M^T-form of q:  v(s) = sum_{p at s} pi~(p) q(p),  v(s never left) = sum_s~ c(s~) v(s~),
//
// (rho = 0 for gamma < 1), that is (I - gamma M^T) v = b - rho 1 with b the
// pooled reward of every state. For gamma < 1 it solves
// (I - gamma M^T + gamma 1 c^T) y = b and v = y + gamma (c . y)/(1 - gamma) 1
// (M^T 1 = 1); for gamma = 1 (I - M^T + 1 c^T) h = b, rho = c . h and
// v = h - rho 1, the differential value normalised by c . v = 0.
//
// The estimate (1 - gamma) d0 . v (or rho) equals sum_p u(p) r(p) of Flow
// exactly: the two solves are transposes of each other.
func (ch *Chain) Values() (*Values, error) {
	n := len(ch.States)
	g := ch.gamma
	np := len(ch.pp.State)
	t := make([]float64, np)
	apply := func(dst, v []float64) {
		ch.toStatesT(t, v)
		ch.toPairsT(dst, t)
		cv := Dot(ch.c, v)
		for i := range dst {
			dst[i] = v[i] - g*dst[i] + g*cv
		}
	}
	b := make([]float64, n)
	ch.toPairsT(b, ch.pp.Reward)
	h := make([]float64, n)
	it, res, err := GMRES(apply, ch.diag(true), b, h, flowTol, flowRestart, flowMaxIter)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	out := &Values{V: h, Iterations: it, Residual: res}
	ch0 := Dot(ch.c, h)
	if g < 1 {
		for i := range h {
			h[i] += g * ch0 / (1 - g)
		}
	} else {
		out.Rho = ch0
		for i := range h {
			h[i] -= ch0
		}
	}
	out.Q = make([]float64, np)
	ch.toStatesT(out.Q, h)
	for p := range out.Q {
		out.Q[p] = ch.pp.Reward[p] - out.Rho + g*out.Q[p]
	}
	return out, nil
}

// Index returns the index of state s in States, -1 if s is not a state
// of the chain.
func (ch *Chain) Index(s int) int { return int(ch.idx[s]) }

// InitValue returns sum_s d0(s) v(s) for values v on the chain's states.
func (ch *Chain) InitValue(v []float64) float64 { return Dot(ch.d0, v) }
