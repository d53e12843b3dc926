package value

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/ihope-ope/ihope/dataset"
)

// projectedScores is Select's criterion: the held-out projected Bellman
// error of every candidate onto a rich test class F, estimated without
// the double-sampling term.
//
// F is the span of the polynomial features of the largest degree the
// default candidates allow on d (Linear's features, see LinearCandidates).
// For a candidate's cross-fitted residuals delta_j (see Select) the
// criterion is
//
//	||Pi_F (B q - q)||^2 = E[phi delta]^T Sigma^-1 E[phi delta],   Sigma = E[phi phi^T],
//
// the squared norm of the Bellman error's projection on F. It bounds
// what the estimate depends on: the value error of q is E_mu[w (B q - q)]
// for the density ratio w (Uehara, Huang and Jiang 2020, Lemma 1 of
// MQL), so that |error| <= ||w||_mu ||Pi_F (B q - q)|| when w is in F.
// The residual enters linearly, so the estimate
//
//	U = sum_k sum_{e != f in fold k} g_e^T Sigma^-1 g_f / sum_k (N_k^2 - sum_{e in k} n_e^2),   g_e = sum_{j in e} phi_j delta_j,
//
// a U-statistic over pairs of distinct episodes held out in one fold
// (copies of an episode in a resample are one; n_e steps of episode e,
// N_k of fold k), is unbiased for it given each fold's model (see score):
// no conditional variance of
// r + gamma v(s') enters, unlike the held-out squared TD residual, whose
// variance term rewards candidates with a flat v (the flaw that BVFT,
// Xie and Jiang 2021, and LSTD-Tournament, Liu et al. 2025, remove by
// projecting on pairs of candidates; here the projection is on one class
// that holds them all). Its standard error is the jackknife over
// episodes. Sigma is estimated on all of d, with a ridge of 1e-8 of its
// mean diagonal for features collinear on every state (Pendulum's
// cos^2 + sin^2 = 1).
type projectedScores struct {
	f      *linFeatures
	l      []*mat.TriDense // Cholesky factor of Sigma per block of phi
	groups map[string]int  // episode id -> group
	fold   []int           // the fold that holds each group out
	K      int             // folds
}

// groupSums are a candidate's held-out sums per group (episode id):
// g[group] = sum_j phi_j delta_j over its steps with a next state, n
// their number.
type groupSums struct {
	g [][]float64
	n []float64
}

// newProjectedScores builds F and Sigma on d, whose episode e is held out
// in fold[e] (selectFolds).
func newProjectedScores(d *dataset.Dataset, fold []int) (*projectedScores, error) {
	deg := 2
	for _, c := range LinearCandidates(d, false) {
		deg = max(deg, c.Learner.(Linear).Degree)
	}
	f, err := newLinFeatures(d, featureSpec{kind: "poly", degree: deg})
	if err != nil {
		return nil, err
	}
	nb := max(f.numActions, 1)
	P := f.P
	const batch = 256
	bufs := make([][]float64, nb)
	rows := make([]int, nb)
	sig := make([][]float64, nb)
	for b := range nb {
		bufs[b], sig[b] = make([]float64, batch*P), make([]float64, P*P)
	}
	flush := func(b int) {
		if rows[b] == 0 {
			return
		}
		blas64.Syrk(blas.Trans, 1, blas64.General{Rows: rows[b], Cols: P, Stride: P, Data: bufs[b][:rows[b]*P]}, 1,
			blas64.Symmetric{N: P, Stride: P, Data: sig[b], Uplo: blas.Upper})
		rows[b] = 0
	}
	sc := f.newScratch(realTarget{})
	for j := range d.NumSteps() {
		b := f.stateAction(sc.x, sc, d, j)
		copy(bufs[b][rows[b]*P:], sc.x)
		if rows[b]++; rows[b] == batch {
			flush(b)
		}
	}
	ps := &projectedScores{f: f, l: make([]*mat.TriDense, nb), groups: map[string]int{}}
	var trace float64
	inv := 1 / float64(max(d.NumSteps(), 1))
	for b := range nb {
		flush(b)
		for i := range sig[b] {
			sig[b][i] *= inv // the mean, so that a score is in squared reward units
		}
		for i := range P {
			trace += sig[b][i*P+i]
		}
	}
	ridge := 1e-8 * trace / float64(nb*P)
	if !(ridge > 0) {
		ridge = 1e-12
	}
	for b := range nb {
		for i := range P {
			sig[b][i*P+i] += ridge
		}
		var c mat.Cholesky
		if !c.Factorize(mat.NewSymDense(P, sig[b])) {
			return nil, errors.New("value: select: the test features' second moment is not positive definite")
		}
		ps.l[b] = new(mat.TriDense)
		c.LTo(ps.l[b])
	}
	for _, e := range d.IDOrder() {
		if _, ok := ps.groups[d.IDs[e]]; !ok {
			ps.groups[d.IDs[e]] = len(ps.groups)
			ps.fold = append(ps.fold, fold[e])
			ps.K = max(ps.K, fold[e]+1)
		}
	}
	return ps, nil
}

