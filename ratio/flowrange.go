package ratio

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/kernelloss"
)

// FlowRange is the identification range of a ratio class on a log: the
// least and greatest estimate over the ratios of the class that the flow
// test does not reject (FlowTest.Range).
type FlowRange struct {
	// Low and High are the least and greatest estimate, NaN when Empty.
	Low, High float64
	// Lambda is the test's threshold on the loss, MinLoss the least loss
	// of a ratio of the class.
	Lambda, MinLoss float64
	// Empty says that no ratio of the class passes: the class cannot
	// hold the ratio of this log.
	Empty bool
	// Units is the number of episodes (or blocks of one episode) whose
	// signs were flipped.
	Units int
}

// Range returns the identification range of bch-kernel's class on the
// episodes of d at discount gamma: the least and greatest
//
//	R(theta) = sum_j v_j r_j / sum_j v_j,   v_j = gamma^t beta_j w(s_j)
//
// (an episode's last step times Dataset.DiscountTail), the estimate
// bch-kernel forms, over the ratios w = theta^T phi of m's class (m's
// constant and Gaussian bumps, weights theta >= 0, mean 1 over the logged
// states) whose flow loss
//
//	L(theta) = || (1/n) sum_e g_e(theta) ||^2,   g_e as in FlowTest
//
// is at most lambda, the (1 - alpha) quantile of the loss with the signs
// of the n episodes' g_e flipped at random (Run's features and flips),
// taken at m's own fit. It is the test's inversion, with no ridge: the
// ratios the log cannot reject. A range much wider than an estimate's
// interval says the estimate rests on the learner's smoothing, not on the
// log. It is not a confidence interval: the class may not hold the
// ratio, and the threshold is asymptotic (on the 1-d linear-Gaussian
// system at gamma = 1, alpha = 0.05, it held the average reward on 20 of
// 20 logs of 40 episodes and of one episode, 1.6 times as wide as
// bch-kernel's bootstrap interval; TestFlowRangeCovers).
//
// The loss is quadratic in theta (g_e is affine: the dummy transitions at
// gamma < 1 give its constant) and the class a bounded polytope (every
// feature is positive), so each end is a small convex programme:
// Dinkelbach's iteration on the ratio R, each step the least linear
// function over the class within the loss's bound, found through its
// Lagrangian (kernelloss's active-set programme with a bisection on the
// multiplier).
func (f FlowTest) Range(d *dataset.Dataset, gamma float64, m *KernelModel, alpha float64) (FlowRange, error) {
	if !(alpha > 0 && alpha < 1) {
		return FlowRange{}, fmt.Errorf("ratio: level alpha %v outside (0, 1)", alpha)
	}
	if d.StateDim != m.Dim() {
		return FlowRange{}, fmt.Errorf("ratio: states of dimension %d, the model's are %d", d.StateDim, m.Dim())
	}
	ft, err := newFlowTransitions(d, gamma)
	if err != nil {
		return FlowRange{}, err
	}
	rng := f.rng()
	newPsi, D, err := f.features(rng, ft)
	if err != nil {
		return FlowRange{}, err
	}
	bm := m.bumps()
	P := bm.size()
	newPhi := func() func(obs, dst []float64) {
		// A transition's next state is the next one's state (the same
		// memory), so the last state's features are kept: most states'
		// bumps are formed once a pass.
		xs, last, lastPhi := make([]float64, m.Dim()), (*float64)(nil), make([]float64, P)
		return func(obs, dst []float64) {
			if &obs[0] == last {
				copy(dst, lastPhi)
				return
			}
			for k, v := range obs {
				xs[k] = (v - m.Mean[k]) / m.Scale[k]
			}
			bm.features(xs, dst)
			last = &obs[0]
			copy(lastPhi, dst)
		}
	}
	// One pass: sum_e g_e(theta) = c - A theta; e, the rho-weighted mean
	// of phi over the logged states (w's mean is e^T theta); and, for the
	// threshold, each unit's g_e at the learner's own fit m, as Run forms
	// it: g_e = (C_e + W_e / z) / n, C_e the dummies' constant part, W_e
	// the part in w_m, z the mean of w_m. The units (an episode's
	// transitions, or a block's, come together in ft) are dealt to
	// kernelloss.Groups partial sums, added in a fixed order, so the sums
	// do not depend on the goroutines; a unit's C_e and W_e are written by
	// its group alone. A gathers chunks of transitions: A += X^T Rows a
	// chunk, X's rows the rho-weighted psi(s') and Rows' phi(s') - beta
	// phi(s) (phi(s_0) for a dummy), one matrix product a chunk.
	spans := make([]int, ft.units+1)
	for _, u := range ft.unit {
		spans[u+1]++
	}
	for u := range ft.units {
		spans[u+1] += spans[u]
	}
	type part struct {
		A       *mat.Dense
		c, mean []float64
		zw, zm  float64
	}
	parts := make([]part, kernelloss.Groups)
	C, W := make([]float64, ft.units*D), make([]float64, ft.units*D)
	kernelloss.Parallel(runtime.GOMAXPROCS(0), func(g int) {
		psi, phi := newPsi(), newPhi()
		pt := part{A: mat.NewDense(D, P, nil), c: make([]float64, D), mean: make([]float64, P)}
		var prod mat.Dense
		ps, pn, x := make([]float64, P), make([]float64, P), make([]float64, D)
		X, Rows := mat.NewDense(flowChunk, D, nil), mat.NewDense(flowChunk, P, nil)
		k := 0
		flush := func() {
			if k > 0 {
				prod.Mul(X.Slice(0, k, 0, D).T(), Rows.Slice(0, k, 0, P))
				pt.A.Add(pt.A, &prod)
				k = 0
			}
		}
		for u := g; u < ft.units; u += kernelloss.Groups {
			cu, wu := C[u*D:(u+1)*D], W[u*D:(u+1)*D]
			for i := spans[u]; i < spans[u+1]; i++ {
				psi(ft.next[i], x)
				row := Rows.RawRowView(k)
				if ft.dummy[i] { // Delta = 1 - w(s_0)
					floats.AddScaled(pt.c, ft.rho[i], x)
					floats.AddScaled(cu, ft.rho[i], x)
					phi(ft.next[i], row)
					floats.AddScaled(wu, -ft.rho[i]*floats.Dot(row, m.Coef), x)
				} else { // Delta = beta w(s) - w(s')
					phi(ft.s[i], ps)
					floats.AddScaled(pt.mean, ft.rho[i], ps)
					ws := floats.Dot(ps, m.Coef)
					pt.zw += ft.rho[i]
					pt.zm += ft.rho[i] * ws
					phi(ft.next[i], pn)
					floats.AddScaledTo(row, pn, -ft.beta[i], ps)
					floats.AddScaled(wu, ft.rho[i]*(ft.beta[i]*ws-floats.Dot(pn, m.Coef)), x)
				}
				floats.ScaleTo(X.RawRowView(k), ft.rho[i], x)
				if k++; k == flowChunk {
					flush()
				}
			}
		}
		flush()
		parts[g] = pt
	})
	n := float64(ft.units)
	A := mat.NewDense(D, P, nil)
	c := make([]float64, D)
	mean := make([]float64, P)
	var zw, zm float64
	for _, pt := range parts {
		A.Add(A, pt.A)
		floats.Add(c, pt.c)
		floats.Add(mean, pt.mean)
		zw += pt.zw
		zm += pt.zm
	}
	floats.Scale(1/zw, mean)
	A.Scale(1/n, A)
	floats.Scale(1/n, c)
	G := C
	floats.AddScaled(G, zw/zm, W)
	floats.Scale(1/n, G)
	cp := newClassProgramme(A, c, mean)
	centre, err := cp.minimise(make([]float64, P), 1, nil)
	if err != nil {
		return FlowRange{}, fmt.Errorf("ratio: the least-loss ratio of the class: %w", err)
	}
	// The threshold: the flips' quantile of the loss at the learner's own
	// fit.
	flips := f.flips()
	losses := make([]float64, flips)
	sum := make([]float64, D)
	for b := range losses {
		clear(sum)
		for u := range ft.units {
			sign := 1.0
			if rng.Uint64()&1 == 0 {
				sign = -1
			}
			floats.AddScaled(sum, sign, G[u*D:(u+1)*D])
		}
		losses[b] = floats.Dot(sum, sum)
	}
	slices.Sort(losses)
	out := FlowRange{Lambda: losses[min(flips-1, int(math.Ceil((1-alpha)*float64(flips)))-1)], MinLoss: cp.loss(centre), Units: ft.units}
	if !cp.feasible(centre, out.Lambda) {
		out.Empty, out.Low, out.High = true, math.NaN(), math.NaN()
		return out, nil
	}
	// R(theta) = a^T theta / b^T theta: the estimate's sums per feature,
	// the steps' v_j scaled by their largest log(gamma^t beta_j).
	a, b, err := estimateSums(d, gamma, newPhi, P)
	if err != nil {
		return FlowRange{}, err
	}
	lo, hi, err := cp.fractionalRange(a, b, out.Lambda, centre)
	if err != nil {
		return FlowRange{}, fmt.Errorf("ratio: the identification range: %w", err)
	}
	out.Low, out.High = lo.value, hi.value
	return out, nil
}

