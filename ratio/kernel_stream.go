package ratio

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/kernelloss"
	"gonum.org/v1/gonum/floats"
)

// This file splits Kernel's fit into the two passes over the data that a
// stream of shards can make (package stream), and Fit runs the same two
// passes in memory:
//
//  1. KernelPrep: what the feature maps need from the whole log, all of
//     it mergeable in any order: the states' per-dimension mean and
//     variance (Welford's update, merged by Chan, Golub and LeVeque's
//     formula), the number of episodes (which decides the folds), and two
//     uniform samples without replacement, of the states (the bumps'
//     centres) and of the next states (the median bandwidth). A sample is
//     a bottom-k sample: every step gets a key, a fixed hash of Seed, its
//     episode's id and t, and the sample is the k steps of smallest key,
//     whatever order the steps come in and however the log is split (the
//     same draw on one machine or many, in memory or streamed).
//     KernelPrep.Features fixes the scaling, the bandwidth, the centres
//     and the frequencies of the loss's kernel from it.
//  2. KernelMoments: the loss's sums per cross-validation fold
//     (kernelloss.Quadratic) and the discounted mean of phi, each episode's share
//     formed once (KernelFeatures.Episode) and added to every bootstrap
//     copy with its multiplicity (KernelMoments.Add). Kernel.FitMoments
//     cross-validates and solves, as Fit does.
//
// A fold is episode-wise, a fixed hash of the episode's id modulo 5, so
// that any machine knows an episode's fold without the others; with
// fewer than five non-empty episodes (counted in the first pass), step t
// of an episode of T steps is in fold floor(5 t / T).

const (
	centreSalt    = 0x63656e7472657321 // "centres!"
	bandwidthSalt = 0x62616e6477696474 // "bandwidt"
	foldSalt      = 0x666f6c647321212e // "folds!!."
)

// stepKey is the sampling key of step t of the episode whose id hashes
// to idHash.
func stepKey(seed, salt, idHash uint64, t int) uint64 {
	return kernelloss.StepKey(seed+salt, idHash, t)
}

// fnv1a is kernelloss.HashID.
func fnv1a(s string) uint64 { return kernelloss.HashID(s) }

// Sample is a bottom-k sample (kernelloss.BottomK).
type Sample = kernelloss.BottomK

// KernelPrep is the first pass of Kernel's fit (see the top of this
// file): add every episode with Add (or merge partial preps), then
// Features.
type KernelPrep struct {
	Learner Kernel
	Gamma   float64
	Dim     int
	// States are the logged states' count, running mean and sum of
	// squared deviations per dimension.
	States kernelloss.Welford
	// Episodes counts the non-empty episodes.
	Episodes int
	// Centres samples the logged states, Next the next states of the
	// loss's transitions (the bandwidth sample).
	Centres, Next Sample
}

// NewPrep returns an empty first pass for states of dim values and
// discount gamma.
func (l Kernel) NewPrep(dim int, gamma float64) (*KernelPrep, error) {
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("ratio: discount %v outside (0, 1]", gamma)
	}
	if dim <= 0 {
		return nil, errors.New("ratio: the kernel learner needs real-valued states (StateDim > 0)")
	}
	set, err := l.settings()
	if err != nil {
		return nil, err
	}
	return &KernelPrep{Learner: l, Gamma: gamma, Dim: dim, States: kernelloss.NewWelford(dim),
		Centres: Sample{K: set.m, Dim: dim}, Next: Sample{K: set.bandwidthSample, Dim: dim}}, nil
}

