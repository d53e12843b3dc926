package value

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/kernelloss"
)

// This file is Linear's fit over a stream of shards (package stream), in
// two passes. The first (LinearPrep) gathers what the feature map needs
// from the whole log, all of it mergeable in any order: the states' mean
// and variance per component (Welford's update, merged by Chan, Golub and
// LeVeque's formula), the longest episode (the horizons of a Finite fit),
// the largest |reward|, and a bottom-k sample of steps (keys hashed from
// the episode id and t, kernelloss.BottomK) on which the fitted model's
// values are checked against what the rewards allow (the in-memory fqe
// checks every step; a stream holds no per-step values). The second
// (LinearMoments) sums the moment matrices, each episode's share formed
// once (LinearStream.Episode) and added to every bootstrap copy with its
// multiplicity, and the target's expected features at each episode's
// first state, which the estimate reads the model at. LinearStream.Fit
// then solves LSTD-Q as Fit does.
//
// A stream fits discrete actions whose target distribution the logs
// carry (target_prob_k columns) with the polynomial features; the
// random Fourier features (a median distance over the states) and real
// actions (a target policy over real actions to draw from) are refused.
// The in-memory fit standardises with the two-pass mean and deviation and
// sums the moments in two halves of the steps, the stream with Welford's
// and episode by episode: the two agree to the rounding of those sums.

// checkSteps is the size of the sample of steps of the bound check.
const checkSteps = 1000

const checkSalt = 0x6c696e636865636b // "lincheck"

// LinearPrep is the first pass of a streamed Linear fit (see above).
type LinearPrep struct {
	Learner         Linear
	Gamma           float64
	Dim, NumActions int
	// States are the logged states' count, running mean and sum of
	// squared deviations per dimension.
	States       kernelloss.Welford
	MaxLen       int
	MaxAbsReward float64
	// Check samples steps, each row obs | pi(.|s) | has next | s' |
	// has pi(.|s') | pi(.|s') | action | steps left.
	Check kernelloss.BottomK
}

// NewPrep returns an empty first pass of l for discount gamma.
func (l Linear) NewPrep(gamma float64) (*LinearPrep, error) {
	if err := checkDiscount("linear", gamma); err != nil {
		return nil, err
	}
	set, err := l.settings()
	if err != nil {
		return nil, err
	}
	if set.spec.kind != "poly" {
		return nil, fmt.Errorf("value: linear: features %q cannot stream (a median distance over all states); the polynomial features stream", set.spec.kind)
	}
	return &LinearPrep{Learner: l, Gamma: gamma}, nil
}

func (p *LinearPrep) rowLen() int { return 2*p.Dim + 2*p.NumActions + 4 }

// Add adds episode e of d, checking its steps as Fit does.
func (p *LinearPrep) Add(d *dataset.Dataset, e int) error {
	if d.StateDim <= 0 {
		return errors.New("value: linear needs real-valued states (StateDim > 0); use the tabular learner for discrete states")
	}
	if d.ActionDim > 0 {
		return errors.New("value: linear streams with discrete actions only (the logs' target_prob_k columns; a target over real actions cannot stream)")
	}
	if !d.HasTargetProbs() {
		return errors.New("value: linear needs the target's action distribution at every state: the logs carry no target_prob_k columns")
	}
	if p.Dim == 0 {
		p.Dim, p.NumActions = d.StateDim, d.NumActions
		p.States = kernelloss.NewWelford(p.Dim)
		p.Check = kernelloss.BottomK{K: checkSteps, Dim: p.rowLen()}
	}
	if d.StateDim != p.Dim || d.NumActions != p.NumActions {
		return fmt.Errorf("value: linear: %d state components and %d actions, the first episodes' %d and %d", d.StateDim, d.NumActions, p.Dim, p.NumActions)
	}
	lo, hi := d.Span(e)
	p.MaxLen = max(p.MaxLen, hi-lo)
	idh := kernelloss.HashID(d.IDs[e])
	var row []float64
	for j := lo; j < hi; j++ {
		if err := checkRealStep("linear", d, e, j); err != nil {
			return err
		}
		probs := d.TargetProbsAt(j)
		if err := checkTargetRow("linear", d, e, j, probs, "logged"); err != nil {
			return err
		}
		obs := d.ObsAt(j)
		p.States.Add(obs)
		p.MaxAbsReward = math.Max(p.MaxAbsReward, math.Abs(d.Reward[j]))
		next, hasNext := d.NextObs(e, j)
		if hasNext && !allFinite(next) {
			return fmt.Errorf("value: linear: episode %q step %d: next state %v is not finite", d.IDs[e], j-lo, next)
		}
		np, hasProbs := d.NextTargetProbs(e, j)
		if hasNext && hasProbs {
			if err := checkTargetRow("linear", d, e, j, np, "next"); err != nil {
				return err
			}
		}
		key := kernelloss.StepKey(p.Learner.seedSalt(), idh, j-lo)
		if !p.Check.Admits(key) {
			continue
		}
		row = append(row[:0], obs...)
		row = append(row, probs...)
		row = append(row, b2f(hasNext))
		if hasNext {
			row = append(row, next...)
		} else {
			row = append(row, make([]float64, p.Dim)...)
		}
		row = append(row, b2f(hasNext && hasProbs))
		if hasNext && hasProbs {
			row = append(row, np...)
		} else {
			row = append(row, make([]float64, p.NumActions)...)
		}
		row = append(row, float64(d.Action[j]), float64(hi-j))
		p.Check.Add(key, row)
	}
	return nil
}