// flowChunk is the number of transitions in one of the range's matrix
// products.
const flowChunk = 256

// estimateSums returns a = sum_j v_j r_j phi(s_j) and b = sum_j v_j
// phi(s_j), v_j = gamma^t beta_j (times DiscountTail at an episode's last
// step) over their largest log, so that R(theta) = a^T theta / b^T theta.
func estimateSums(d *dataset.Dataset, gamma float64, newPhi func() func(obs, dst []float64), P int) (a, b []float64, err error) {
	lg := math.Log(gamma)
	top := math.Inf(-1)
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			top = math.Max(top, d.LogRatio(j)+float64(j-lo)*lg)
		}
	}
	if math.IsInf(top, -1) {
		return nil, nil, errors.New("ratio: every logged action has target probability 0")
	}
	// Per group of episodes (episode e in group e mod Groups), added in
	// order.
	pa, pb := make([][]float64, kernelloss.Groups), make([][]float64, kernelloss.Groups)
	kernelloss.Parallel(runtime.GOMAXPROCS(0), func(g int) {
		phi := newPhi()
		a, b, f := make([]float64, P), make([]float64, P), make([]float64, P)
		for e := g; e < d.NumEpisodes(); e += kernelloss.Groups {
			lo, hi := d.Span(e)
			for j := lo; j < hi; j++ {
				v := math.Exp(d.LogRatio(j) + float64(j-lo)*lg - top)
				if j == hi-1 {
					v *= d.DiscountTail(e, gamma)
				}
				if v == 0 {
					continue
				}
				phi(d.ObsAt(j), f)
				floats.AddScaled(a, v*d.Reward[j], f)
				floats.AddScaled(b, v, f)
			}
		}
		pa[g], pb[g] = a, b
	})
	a, b = make([]float64, P), make([]float64, P)
	for g := range pa {
		floats.Add(a, pa[g])
		floats.Add(b, pb[g])
	}
	return a, b, nil
}