// checkEpisode returns an error for a state, next state or pair of
// log-probabilities of episode e that the real-state learners (Kernel's
// two passes, checkNeuralData) cannot use.
func checkEpisode(d *dataset.Dataset, e int) error {
	dim := d.StateDim
	finite := func(v []float64) bool {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false
			}
		}
		return true
	}
	lo, hi := d.Span(e)
	for j := lo; j < hi; j++ {
		t := j - lo
		if obs := d.ObsAt(j); !finite(obs) {
			return fmt.Errorf("ratio: episode %q step %d: state %v, want %d finite values", d.IDs[e], t, obs, dim)
		}
		next, ok := d.NextObs(e, j)
		if !ok {
			continue
		}
		if len(next) != dim || !finite(next) {
			return fmt.Errorf("ratio: episode %q step %d: next state %v, want %d finite values", d.IDs[e], t, next, dim)
		}
		lt, lb := d.LogTarget[j], d.LogBehavior[j]
		lr := lt - lb
		if math.IsNaN(lr) || math.IsInf(lb, 0) || math.IsInf(math.Exp(lr), 1) {
			return fmt.Errorf("ratio: episode %q step %d: log-probabilities %v (target), %v (behavior) give no finite ratio",
				d.IDs[e], t, lt, lb)
		}
	}
	return nil
}

// Add adds episode e of d.
func (p *KernelPrep) Add(d *dataset.Dataset, e int) error {
	if d.StateDim != p.Dim {
		return fmt.Errorf("ratio: states of dimension %d, the first episodes' are %d", d.StateDim, p.Dim)
	}
	if err := checkEpisode(d, e); err != nil {
		return err
	}
	lo, hi := d.Span(e)
	if hi == lo {
		return nil
	}
	p.Episodes++
	idh := fnv1a(d.IDs[e])
	seed := p.Learner.Seed
	g := p.Gamma // gamma^(t+1)
	for j := lo; j < hi; j++ {
		t := j - lo
		obs := d.ObsAt(j)
		p.States.Add(obs)
		p.Centres.Add(stepKey(seed, centreSalt, idh, t), obs)
		if next, ok := d.NextObs(e, j); ok && g > 0 {
			p.Next.Add(stepKey(seed, bandwidthSalt, idh, t), next)
		}
		g *= p.Gamma
	}
	return nil
}

// Merge adds o's episodes (Chan, Golub and LeVeque's update of the
// moments).
func (p *KernelPrep) Merge(o *KernelPrep) error {
	if p.Learner != o.Learner || p.Gamma != o.Gamma || p.Dim != o.Dim {
		return errors.New("ratio: cannot merge kernel first passes of different settings")
	}
	p.States.Merge(&o.States)
	p.Episodes += o.Episodes
	p.Centres.Merge(&o.Centres)
	p.Next.Merge(&o.Next)
	return nil
}

// KernelFeatures are the feature maps Kernel's loss is summed in, fixed
// by the first pass: the scaling x = (s - Mean)/Scale, the bandwidth h,
// the bumps of w (Centres, Widths) and the frequencies of the loss's
// random Fourier features (Omega, Pairs cosine-sine pairs), and whether
// the folds are episode-wise.
type KernelFeatures struct {
	Gamma          float64
	Seed           uint64
	Mean, Scale    []float64
	Bandwidth      float64
	LossBandwidths []float64
	Centres        []float64
	Widths         []float64
	Omega          []float64
	Pairs          int
	ByEpisode      bool
	Steps          int

	phi *bumps
	psi *fourier
	// test, if not nil, is a value test of the log of that many steps
	// (WithValue): one more entry of the loss's test vector.
	test *valueTest
}

// WithValue returns a copy of f whose loss has one more test function,
// the fitted value of the target (v at every logged state of the log of
// f's first pass, next at every next state, in step order, and start,
// v's StartMean on that log), as Kernel.WithValue adds it in memory, and
// whether it took them. The copy
// reads the values by step index: its second pass must run over that
// same log in one piece (in memory; a stream of shards has no fitted
// value before its second pass).
func (f *KernelFeatures) WithValue(v, next []float64, start float64) (*KernelFeatures, bool) {
	vt, ok := newValueTest(v, next)
	if !ok || len(v) != f.Steps {
		return f, false
	}
	g := *f
	g.phi, g.psi, g.test = nil, nil, vt.forKernel(f.Gamma, start)
	return &g, true
}

// lossDim is the length of the loss's test vector: the random features,
// and the value test's entry.
func (f *KernelFeatures) lossDim() int {
	_, psi := f.maps()
	if f.test != nil {
		return psi.dim() + 1
	}
	return psi.dim()
}