// seedSalt is the salt of the bound check's keys.
func (Linear) seedSalt() uint64 { return checkSalt }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Merge adds o's episodes.
func (p *LinearPrep) Merge(o *LinearPrep) error {
	if p.Learner != o.Learner || p.Gamma != o.Gamma {
		return errors.New("value: linear: cannot merge first passes of different settings")
	}
	if o.Dim == 0 {
		return nil
	}
	if p.Dim == 0 {
		*p = *o
		p.States = kernelloss.Welford{N: o.States.N, Mean: slices.Clone(o.States.Mean), M2: slices.Clone(o.States.M2)}
		p.Check = kernelloss.BottomK{K: o.Check.K, Dim: o.Check.Dim, Keys: slices.Clone(o.Check.Keys), Rows: slices.Clone(o.Check.Rows)}
		return nil
	}
	if p.Dim != o.Dim || p.NumActions != o.NumActions {
		return errors.New("value: linear: cannot merge first passes of different shapes")
	}
	p.States.Merge(&o.States)
	p.MaxLen = max(p.MaxLen, o.MaxLen)
	p.MaxAbsReward = math.Max(p.MaxAbsReward, o.MaxAbsReward)
	p.Check.Merge(&o.Check)
	return nil
}

// LinearStream is a streamed Linear fit's feature map, fixed by the first
// pass.
type LinearStream struct {
	Learner         Linear
	Gamma           float64
	Dim, NumActions int
	Mean, Scale     []float64
	MaxLen          int
	MaxAbsReward    float64
	Check           kernelloss.BottomK

	f   *linFeatures
	set linearSettings
}

// Features fixes the feature map from the first pass.
func (p *LinearPrep) Features() (*LinearStream, error) {
	if p.States.N == 0 {
		return nil, errors.New("value: linear: the logs have no steps")
	}
	s := &LinearStream{Learner: p.Learner, Gamma: p.Gamma, Dim: p.Dim, NumActions: p.NumActions,
		MaxLen: p.MaxLen, MaxAbsReward: p.MaxAbsReward, Check: p.Check}
	s.Mean, s.Scale = p.States.Scaling()
	return s, s.init()
}

// init builds the feature map (after Features, or a decode).
func (s *LinearStream) init() error {
	if s.f != nil {
		return nil
	}
	set, err := s.Learner.settings()
	if err != nil {
		return err
	}
	degree := set.spec.degree
	f := &linFeatures{state: scaler{mean: s.Mean, scale: s.Scale}, numActions: s.NumActions, stateDim: s.Dim}
	if numMonomials(s.Dim, degree, maxLinearFeatures) < 0 {
		return fmt.Errorf("value: linear: degree %d in %d variables gives more than %d features; lower Degree", degree, s.Dim, maxLinearFeatures)
	}
	f.smono = newMonomials(s.Dim, degree)
	f.nb = f.smono.len()
	f.P = f.nb
	f.p = f.P * max(f.numActions, 1)
	if f.p > maxLinearFeatures {
		return fmt.Errorf("value: linear: %d features (times %d actions) is more than %d; lower Degree", f.P, f.numActions, maxLinearFeatures)
	}
	s.f, s.set = f, set
	return nil
}

// NumFeatures returns p.
func (s *LinearStream) NumFeatures() int {
	if s.init() != nil {
		return 0
	}
	return s.f.p
}

// LinearMoments are the second pass's sums of one copy of the data: the
// moment matrices (as Fit's accumulation holds them) and the counts of
// transitions.
type LinearMoments struct {
	M, Gdiag           []float64
	N, Skipped, NoNext int
}

// NewMoments returns zero sums.
func (s *LinearStream) NewMoments() *LinearMoments {
	w := s.worker()
	return &LinearMoments{M: make([]float64, len(w.m)), Gdiag: make([]float64, len(w.gdiag))}
}

func (s *LinearStream) worker() *linWorker {
	s.init()
	return newLinWorker(s.f, realTarget{numActions: s.NumActions}, s.Gamma, s.Learner.Finite)
}