// classProgramme is the range's convex programme over bch-kernel's
// class: theta >= 0 with e^T theta = 1 (nonnegative weights on the
// constant and the bumps, w of mean 1 over the logged states: a bounded
// set, as every feature is positive), the flow loss L(theta) =
// ||c - A theta||^2 = theta^T Q theta - 2 (A^T c)^T theta + c^T c.
type classProgramme struct {
	q, atc, e []float64
	cc        float64
}

func newClassProgramme(A *mat.Dense, c, e []float64) *classProgramme {
	_, P := A.Dims()
	var Q mat.Dense
	Q.Mul(A.T(), A)
	atc := mat.NewVecDense(P, nil)
	atc.MulVec(A.T(), mat.NewVecDense(len(c), c))
	return &classProgramme{q: Q.RawMatrix().Data, atc: atc.RawVector().Data, e: e, cc: floats.Dot(c, c)}
}

// feasible reports whether L(theta) <= lambda, up to the rounding of
// L's expanded form (a relative 1e-12 of c^T c).
func (cp *classProgramme) feasible(theta []float64, lambda float64) bool {
	return cp.loss(theta) <= lambda+1e-12*cp.cc
}

// loss returns L(theta).
func (cp *classProgramme) loss(theta []float64) float64 {
	P := len(theta)
	l := cp.cc - 2*floats.Dot(cp.atc, theta)
	for i, v := range theta {
		l += v * floats.Dot(cp.q[i*P:(i+1)*P], theta)
	}
	return math.Max(0, l)
}

// rangeRidge is the relative ridge that keeps the programme's free
// coefficients' matrix invertible where the log leaves features unseen.
const rangeRidge = 1e-9