// Features fixes the feature maps from the first pass.
func (p *KernelPrep) Features() (*KernelFeatures, error) {
	if p.States.N == 0 {
		return nil, errors.New("ratio: no logged states")
	}
	set, err := p.Learner.settings()
	if err != nil {
		return nil, err
	}
	dim := p.Dim
	f := &KernelFeatures{Gamma: p.Gamma, Seed: p.Learner.Seed, ByEpisode: p.Episodes >= kernelFolds, Steps: int(p.States.N)}
	f.Mean, f.Scale = p.States.Scaling()
	scaleRows := func(rows []float64) []float64 {
		for i := range rows {
			k := i % dim
			rows[i] = (rows[i] - f.Mean[k]) / f.Scale[k]
		}
		return rows
	}
	h := set.bandwidth
	if h == 0 {
		next := scaleRows(p.Next.Sorted())
		if len(next) < 2*dim {
			return nil, fmt.Errorf("ratio: %d transitions, need at least 2", len(next)/dim)
		}
		// Every pair of the sample counts: the draws of MedianOf only
		// reorder it.
		if h, err = kernelloss.Median(rand.New(rand.NewPCG(p.Learner.Seed, kernelStream)), next, dim, len(next)/dim); err != nil {
			return nil, errors.New("ratio: all sampled next states coincide; set Kernel.Bandwidth")
		}
	}
	f.Bandwidth = h
	f.Centres = scaleRows(p.Centres.Sorted())
	f.Widths = make([]float64, len(f.Centres)/dim)
	for k := range f.Widths {
		f.Widths[k] = h * kernelWidths[k%len(kernelWidths)]
	}
	lossScales := []float64{1}
	if p.Gamma < 1 {
		lossScales = kernelWidths
	}
	f.LossBandwidths = scaled(h, lossScales)
	psi := newFourier(rand.New(rand.NewPCG(p.Learner.Seed, kernelStream)), dim, set.dk, h, lossScales)
	f.Omega, f.Pairs = psi.omega, psi.m
	return f, nil
}

// maps returns the feature maps phi (w's) and psi (the loss's).
func (f *KernelFeatures) maps() (*bumps, *fourier) {
	if f.phi == nil {
		f.phi = &bumps{dim: len(f.Mean), centres: f.Centres, widths: f.Widths, inv: invWidths(f.Widths)}
		f.psi = &fourier{in: len(f.Mean), m: f.Pairs, omega: f.Omega, scale: math.Sqrt(1 / float64(f.Pairs))}
	}
	return f.phi, f.psi
}

// NumFeatures returns the number of features of w, 1 + the centres.
func (f *KernelFeatures) NumFeatures() int { return len(f.Widths) + 1 }

// scale sets dst to the scaled state x = (obs - Mean)/Scale.
func (f *KernelFeatures) scale(dst, obs []float64) {
	for k, v := range obs {
		dst[k] = (v - f.Mean[k]) / f.Scale[k]
	}
}

// foldOf returns the fold of step t of an episode of T steps whose id
// hashes to idHash.
func (f *KernelFeatures) foldOf(idHash uint64, t, T int) int {
	return kernelloss.FoldOf(kernelFolds, f.ByEpisode, f.Seed+foldSalt, idHash, t, T)
}

// KernelMoments are the second pass's sums of one copy of the data: the
// loss's sums per fold and the discounted sums of phi over the logged
// states (Kernel's cbar is StateSum / StateWeight).
type KernelMoments struct {
	Folds       []*kernelloss.Quadratic
	StateSum    []float64
	StateWeight float64
	// Transitions counts the loss's terms (dummies included) and Steps
	// the logged states, with multiplicity.
	Transitions, Steps int
}

// NewMoments returns zero sums.
func (f *KernelFeatures) NewMoments() *KernelMoments {
	p := f.NumFeatures()
	m := &KernelMoments{StateSum: make([]float64, p)}
	for range kernelFolds {
		m.Folds = append(m.Folds, kernelloss.NewQuadratic(f.lossDim(), p))
	}
	return m
}

