package value

import (
	"fmt"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
)

// monomials are the monomials of degree at most D in n variables, the
// constant first, then by degree: term m >= 1 is term parent[m] times
// z[variable[m]], with the variables of a monomial in non-decreasing
// order, so that each monomial appears once and evaluating all of them
// costs one multiplication each.
type monomials struct {
	parent, variable []int32
}

func newMonomials(n, degree int) monomials {
	m := monomials{parent: []int32{-1}, variable: []int32{0}}
	lo, hi := 0, 1 // the terms of the previous degree
	for range degree {
		for t := lo; t < hi; t++ {
			for v := int(m.variable[t]); v < n; v++ {
				m.parent = append(m.parent, int32(t))
				m.variable = append(m.variable, int32(v))
			}
		}
		lo, hi = hi, len(m.parent)
	}
	return m
}

func (m monomials) len() int { return len(m.parent) }

// exponents returns the exponent vector of every monomial (n variables).
func (m monomials) exponents(n int) [][]int {
	out := make([][]int, m.len())
	out[0] = make([]int, n)
	for t := 1; t < m.len(); t++ {
		e := slices.Clone(out[m.parent[t]])
		e[m.variable[t]]++
		out[t] = e
	}
	return out
}

// eval writes every monomial of z to dst.
func (m monomials) eval(dst, z []float64) {
	dst[0] = 1
	for t := 1; t < len(m.parent); t++ {
		dst[t] = dst[m.parent[t]] * z[m.variable[t]]
	}
}

// numMonomials returns C(n + degree, degree), or -1 beyond limit.
func numMonomials(n, degree, limit int) int {
	c := 1
	for k := 1; k <= degree; k++ {
		c = c * (n + k) / k
		if c > limit {
			return -1
		}
	}
	return c
}

// linFeatures is the feature map of a Linear fit (see Linear).
//
// The state's part is a basis b(x) of the standardised state x: its
// monomials of degree at most Degree, followed, for Features "rff", by the
// random Fourier features (see rffMap). For discrete actions
// phi(s, a) = e_a (x) b(x). For real actions every feature is the product
// of a basis function of the state, term sIdx[t] of b, and a monomial of
// the standardised action y, term aIdx[t] of amono: with "poly" the pairs
// whose joint degree is at most Degree (the joint monomials x^alpha y^beta,
// in the order of newMonomials over (x, y)), with "rff" every basis
// function times every action monomial of degree at most 2. The expected
// features at a state are then E_y[b_i(x) y^beta] = b_i(x) mean_k(y_k^beta):
// the Monte Carlo draws cost the action's few monomials each (3 for one
// action component and degree 2) instead of all the joint features.
type linFeatures struct {
	state, action scaler
	numActions    int // discrete actions; 0 for real ones
	stateDim      int
	actionDim     int
	P             int // features per block
	p             int // features: numActions blocks of P, or P

	smono monomials // monomials of the state
	rff   rffMap    // random Fourier features of the state (none for "poly")
	nb    int       // basis functions of the state: smono.len() + rff.d

	amono      monomials // real actions: monomials of the action
	sIdx, aIdx []int32   // real actions: feature t = b[sIdx[t]] y^amono[aIdx[t]]
}

// featureSpec is how a Linear builds its features.
type featureSpec struct {
	kind      string // "poly" or "rff"
	degree    int
	random    int     // random Fourier features ("rff")
	bandwidth float64 // multiple of the median heuristic ("rff")
}

func newLinFeatures(d *dataset.Dataset, spec featureSpec) (*linFeatures, error) {
	degree := spec.degree
	f := &linFeatures{state: newScaler(d.Obs, d.StateDim), numActions: d.NumActions,
		stateDim: d.StateDim, actionDim: d.ActionDim}
	nvar := d.StateDim
	if d.ActionDim > 0 {
		f.action = newScaler(d.ActionVec, d.ActionDim)
		f.numActions = 0
		nvar += d.ActionDim
	}
	limit := func() error {
		return fmt.Errorf("value: linear: degree %d in %d variables (times %d actions) gives more than %d features; lower Degree",
			degree, nvar, max(f.numActions, 1), maxLinearFeatures)
	}
	ns := numMonomials(f.stateDim, degree, maxLinearFeatures)
	if ns < 0 {
		return nil, limit()
	}
	f.smono = newMonomials(f.stateDim, degree)
	if spec.kind == "rff" {
		f.rff = newRFF(d, f.state, spec.random, spec.bandwidth)
	}
	f.nb = f.smono.len() + f.rff.d
	if f.actionDim == 0 {
		f.P = f.nb
	} else if spec.kind == "rff" {
		f.amono = newMonomials(f.actionDim, 2)
		for i := range f.nb {
			for a := range f.amono.len() {
				f.sIdx = append(f.sIdx, int32(i))
				f.aIdx = append(f.aIdx, int32(a))
			}
		}
		f.P = len(f.sIdx)
	} else {
		if numMonomials(nvar, degree, maxLinearFeatures) < 0 {
			return nil, limit()
		}
		f.jointPoly(degree)
	}
	f.p = f.P * max(f.numActions, 1)
	if f.p > maxLinearFeatures {
		return nil, fmt.Errorf("value: linear: %d features (times %d actions) is more than %d; lower Degree or NumRandom",
			f.P, max(f.numActions, 1), maxLinearFeatures)
	}
	return f, nil
}