// minimise returns the least g^T theta + mu L(theta) over the class (mu
// > 0): the active-set programme of kernelloss with linear term A^T c -
// g / (2 mu), started from start (nil: the constant alone).
func (cp *classProgramme) minimise(g []float64, mu float64, start []float64) ([]float64, error) {
	lin := slices.Clone(cp.atc)
	floats.AddScaled(lin, -1/(2*mu), g)
	qp, err := kernelloss.NewQPMatrix(cp.q, lin, cp.e, nil)
	if err != nil {
		return nil, err
	}
	theta, _, err := qp.Solve(rangeRidge, false, start)
	return theta, err
}

// vertex returns the least g^T theta over the class without the loss:
// the vertex theta = e_p / e_p[p] of the least g_p / e_p.
func (cp *classProgramme) vertex(g []float64) []float64 {
	best := 0
	for p := range g {
		if g[p]/cp.e[p] < g[best]/cp.e[best] {
			best = p
		}
	}
	theta := make([]float64, len(g))
	theta[best] = 1 / cp.e[best]
	return theta
}

// minLinear returns a theta of the class with L(theta) <= lambda and the
// least g^T theta there (to the bisection's precision, from the feasible
// side): the vertex if it is feasible, else the minimiser of g^T theta +
// mu L(theta) at the least mu whose minimiser is feasible (Lagrange
// duality: the loss's constraint is active, and L falls as mu grows).
func (cp *classProgramme) minLinear(g []float64, lambda float64, start []float64) ([]float64, error) {
	if v := cp.vertex(g); cp.feasible(v, lambda) {
		return v, nil
	}
	gs := 0.0
	for _, v := range g {
		gs = math.Max(gs, math.Abs(v))
	}
	if gs == 0 {
		return start, nil
	}
	// Bracket the least feasible multiplier: hi feasible, lo not.
	mu := gs / math.Max(lambda, 1e-300)
	var feasible []float64
	lo, hi := 0.0, 0.0
	for range 400 {
		th, err := cp.minimise(g, mu, start)
		if err != nil {
			return nil, err
		}
		if cp.feasible(th, lambda) {
			feasible, hi = th, mu
			if lo > 0 {
				break
			}
			mu /= 4
		} else {
			lo = mu
			if hi > 0 {
				break
			}
			mu *= 4
		}
	}
	if feasible == nil || lo == 0 {
		// The bound is the least loss itself, to rounding (a log the
		// constant ratio fits exactly: the target is the behavior):
		// the start, a least-loss ratio, is all the class allows.
		return start, nil
	}
	for range 60 {
		if hi/lo < 1+1e-9 {
			break
		}
		mid := math.Sqrt(lo * hi)
		th, err := cp.minimise(g, mid, feasible)
		if err != nil {
			return nil, err
		}
		if cp.feasible(th, lambda) {
			hi, feasible = mid, th
		} else {
			lo = mid
		}
	}
	return feasible, nil
}

// rangeEnd is an end of the range and the ratio that attains it.
type rangeEnd struct {
	value float64
	theta []float64
}

// fractionalRange returns the least and greatest a^T theta / b^T theta
// over the class's ratios with L(theta) <= lambda (b^T theta > 0 there:
// every feature is positive), by Dinkelbach's iteration from centre, a
// feasible ratio: t <- R(theta_t), theta_t the least (a - t b)^T theta
// (the greatest, for the upper end), until no ratio improves on t.
func (cp *classProgramme) fractionalRange(a, b []float64, lambda float64, centre []float64) (lo, hi rangeEnd, err error) {
	R := func(theta []float64) float64 { return floats.Dot(a, theta) / floats.Dot(b, theta) }
	g := make([]float64, len(a))
	end := func(sign float64) (rangeEnd, error) {
		t, theta := R(centre), centre
		for range 50 {
			// sign (a - t b): the least of it is the least R (sign 1)
			// or the greatest (sign -1).
			floats.AddScaledTo(g, a, -t, b)
			floats.Scale(sign, g)
			th, err := cp.minLinear(g, lambda, theta)
			if err != nil {
				return rangeEnd{}, err
			}
			next := R(th)
			if sign*(next-t) >= -1e-12*math.Max(1, math.Abs(t)) {
				break
			}
			t, theta = next, th
		}
		return rangeEnd{t, theta}, nil
	}
	if lo, err = end(1); err != nil {
		return rangeEnd{}, rangeEnd{}, err
	}
	hi, err = end(-1)
	return lo, hi, err
}