// KernelEpisode is one episode's share of the second pass, formed once
// by KernelFeatures.Episode and added to every copy with its
// multiplicity. Phi holds phi(x_t) for every step t (T rows of
// NumFeatures values), which the estimator's own sums reuse.
type KernelEpisode struct {
	Phi         []float64
	parts       [kernelFolds]*kernelloss.Quadratic
	used        [kernelFolds]bool
	state       []float64
	weight      float64
	transitions int
	steps       int
	terms       []kernelTerm
	disc        []float64 // gamma^t
	half        [2]episodeHalf
}

// kernelTerm is one term of the loss: step t's transition (next state
// known) or, with t = -1, the episode's dummy into its first state.
type kernelTerm struct {
	t         int
	fold      int
	rho, beta float64
}

// episodeHalf is the scratch and the sums of one of the two halves an
// episode's work is cut into (the same two whatever the number of CPUs,
// so that the sums do not depend on it).
type episodeHalf struct {
	parts [kernelFolds]*kernelloss.Quadratic
	used  [kernelFolds]bool
	state []float64
	ch    *kernelloss.Chunk
	x, fn []float64
}

// Episode forms the share of episode e of d (checked as KernelPrep.Add
// checks it) in ep, which it reuses. Its two halves (of the steps for
// phi, of the loss's terms for the sums) run on two goroutines when
// GOMAXPROCS allows, and are added in a fixed order.
func (f *KernelFeatures) Episode(d *dataset.Dataset, e int, ep *KernelEpisode) error {
	return f.EpisodeRange(d, e, 0, d.Len(e), ep)
}

