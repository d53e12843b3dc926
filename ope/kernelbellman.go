package ope

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/value"
)

// KernelBellman is the kernel Bellman confidence interval of Feng, Ren,
// Tang and Liu (2020) for the tabular class: the least and greatest
// normalised discounted value
//
//	v(q) = (1 - gamma) E_{s0 ~ d0} [ sum_a pi(a|s0) q(s0, a) ]
//
// over the q whose empirical kernel Bellman loss is at most lambda,
//
//	L(q) = (1/n^2) sum_{j,k} R_j(q) K(x_j, x_k) R_k(q),
//	R_j(q) = r_j + gamma sum_a pi(a|s'_j) q(s'_j, a) - q(s_j, a_j),
//
// with x = (s, a) and the delta kernel K(x, y) = 1[x = y] (one-hot
// features): L(q) = (1/n^2) sum_x S_x(q)^2, S_x the sum of the residuals
// of the steps logged at x. The true q^pi is in the class (the class
// holds every function of (s, a)), so the interval holds the long-run
// value whenever L(q^pi) <= lambda and d0's sample mean is close enough.
//
// The range has a closed form. Write S(q) = B - N q, N = [N_V N_U] with
// V the pairs the log visits (N_V = D - gamma C_VV is invertible: D the
// visit counts, D^-1 C_VV substochastic) and U those it does not, which
// only a box constrains: every q^pi lies in [lo, hi]/(1 - gamma) when the
// rewards lie in [lo, hi]. With u = N_V^-T c_V and g_U = c_U - N_U^T u,
//
//	v = u^T B - u^T y + g_U^T q_U,   ||y|| <= n sqrt(lambda),
//
// so the range is u^T B -+ n sqrt(lambda) ||u|| plus, per unvisited
// pair, the least and greatest of g_x lo/(1-gamma) and g_x hi/(1-gamma).
// (The box on the visited pairs is dropped, which only widens the range,
// and keeps the form closed.) A second term covers d0: v uses the mean
// over the logged episodes' first states.
//
// Lambda is calibrated one of two ways (Calibration):
//
//   - "finite-sample": the residuals of q^pi are bounded martingale
//     differences (|R_j| <= (hi - lo)/(1 - gamma)) in a Hilbert space,
//     so Pinelis' inequality gives L(q^pi) <= 2 l^2 ln(2/delta)/n with
//     probability 1 - delta, and Hoeffding's inequality bounds d0's
//     term. A guarantee for any world, given independent episodes (or
//     one long one: the bound is a martingale one), rewards within the
//     stated range, and a discount below 1.
//   - "sign-flip": the (1 - delta) quantile of ||(1/n) sum_e eps_e zeta_e||^2
//     over random signs eps_e of whole episodes, zeta_e the episode's sum
//     of R_j(q_hat) e_{x_j} at a minimiser q_hat, and a normal quantile
//     for d0's term: asymptotically valid over independent episodes, and
//     much narrower.
//
// Alpha is split equally between the loss and d0's term (on real states
// at gamma = 1, which have no d0 term, all of it goes to the loss).
//
// References:
//
//	Feng, Ren, Tang, Liu (2020). Accountable Off-Policy Evaluation With
//	Kernel Bellman Statistics. ICML. Eq. (3) (the loss), Theorem 3.1
//	(the feasible set), Section 3.2 (the interval).
//	Pinelis (1994). Optimum bounds for the distributions of martingales in
//	Banach spaces. Ann. Probab. 22(4), Theorem 3.5.
type KernelBellman struct {
	// RewardLow and RewardHigh are the range every reward lies in.
	RewardLow, RewardHigh float64
	// Alpha is 1 - the interval's level (0: 0.05).
	Alpha float64
	// Calibration is "finite-sample" (the default) or "sign-flip".
	Calibration string
	// Flips is the number of sign flips (0: 2000); Seed draws them.
	Flips int
	Seed  uint64
	// Target is the target policy; nil reads the log's target
	// distribution (TargetProbs).
	Target *policy.Tabular
	// Linear and ValueTarget give the class on real states: q linear in
	// Linear's features, the kernel k(x, y) = phi(x)^T phi(y), the
	// target's distribution as the value learners take it. There the
	// threshold is always the sign-flip one (the features are unbounded:
	// no finite-sample constant), and the interval holds only if the
	// class holds q.
	Linear      value.Linear
	ValueTarget value.Target
}