// jointPoly sets the features of real actions to the joint monomials of
// degree at most degree in the standardised (state, action) vector, in
// the order of newMonomials over (x, y), each the product of a state
// monomial (smono, already set) and an action monomial.
func (f *linFeatures) jointPoly(degree int) {
	nvar := f.stateDim + f.actionDim
	f.amono = newMonomials(f.actionDim, degree)
	index := func(m monomials, n int) map[string]int32 {
		out := map[string]int32{}
		for t, e := range m.exponents(n) {
			out[fmt.Sprint(e)] = int32(t)
		}
		return out
	}
	si, ai := index(f.smono, f.stateDim), index(f.amono, f.actionDim)
	f.sIdx, f.aIdx = nil, nil
	for _, e := range newMonomials(nvar, degree).exponents(nvar) {
		f.sIdx = append(f.sIdx, si[fmt.Sprint(e[:f.stateDim])])
		f.aIdx = append(f.aIdx, ai[fmt.Sprint(e[f.stateDim:])])
	}
	f.P = len(f.sIdx)
}

// basis writes the basis functions of the standardised state z (stateDim
// entries) to dst (nb entries).
func (f *linFeatures) basis(dst, z []float64) {
	nm := f.smono.len()
	f.smono.eval(dst[:nm], z)
	f.rff.eval(dst[nm:f.nb], z)
}

// joint writes the features of a real-action pair to x from the
// standardised (state, action) vector z, using xs (nb) and ya (amono)
// as scratch.
func (f *linFeatures) joint(x, z, xs, ya []float64) {
	f.basis(xs, z[:f.stateDim])
	f.amono.eval(ya, z[f.stateDim:])
	for t := range x {
		x[t] = xs[f.sIdx[t]] * ya[f.aIdx[t]]
	}
}

// linScratch is the per-goroutine scratch space of the feature map.
type linScratch struct {
	z, x   []float64 // standardised variables, features of a block
	xs, ya []float64 // basis of the state, monomials of an action
	ybar   []float64 // mean of ya over the draws
	psi    []float64 // expected features, p
	smp    *mcSampler
}

func (f *linFeatures) newScratch(t realTarget) *linScratch {
	sc := &linScratch{z: make([]float64, f.stateDim+f.actionDim), x: make([]float64, f.P),
		psi: make([]float64, f.p), xs: make([]float64, f.nb)}
	if f.actionDim > 0 {
		sc.ya, sc.ybar = make([]float64, f.amono.len()), make([]float64, f.amono.len())
	}
	if t.cont != nil {
		sc.smp = newMCSampler(t)
	}
	return sc
}

// stateAction writes the features of step j's (s, a) within its block to
// x and returns the block of phi(s_j, a_j) they fill (the action for
// discrete actions, else 0): phi = e_block (x) x.
func (f *linFeatures) stateAction(x []float64, sc *linScratch, d *dataset.Dataset, j int) int {
	f.state.apply(sc.z, d.ObsAt(j))
	if f.numActions > 0 {
		f.basis(x, sc.z)
		return int(d.Action[j])
	}
	f.action.apply(sc.z[f.stateDim:], d.ActionVecAt(j))
	f.joint(x, sc.z, sc.xs, sc.ya)
	return 0
}

// expected sets sc.psi = E_{a~pi(.|s)} phi(s, a) at the state obs: from
// the probabilities probs for discrete actions, from the Monte Carlo draws
// of sc.smp for real ones (the mean of phi over the draws, as state
// basis functions times the mean action monomials summed in draw order).
func (f *linFeatures) expected(sc *linScratch, obs, probs []float64) {
	P := f.P
	f.state.apply(sc.z, obs)
	if f.numActions > 0 {
		f.basis(sc.x, sc.z)
		for a, pa := range probs {
			blk := sc.psi[a*P : (a+1)*P]
			if pa == 0 {
				clear(blk)
				continue
			}
			for i, v := range sc.x {
				blk[i] = pa * v
			}
		}
		return
	}
	f.basis(sc.xs, sc.z[:f.stateDim])
	za := sc.z[f.stateDim:]
	clear(sc.ybar)
	sc.smp.draw(obs, func(_ int, a []float64) {
		f.action.apply(za, a)
		f.amono.eval(sc.ya, za)
		for i, v := range sc.ya {
			sc.ybar[i] += v
		}
	})
	inv := 1 / float64(sc.smp.t.samples)
	for i := range sc.ybar {
		sc.ybar[i] *= inv
	}
	for t := range sc.psi {
		sc.psi[t] = sc.xs[f.sIdx[t]] * sc.ybar[f.aIdx[t]]
	}
}

// linChunk is the number of transitions whose rows are gathered before
// they are added to the moments.
const linChunk = 256