// EpisodeRange forms the share of steps [a, b) of episode e of d in ep:
// the loss's terms of those steps' transitions (and, for gamma < 1, the
// episode's dummy start term when a = 0), and their states' discounted
// sums, each step keeping its place t in the whole episode (its discount
// gamma^t and its fold). The shares of the blocks of a partition of the
// episode add up to the episode's share: the block bootstrap of one long
// episode weighs each block by its own multiplicity (ope.BlockSums).
// ep.Phi holds phi(x_t) of steps a to b-1.
func (f *KernelFeatures) EpisodeRange(d *dataset.Dataset, e, a, b int, ep *KernelEpisode) error {
	if d.StateDim != len(f.Mean) {
		return fmt.Errorf("ratio: states of dimension %d, the model's are %d", d.StateDim, len(f.Mean))
	}
	if err := checkEpisode(d, e); err != nil {
		return err
	}
	phi, _ := f.maps()
	dk, dw, dim := f.lossDim(), phi.size(), len(f.Mean)
	if f.test != nil && len(f.test.v) != d.NumSteps() {
		return fmt.Errorf("ratio: the value test covers %d steps, the log has %d (it was fitted on another log)", len(f.test.v), d.NumSteps())
	}
	if ep.state != nil && len(ep.half[0].ch.L) != kernelloss.ChunkLen*dk {
		ep.state = nil // formed for features of another size
	}
	if ep.state == nil {
		ep.state = make([]float64, dw)
		for h := range ep.half {
			hf := &ep.half[h]
			hf.ch = kernelloss.NewChunk(kernelloss.ChunkLen, dk, dw)
			hf.x, hf.fn, hf.state = make([]float64, dim), make([]float64, dw), make([]float64, dw)
		}
	}
	for k := range ep.parts {
		ep.used[k] = false
	}
	clear(ep.state)
	ep.weight, ep.transitions = 0, 0
	lo, hi := d.Span(e)
	T := hi - lo
	if a < 0 || b > T || a > b {
		return fmt.Errorf("ratio: steps [%d, %d) of an episode of %d", a, b, T)
	}
	n := b - a
	ep.steps = n
	ep.Phi = slices.Grow(ep.Phi[:0], n*dw)[:n*dw]
	if n == 0 {
		return nil
	}
	gamma := f.Gamma
	// The loss's terms, in the order of kernelTransitions.
	idh := fnv1a(d.IDs[e])
	ep.terms = ep.terms[:0]
	if gamma < 1 && a == 0 {
		ep.terms = append(ep.terms, kernelTerm{t: -1, fold: f.foldOf(idh, 0, T), rho: 1})
	}
	// gamma^t by repeated products from t = 0, as the in-memory fit
	// forms it, whatever a.
	g := 1.0
	for range a {
		g *= gamma
	}
	ep.disc = slices.Grow(ep.disc[:0], n)[:n]
	for t := a; t < b; t++ {
		ep.disc[t-a] = g
		ep.weight += g
		g *= gamma
		if _, ok := d.NextObs(e, lo+t); ok && g > 0 {
			ep.terms = append(ep.terms, kernelTerm{t: t, fold: f.foldOf(idh, t, T), rho: g, beta: math.Exp(d.LogTarget[lo+t] - d.LogBehavior[lo+t])})
		}
	}
	ep.transitions = len(ep.terms)
	// Half h: the steps [sh, sh') for phi and the state sums, then the
	// terms [th, th') (which read phi(x_t) of any step: after a barrier).
	stepCut, termCut := n/2, len(ep.terms)/2
	var wg sync.WaitGroup
	run := func(body func(h int)) {
		if runtime.GOMAXPROCS(0) > 1 {
			wg.Add(1)
			go func() { defer wg.Done(); body(1) }()
			body(0)
			wg.Wait()
			return
		}
		body(0)
		body(1)
	}
	run(func(h int) {
		hf := &ep.half[h]
		clear(hf.state)
		i0, i1 := 0, stepCut
		if h == 1 {
			i0, i1 = stepCut, n
		}
		for i := i0; i < i1; i++ {
			f.scale(hf.x, d.ObsAt(lo+a+i))
			row := ep.Phi[i*dw : (i+1)*dw]
			phi.features(hf.x, row)
			gt := ep.disc[i]
			for k, v := range row {
				hf.state[k] += gt * v
			}
		}
	})
	run(func(h int) {
		hf := &ep.half[h]
		terms := ep.terms[:termCut]
		if h == 1 {
			terms = ep.terms[termCut:]
		}
		f.accumulateTerms(d, lo, a, terms, ep.Phi, hf)
	})
	for h := range ep.half {
		hf := &ep.half[h]
		for i, v := range hf.state {
			ep.state[i] += v
		}
		for k, used := range hf.used {
			if !used {
				continue
			}
			if !ep.used[k] {
				if ep.parts[k] == nil {
					ep.parts[k] = kernelloss.NewQuadratic(dk, dw)
				}
				ep.parts[k].Reset()
				ep.used[k] = true
			}
			ep.parts[k].Add(hf.parts[k])
		}
	}
	return nil
}

// accumulateTerms adds the loss's terms of an episode starting at step lo
// of d to hf's sums per fold, in chunks of at most ChunkLen; phiRows holds
// phi(x_t) of the episode's steps from step from on.
func (f *KernelFeatures) accumulateTerms(d *dataset.Dataset, lo, from int, terms []kernelTerm, phiRows []float64, hf *episodeHalf) {
	phi, psi := f.maps()
	dk, dw := f.lossDim(), phi.size()
	for k := range hf.used {
		if hf.used[k] {
			hf.parts[k].Reset()
		}
		hf.used[k] = false
	}
	ch := hf.ch
	w := kernelloss.FoldChunk{Chunk: ch, Folds: hf.parts[:], Used: hf.used[:], D: dk, P: dw,
		Add: func(q *kernelloss.Quadratic, ch *kernelloss.Chunk, n int) { q.Accumulate(ch, n) }}
	e := episodeOfStart(d, lo)
	for _, tm := range terms {
		n, a := w.Row(tm.fold)
		var next []float64
		if tm.t < 0 {
			next = d.ObsAt(lo)
		} else {
			next, _ = d.NextObs(e, lo+tm.t)
		}
		f.scale(hf.x, next)
		lossVector(psi, hf.x, ch.L[n*dk:(n+1)*dk], f.test != nil)
		phi.features(hf.x, hf.fn)
		var fs []float64 // nil for the dummy: Delta = 1 - w(s_0)
		if tm.t >= 0 {
			fs = phiRows[(tm.t-from)*dw : (tm.t-from+1)*dw]
		}
		setLossRow(a, ch, n, tm.rho, tm.beta, fs, hf.fn)
		if f.test != nil && fs != nil {
			n, _ := w.Row(tm.fold)
			setValueRow(ch, n, tm.rho, f.test.coef(d, e, lo+tm.t, f.Gamma, tm.beta), fs)
		}
	}
	w.Flush()
}