// The calibrations of KernelBellman.
const (
	FiniteSample = "finite-sample"
	SignFlip     = "sign-flip"
)

// kernelFlipStream is the PCG stream of the sign flips ("kb-flips").
const kernelFlipStream = 0x6b622d666c697073

// kbProblem is the tabular kernel Bellman problem of one log: the pairs
// (s, a) as columns p = s*nA + a, the visited ones with their row sums.
type kbProblem struct {
	nA, nP int
	gamma  float64
	n      int       // steps in the loss
	count  []float64 // n_x per pair (0: unvisited)
	sumR   []float64 // B_x = sum of the rewards logged at x
	// next holds, per visited pair, the target's next pairs with their
	// summed weights: row x of C = sum_{j at x} sum_a pi(a|s'_j) e_(s'_j, a).
	next  [][]pairWeight
	c     []float64      // (1 - gamma) times d0's mean of pi(.|s0), per pair
	known []bool         // pairs whose value is known (0: the absorbing state's)
	steps []kbStep       // the steps in the loss, episode by episode
	first []int          // steps[first[e]:first[e+1]] are episode e's
	start [][]pairWeight // per episode, the target's pairs at its first state
}

type pairWeight struct {
	p int
	w float64
}

type kbStep struct {
	x    int
	r    float64
	next []pairWeight // the target's next pairs, weights pi(a|s')
}

// Name returns "kernel-bellman".
func (KernelBellman) Name() string { return "kernel-bellman" }

// Estimand returns LongRun: the interval is on (1 - gamma) E_d0[V(s0)]
// (on real states at gamma = 1, the average reward).
func (KernelBellman) Estimand() Estimand { return LongRun }