// LinearEpisode is one episode's share of the second pass, formed once
// by LinearStream.Episode: its moments, and Psi0 = E_{a~pi} phi(s_0, a)
// at its first state (T its length), which the estimate reads the model
// at.
type LinearEpisode struct {
	Psi0 []float64
	T    int
	w    *linWorker
}

// Episode forms the share of episode e of d in ep, which it reuses.
func (s *LinearStream) Episode(d *dataset.Dataset, e int, ep *LinearEpisode) error {
	if ep.w == nil {
		ep.w = s.worker()
	}
	w := ep.w
	clear(w.m)
	clear(w.gdiag)
	w.n, w.skipped, w.noNext, w.err = 0, 0, 0, nil
	if d.StateDim != s.Dim || d.ActionDim > 0 || d.NumActions != s.NumActions || !d.HasTargetProbs() {
		return fmt.Errorf("value: linear: the episode's columns differ from the first pass's")
	}
	lo, hi := d.Span(e)
	ep.T = hi - lo
	if hi == lo {
		return nil
	}
	w.accumulate(d, lo, hi)
	if w.err != nil {
		return w.err
	}
	sc := w.scratch()
	s.f.expected(sc, d.ObsAt(lo), d.TargetProbsAt(lo))
	ep.Psi0 = append(ep.Psi0[:0], sc.psi...)
	return nil
}

// Add adds episode ep with multiplicity k.
func (m *LinearMoments) Add(ep *LinearEpisode, k int) {
	if k == 0 || ep.w == nil {
		return
	}
	a := float64(k)
	for i, v := range ep.w.m {
		m.M[i] += a * v
	}
	for i, v := range ep.w.gdiag {
		m.Gdiag[i] += a * v
	}
	m.N += k * ep.w.n
	m.Skipped += k * ep.w.skipped
	m.NoNext += k * ep.w.noNext
}

// Merge adds o's sums.
func (m *LinearMoments) Merge(o *LinearMoments) {
	for i, v := range o.M {
		m.M[i] += v
	}
	for i, v := range o.Gdiag {
		m.Gdiag[i] += v
	}
	m.N += o.N
	m.Skipped += o.Skipped
	m.NoNext += o.NoNext
}

// Fit solves LSTD-Q on the sums m, as Fit does on the data in memory.
func (s *LinearStream) Fit(m *LinearMoments) (*LinearModel, error) {
	w := s.worker()
	copy(w.m, m.M)
	copy(w.gdiag, m.Gdiag)
	w.n, w.skipped, w.noNext = m.N, m.Skipped, m.NoNext
	return fromMoments(s.set, s.Learner.Finite, s.f, realTarget{numActions: s.NumActions}, s.Gamma, w, s.MaxLen)
}

// StartValue returns the model's v at the first state of an episode of T
// steps whose expected features are psi0: psi0^T theta_T (Finite) or
// psi0^T theta.
func (m *LinearModel) StartValue(psi0 []float64, T int) float64 {
	if !m.finite {
		return dot(psi0, m.Theta)
	}
	thetas := m.Thetas
	if T > len(thetas) {
		thetas = m.extend(slices.Clone(thetas), T)
	}
	return dot(psi0, thetas[T-1])
}

// CheckValues returns the largest |q|, |v| and |v(s')| of the model over
// the first pass's sample of steps (NaN where unknown), the stream's
// stand-in for the in-memory check of every step's values.
func (s *LinearStream) CheckValues(m *LinearModel) float64 {
	f := s.f
	sc := f.newScratch(realTarget{numActions: s.NumActions})
	dim, nA := s.Dim, s.NumActions
	top := 0.0
	theta := func(h int) []float64 {
		if !m.finite {
			return m.Theta
		}
		if h == 0 {
			return nil
		}
		if h > len(m.Thetas) {
			return m.extend(slices.Clone(m.Thetas), h)[h-1]
		}
		return m.Thetas[h-1]
	}
	rows := s.Check.Rows
	L := s.Check.Dim
	for i := 0; i+L <= len(rows); i += L {
		r := rows[i : i+L]
		obs, probs := r[:dim], r[dim:dim+nA]
		hasNext, next := r[dim+nA] == 1, r[dim+nA+1:2*dim+nA+1]
		hasProbs, np := r[2*dim+nA+1] == 1, r[2*dim+nA+2:2*dim+2*nA+2]
		a, h := int(r[L-2]), int(r[L-1])
		th := theta(h)
		f.state.apply(sc.z, obs)
		f.basis(sc.x, sc.z)
		top = math.Max(top, math.Abs(dot(sc.x, th[a*f.P:(a+1)*f.P])))
		f.expected(sc, obs, probs)
		top = math.Max(top, math.Abs(dot(sc.psi, th)))
		if thn := theta(h - 1); hasNext && hasProbs && thn != nil {
			f.expected(sc, next, np)
			top = math.Max(top, math.Abs(dot(sc.psi, thn)))
		}
	}
	return top
}