// episodeOfStart returns the episode whose first step is lo.
func episodeOfStart(d *dataset.Dataset, lo int) int {
	e, _ := slices.BinarySearch(d.Start[:d.NumEpisodes()], lo)
	return e
}

// Add adds episode ep with multiplicity k.
func (m *KernelMoments) Add(ep *KernelEpisode, k int) {
	if k == 0 {
		return
	}
	a := float64(k)
	kernelloss.AddFolds(m.Folds, ep.parts[:], ep.used[:], a)
	floats.AddScaled(m.StateSum, a, ep.state)
	m.StateWeight += a * ep.weight
	m.Transitions += k * ep.transitions
	m.Steps += k * ep.steps
}

// Merge adds o's sums.
func (m *KernelMoments) Merge(o *KernelMoments) {
	kernelloss.MergeFolds(m.Folds, o.Folds)
	floats.Add(m.StateSum, o.StateSum)
	m.StateWeight += o.StateWeight
	m.Transitions += o.Transitions
	m.Steps += o.Steps
}

// FitMoments cross-validates the ridge and solves for w on the sums m
// over the features f, as Fit does on the data in memory. The model's
// Negative count is not known (no per-step values): a Signed fit is
// refused.
func (l Kernel) FitMoments(f *KernelFeatures, m *KernelMoments) (*KernelModel, error) {
	if l.Signed {
		return nil, errors.New("ratio: a signed kernel fit cannot be finished from sums (it counts the logged states where w < 0)")
	}
	if m.Transitions < 2 {
		return nil, fmt.Errorf("ratio: %d transitions, need at least 2", m.Transitions)
	}
	if !(m.StateWeight > 0) {
		return nil, errors.New("ratio: the logged states have no weight")
	}
	cbar := make([]float64, len(m.StateSum))
	for i, v := range m.StateSum {
		cbar[i] = v / m.StateWeight
	}
	_, psi := f.maps()
	model := &KernelModel{Mean: f.Mean, Scale: f.Scale, Bandwidth: f.Bandwidth, LossBandwidths: f.LossBandwidths,
		Centres: f.Centres, Widths: f.Widths, KernelFeatures: psi.dim(), Transitions: m.Transitions, Steps: m.Steps}
	return model, l.solveSums(model, m.Folds, cbar)
}

// solveSums chooses the ridge by cross-validation over the folds (unless
// Ridge fixes it) and solves the programme of all folds' sums, filling
// model's fit.
func (l Kernel) solveSums(model *KernelModel, folds []*kernelloss.Quadratic, cbar []float64) error {
	all := kernelloss.Total(folds)
	nu := l.Ridge
	if nu == 0 {
		cv, err := kernelloss.CrossValidate(all, folds, cbar, nil, kernelRidges, l.Signed, 1e-2)
		if err != nil {
			return fmt.Errorf("ratio: %w", err)
		}
		nu, model.Folds, model.Grid, model.HeldOutLoss, model.HeldOutSE = cv.Ridge, cv.Folds, cv.Grid, cv.Loss, cv.SE
		if l.LeastLoss {
			nu = cv.LeastLoss()
		}
	}
	sol, err := kernelloss.NewQP(all, cbar, nil)
	if err != nil {
		return fmt.Errorf("ratio: %w", err)
	}
	model.Ridge, model.Lambda = nu, nu*sol.Scale
	if model.Coef, model.Iterations, err = sol.Solve(nu, l.Signed, nil); err != nil {
		return fmt.Errorf("ratio: %w", err)
	}
	model.Loss = all.VLoss(model.Coef)
	for _, c := range model.Coef[1:] {
		if c > 0 {
			model.Support++
		}
	}
	return nil
}