// newSums returns zero sums, one vector of phi's length per group.
func (ps *projectedScores) newSums() groupSums {
	s := groupSums{g: make([][]float64, len(ps.fold)), n: make([]float64, len(ps.fold))}
	for i := range s.g {
		s.g[i] = make([]float64, len(ps.l)*ps.f.P)
	}
	return s
}

// accumulate adds a fold's residuals to s: g[group of j] += phi_j
// delta_j over the held-out steps j of held with a known next state
// (delta not NaN).
func (ps *projectedScores) accumulate(s groupSums, held *dataset.Dataset, delta []float64) {
	P := ps.f.P
	sc := ps.f.newScratch(realTarget{})
	for e := range held.NumEpisodes() {
		grp := ps.groups[held.IDs[e]]
		lo, hi := held.Span(e)
		for j := lo; j < hi; j++ {
			if math.IsNaN(delta[j]) {
				continue
			}
			b := ps.f.stateAction(sc.x, sc, held, j)
			dst := s.g[grp][b*P : (b+1)*P]
			for i, x := range sc.x {
				dst[i] += delta[j] * x
			}
			s.n[grp]++
		}
	}
}

// score returns the U-statistic of the groups' sums g and its jackknife
// standard error (see projectedScores): the pairs are those of distinct
// episodes within one fold, whose residuals come from one model fitted
// on other episodes, so that given the model they are independent.
// Pairs across folds are not: each model was fitted on the other's
// episode, and their products are biased downwards by about the number
// of features over the number of steps (on the linear-Gaussian systems
// every degree above 2 scored below 0, the more so the higher).
func (ps *projectedScores) score(s groupSums) (score, se float64) {
	P := ps.f.P
	nb := len(ps.l)
	m := len(s.g)
	K := ps.K
	h := make([][]float64, m) // the groups' whitened sums, L^-1 g_e
	H := make([][]float64, K) // per fold: the sum of its groups' whitened sums
	for k := range H {
		H[k] = make([]float64, nb*P)
	}
	S, N, Q := make([]float64, K), make([]float64, K), make([]float64, K)
	self := make([]float64, m) // ||h_e||^2
	for e, ge := range s.g {
		h[e] = make([]float64, nb*P)
		for b := range nb {
			v := mat.NewVecDense(P, h[e][b*P:(b+1)*P])
			if err := v.SolveVec(ps.l[b], mat.NewVecDense(P, ge[b*P:(b+1)*P])); err != nil {
				return math.NaN(), math.NaN()
			}
		}
		k := ps.fold[e]
		for i, x := range h[e] {
			H[k][i] += x
			self[e] += x * x
		}
		S[k] += self[e]
		N[k] += s.n[e]
		Q[k] += s.n[e] * s.n[e]
	}
	sq := func(a []float64) float64 {
		s := 0.0
		for _, x := range a {
			s += x * x
		}
		return s
	}
	var U, den float64
	u := make([]float64, K)
	for k := range K {
		u[k] = sq(H[k]) - S[k]
		U += u[k]
		den += N[k]*N[k] - Q[k]
	}
	if !(den > 0) {
		return math.NaN(), math.NaN()
	}
	score = U / den
	if m < 3 {
		return score, math.NaN()
	}
	loo := make([]float64, m)
	for e := range m {
		k, n := ps.fold[e], s.n[e]
		var rest float64
		for i, x := range H[k] {
			r := x - h[e][i]
			rest += r * r
		}
		uk := rest - (S[k] - self[e])
		dk := (N[k]-n)*(N[k]-n) - (Q[k] - n*n)
		loo[e] = (U - u[k] + uk) / (den - (N[k]*N[k] - Q[k]) + dk)
	}
	return score, jackknifeSE(loo)
}

// jackknifeSE is the jackknife standard error of an estimate from its
// leave-one-out values, sqrt((m-1)/m sum (loo - mean)^2).
func jackknifeSE(loo []float64) float64 {
	m := float64(len(loo))
	var mean, ss float64
	for _, l := range loo {
		mean += l / m
	}
	for _, l := range loo {
		ss += (l - mean) * (l - mean)
	}
	return math.Sqrt(ss * (m - 1) / m)
}