// Bounds returns the interval on the long-run (discounted, normalised)
// value of the target on d at discount gamma < 1, or on real states at
// gamma = 1 its average reward.
func (k KernelBellman) Bounds(d *dataset.Dataset, gamma float64) (Bound, error) {
	const name = "kernel-bellman"
	lo, hi := k.RewardLow, k.RewardHigh
	if err := boundRange(name, lo, hi); err != nil {
		return Bound{}, err
	}
	if !(gamma > 0 && gamma <= 1) {
		return Bound{}, fmt.Errorf("%s: discount %v outside (0, 1]", name, gamma)
	}
	alpha, err := boundAlpha(name, k.Alpha)
	if err != nil {
		return Bound{}, err
	}
	if err := checkEpisodes(name, d); err != nil {
		return Bound{}, err
	}
	if !d.Discrete() {
		if gamma == 1 && d.NumTerminal() > 0 {
			return Bound{}, fmt.Errorf("%s: %d of %d episodes end in a terminal state: at gamma = 1 the long-run average of such a log is that of its absorbing state, not a value to bound", name, d.NumTerminal(), d.NumEpisodes())
		}
		return k.linearBounds(d, gamma, alpha)
	}
	if gamma == 1 {
		return Bound{}, fmt.Errorf("%s: discount 1: the tabular kernel Bellman interval needs gamma < 1 (at gamma = 1 the average reward's bias function has no range to state, and pairs the log never shows leave the value unbounded); on real states the linear class has the average-reward form", name)
	}
	if d.NumActions == 0 {
		return Bound{}, fmt.Errorf("%s: the tabular class needs discrete actions", name)
	}
	if err := rewardsWithin(name, d, lo, hi); err != nil {
		return Bound{}, err
	}
	pr, err := newKBProblem(d, gamma, k.Target)
	if err != nil {
		return Bound{}, fmt.Errorf("%s: %w", name, err)
	}
	qlo, qhi := lo/(1-gamma), hi/(1-gamma)
	delta := alpha / 2
	var lambda, d0 float64
	m := float64(d.NumEpisodes())
	b := Bound{Level: 1 - alpha, Method: name, Markov: true}
	switch k.Calibration {
	case "", FiniteSample:
		l := (hi - lo) / (1 - gamma)
		lambda = 2 * l * l * math.Log(2/delta) / float64(pr.n)
		d0 = (hi - lo) * math.Sqrt(math.Log(2/delta)/(2*m))
		b.Calibration, b.Guaranteed = FiniteSample, true
		b.Assumes = "rewards within the stated range, the Markov property (the class holds q: tabular), episodes independent of one another; a finite-sample guarantee"
	case SignFlip:
		if m < 10 {
			return Bound{}, fmt.Errorf("%s: %d episodes: the sign-flip calibration needs independent episodes, at least 10 (the finite-sample one holds for one long episode too)", name, d.NumEpisodes())
		}
		flips := k.Flips
		if flips == 0 {
			flips = 2000
		}
		qhat, err := pr.minimiser((qlo + qhi) / 2)
		if err != nil {
			return Bound{}, fmt.Errorf("%s: %w", name, err)
		}
		lambda = pr.flipQuantile(qhat, flips, k.Seed, 1-delta)
		d0 = distuv.UnitNormal.Quantile(1-delta/2) * pr.startSD(qhat) / math.Sqrt(m)
		b.Calibration = SignFlip
		b.Assumes = "the Markov property (the class holds q: tabular), independent episodes; asymptotic (sign flips of whole episodes), no finite-sample guarantee"
	default:
		return Bound{}, fmt.Errorf("%s: calibration %q: want %q or %q", name, k.Calibration, FiniteSample, SignFlip)
	}
	vlo, vhi, err := pr.valueRange(lambda, qlo, qhi)
	if err != nil {
		return Bound{}, fmt.Errorf("%s: %w", name, err)
	}
	b.Low = max(lo, vlo-d0)
	b.High = min(hi, vhi+d0)
	return b, nil
}

// valueRange returns the least and greatest c^T q over the q with
// L(q) <= lambda whose unvisited pairs lie in [qlo, qhi], the visited
// ones free (the closed form of KernelBellman's comment).
func (pr *kbProblem) valueRange(lambda, qlo, qhi float64) (lo, hi float64, err error) {
	u, err := pr.adjoint()
	if err != nil {
		return 0, 0, err
	}
	centre, norm := 0.0, 0.0
	for x, ux := range u {
		centre += ux * pr.sumR[x]
		norm += ux * ux
	}
	r := float64(pr.n) * math.Sqrt(lambda) * math.Sqrt(norm)
	lo, hi = centre-r, centre+r
	for _, gx := range pr.unvisitedGradient(u) {
		if gx != 0 {
			lo += min(gx*qlo, gx*qhi)
			hi += max(gx*qlo, gx*qhi)
		}
	}
	return lo, hi, nil
}

// newKBProblem gathers the steps of d (its absorbing state explicit and
// known to be worth 0) with the target's distribution at their next
// states.
func newKBProblem(d *dataset.Dataset, gamma float64, target *policy.Tabular) (*kbProblem, error) {
	if target == nil && !d.HasTargetProbs() {
		return nil, errors.New("needs the target's whole action distribution (target_prob_k columns or a target policy file)")
	}
	if target != nil && (target.NumActions() != d.NumActions || target.NumStates() < d.NumStates) {
		return nil, fmt.Errorf("target policy of %d states and %d actions, log of %d and %d", target.NumStates(), target.NumActions(), d.NumStates, d.NumActions)
	}
	absorbing := -1
	if d.NumTerminal() > 0 {
		absorbing = d.NumStates
		d = d.Absorbing(d.MaxLen())
	}
	nA := d.NumActions
	pr := &kbProblem{nA: nA, nP: d.NumStates * nA, gamma: gamma}
	pr.count = make([]float64, pr.nP)
	pr.sumR = make([]float64, pr.nP)
	pr.next = make([][]pairWeight, pr.nP)
	pr.c = make([]float64, pr.nP)
	pr.known = make([]bool, pr.nP)
	if absorbing >= 0 {
		for a := range nA {
			pr.known[absorbing*nA+a] = true
		}
	}
	probs := func(s int, row []float64) []pairWeight {
		var out []pairWeight
		for a := range nA {
			p := 0.0
			if target != nil {
				p = target.Prob(s, a)
			} else {
				p = row[a]
			}
			if p > 0 && !pr.known[s*nA+a] {
				out = append(out, pairWeight{s*nA + a, p})
			}
		}
		return out
	}
	m := float64(d.NumEpisodes())
	pr.first = append(pr.first, 0)
	for e := range d.NumEpisodes() {
		first, end := d.Span(e)
		s0 := probs(int(d.State[first]), d.TargetProbsAt(first))
		for _, pw := range s0 {
			pr.c[pw.p] += (1 - gamma) * pw.w / m
		}
		pr.start = append(pr.start, s0)
		for j := first; j < end; j++ {
			s := int(d.State[j])
			if s == absorbing {
				continue // its residual is 0 for the true q
			}
			sn, ok := d.NextState(e, j)
			if !ok {
				continue // the target's next step is unknown: left out of the loss
			}
			var nxt []pairWeight
			if sn != absorbing {
				var row []float64
				if target == nil {
					if row, ok = d.NextTargetProbs(e, j); !ok {
						continue
					}
				}
				nxt = probs(sn, row)
			}
			x := s*nA + int(d.Action[j])
			pr.steps = append(pr.steps, kbStep{x: x, r: d.Reward[j], next: nxt})
			pr.count[x]++
			pr.sumR[x] += d.Reward[j]
		}
		pr.first = append(pr.first, len(pr.steps))
	}
	pr.n = len(pr.steps)
	if pr.n == 0 {
		return nil, errors.New("no step with a known next state and target distribution there")
	}
	acc := make(map[int]float64)
	// Row x of C, merged over the steps at x.
	byPair := make([][]int, pr.nP)
	for i, st := range pr.steps {
		byPair[st.x] = append(byPair[st.x], i)
	}
	for x, idx := range byPair {
		if len(idx) == 0 {
			continue
		}
		clear(acc)
		for _, i := range idx {
			for _, pw := range pr.steps[i].next {
				acc[pw.p] += pw.w
			}
		}
		row := make([]pairWeight, 0, len(acc))
		for p, w := range acc {
			row = append(row, pairWeight{p, w})
		}
		slices.SortFunc(row, func(a, b pairWeight) int { return a.p - b.p })
		pr.next[x] = row
	}
	return pr, nil
}

// visited reports whether pair x is a variable of the loss.
func (pr *kbProblem) visited(x int) bool { return pr.count[x] > 0 }

// adjoint returns u = N_V^-T c_V (zero off V): with z = D u it solves
// z = c_V + gamma P^T z, P = D^-1 C_VV substochastic, by fixed-point
// iteration, which contracts by gamma in the L1 norm.
func (pr *kbProblem) adjoint() ([]float64, error) {
	z := make([]float64, pr.nP)
	nz := make([]float64, pr.nP)
	for x := range pr.nP {
		if pr.visited(x) {
			z[x] = pr.c[x]
		}
	}
	for it := 0; ; it++ {
		for x := range pr.nP {
			if pr.visited(x) {
				nz[x] = pr.c[x]
			}
		}
		for x, row := range pr.next {
			if !pr.visited(x) || z[x] == 0 {
				continue
			}
			f := pr.gamma * z[x] / pr.count[x]
			for _, pw := range row {
				if pr.visited(pw.p) {
					nz[pw.p] += f * pw.w
				}
			}
		}
		diff := 0.0
		for x := range z {
			diff += math.Abs(nz[x] - z[x])
		}
		z, nz = nz, z
		if diff <= 1e-15 {
			break
		}
		if it > 1e6 {
			return nil, fmt.Errorf("adjoint solve did not converge (L1 change %.3g)", diff)
		}
	}
	for x := range z {
		if pr.visited(x) {
			z[x] /= pr.count[x]
		}
	}
	return z, nil
}

// unvisitedGradient returns g_U = c_U - N_U^T u: N_U's entries are
// -gamma C_xy for y unvisited, so g_y = c_y + gamma sum_x u_x C_xy.
func (pr *kbProblem) unvisitedGradient(u []float64) []float64 {
	g := make([]float64, pr.nP)
	for y := range pr.nP {
		if !pr.visited(y) && !pr.known[y] {
			g[y] = pr.c[y]
		}
	}
	for x, row := range pr.next {
		if u[x] == 0 {
			continue
		}
		for _, pw := range row {
			if !pr.visited(pw.p) {
				g[pw.p] += pr.gamma * u[x] * pw.w
			}
		}
	}
	return g
}

// minimiser returns a q with L(q) = 0: the unvisited pairs at fill, the
// visited ones solving N_V q_V = B - N_U q_U, q = D^-1 (B + gamma C q)
// iterated (a gamma-contraction in the sup norm).
func (pr *kbProblem) minimiser(fill float64) ([]float64, error) {
	q := make([]float64, pr.nP)
	for x := range q {
		if !pr.visited(x) && !pr.known[x] {
			q[x] = fill
		}
	}
	nq := slices.Clone(q)
	for it := 0; ; it++ {
		diff := 0.0
		for x, row := range pr.next {
			if !pr.visited(x) {
				continue
			}
			s := pr.sumR[x]
			for _, pw := range row {
				s += pr.gamma * pw.w * q[pw.p]
			}
			nq[x] = s / pr.count[x]
			diff = max(diff, math.Abs(nq[x]-q[x]))
		}
		for x := range q {
			if pr.visited(x) {
				q[x] = nq[x]
			}
		}
		if diff <= 1e-13*max(1, math.Abs(fill)) {
			return q, nil
		}
		if it > 1e6 {
			return nil, fmt.Errorf("value solve did not converge (change %.3g)", diff)
		}
	}
}

// residual returns R_j(q) of step st.
func (pr *kbProblem) residual(st kbStep, q []float64) float64 {
	r := st.r - q[st.x]
	for _, pw := range st.next {
		r += pr.gamma * pw.w * q[pw.p]
	}
	return r
}

// loss returns the empirical kernel Bellman loss L(q) (a V-statistic).
func (pr *kbProblem) loss(q []float64) float64 {
	s := make([]float64, pr.nP)
	for _, st := range pr.steps {
		s[st.x] += pr.residual(st, q)
	}
	l := 0.0
	for _, v := range s {
		l += v * v
	}
	n := float64(pr.n)
	return l / (n * n)
}

// flipQuantile returns the level quantile of ||(1/n) sum_e eps_e zeta_e||^2
// over flips random signs of whole episodes.
func (pr *kbProblem) flipQuantile(q []float64, flips int, seed uint64, level float64) float64 {
	res := make([]float64, pr.n)
	for i, st := range pr.steps {
		res[i] = pr.residual(st, q)
	}
	rng := rand.New(rand.NewPCG(seed, kernelFlipStream))
	s := make([]float64, pr.nP)
	vals := make([]float64, flips)
	n := float64(pr.n)
	ne := len(pr.first) - 1
	for f := range flips {
		clear(s)
		for e := range ne {
			sign := 1.0
			if rng.Uint64()&1 == 0 {
				sign = -1
			}
			for i := pr.first[e]; i < pr.first[e+1]; i++ {
				s[pr.steps[i].x] += sign * res[i]
			}
		}
		l := 0.0
		for _, v := range s {
			l += v * v
		}
		vals[f] = l / (n * n)
	}
	return upperQuantile(vals, level)
}

// upperQuantile returns the level quantile of vals (sorted in place): the
// smallest value at least a share level of them do not exceed.
func upperQuantile(vals []float64, level float64) float64 {
	slices.Sort(vals)
	k := int(math.Ceil(level*float64(len(vals)))) - 1
	return vals[max(0, min(k, len(vals)-1))]
}

// startSD returns the standard deviation over episodes of
// (1 - gamma) sum_a pi(a|s0) q(s0, a), from c's per-episode parts.
func (pr *kbProblem) startSD(q []float64) float64 {
	if len(pr.start) < 2 {
		return 0
	}
	v := make([]float64, len(pr.start))
	for e, st := range pr.start {
		for _, pw := range st {
			v[e] += (1 - pr.gamma) * pw.w * q[pw.p]
		}
	}
	return stat.StdDev(v, nil)
}

// linearBounds is the interval of the linear class on real states: the
// loss ||b - A theta||^2 (value.BellmanStats) is 0 at theta* = A^-1 b, so
// the range of c^T theta over L(theta) <= lambda is
// c^T theta* -+ sqrt(lambda) ||A^-T c||, lambda the (1 - alpha/2)
// quantile of ||sum_e eps_e zeta_e||^2 over sign flips of whole
// episodes, and d0's term a normal quantile of the episodes' start
// values. At gamma = 1 the unknowns are theta and the average reward rho
// (value.BellmanStats: the bordered system whose last row fixes the
// differential q's constant), the interval is rho* -+ sqrt(lambda) ||u||
// over u's loss rows, and there is no start term: all of alpha goes to
// the loss.
func (k KernelBellman) linearBounds(d *dataset.Dataset, gamma, alpha float64) (Bound, error) {
	const name = "kernel-bellman"
	if d.ActionDim > 0 && k.ValueTarget.Continuous == nil {
		return Bound{}, fmt.Errorf("%s: on real actions the linear class needs actions drawn from the target at the logged states (--target-draws)", name)
	}
	m, err := k.Linear.FitLinear(d, gamma, k.ValueTarget)
	if err != nil {
		return Bound{}, fmt.Errorf("%s: %w", name, err)
	}
	st, err := m.BellmanStats(d)
	if err != nil {
		return Bound{}, fmt.Errorf("%s: %w", name, err)
	}
	centre := 0.0
	for i, c := range st.C {
		centre += c * st.Theta[i]
	}
	delta := alpha / 2
	if gamma == 1 {
		delta = alpha
	}
	flips := k.Flips
	if flips == 0 {
		flips = 2000
	}
	rng := rand.New(rand.NewPCG(k.Seed, kernelFlipStream))
	vals := make([]float64, flips)
	sum := make([]float64, st.Rows)
	for f := range vals {
		clear(sum)
		for _, z := range st.Zeta {
			sign := 1.0
			if rng.Uint64()&1 == 0 {
				sign = -1
			}
			for i, v := range z {
				sum[i] += sign * v
			}
		}
		for _, v := range sum {
			vals[f] += v * v
		}
	}
	lambda := upperQuantile(vals, 1-delta)
	// Only the loss's rows move within the ball; a row after them (the
	// normalisation of the differential q at gamma = 1) holds exactly.
	r := math.Sqrt(lambda) * floats.Norm(st.U[:st.Rows], 2)
	nm := float64(len(st.Start))
	sd := 0.0
	if nm > 1 {
		sd = stat.StdDev(st.Start, nil)
	}
	d0 := distuv.UnitNormal.Quantile(1-delta/2) * sd / math.Sqrt(nm)
	lo, hi := k.RewardLow, k.RewardHigh
	return Bound{Low: max(lo, centre-r-d0), High: min(hi, centre+r+d0), Level: 1 - alpha, Method: name, Calibration: SignFlip, Markov: true,
		Assumes: fmt.Sprintf("no guarantee unless the class holds q (linear in %d polynomial features); independent episodes; asymptotic (sign flips of whole episodes)", st.Rows)}, nil
}
