package ratio

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/minimax"
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
//     (minimax.Sums) and the discounted mean of phi, each episode's share
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
	golden        = 0x9e3779b97f4a7c15
)

// fnv1a returns the 64-bit FNV-1a hash of s.
func fnv1a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// fmix64 is SplitMix64's output function (Steele, Lea, Flood 2014).
func fmix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// stepKey is the sampling key of step t of the episode whose id hashes
// to idHash.
func stepKey(seed, salt, idHash uint64, t int) uint64 {
	return fmix64(idHash ^ fmix64(seed+salt) + uint64(t+1)*golden)
}

// episodeFold is the fold of the episode whose id hashes to idHash.
func episodeFold(seed, idHash uint64) int {
	return int(fmix64(idHash^fmix64(seed+foldSalt)) % kernelFolds)
}

// Sample is a bottom-k sample of rows: the K rows of smallest key seen,
// each of Dim values, kept as a max-heap on the key.
type Sample struct {
	K, Dim int
	Keys   []uint64
	Rows   []float64
}

func (s *Sample) swap(i, j int) {
	s.Keys[i], s.Keys[j] = s.Keys[j], s.Keys[i]
	a, b := s.Rows[i*s.Dim:(i+1)*s.Dim], s.Rows[j*s.Dim:(j+1)*s.Dim]
	for k := range a {
		a[k], b[k] = b[k], a[k]
	}
}

// add offers a row with its key.
func (s *Sample) add(key uint64, row []float64) {
	if len(s.Keys) < s.K {
		s.Keys = append(s.Keys, key)
		s.Rows = append(s.Rows, row...)
		for i := len(s.Keys) - 1; i > 0; { // sift up
			p := (i - 1) / 2
			if s.Keys[p] >= s.Keys[i] {
				break
			}
			s.swap(i, p)
			i = p
		}
		return
	}
	if s.K == 0 || key >= s.Keys[0] {
		return
	}
	s.Keys[0] = key
	copy(s.Rows[:s.Dim], row)
	n := len(s.Keys)
	for i := 0; ; { // sift down
		l, big := 2*i+1, i
		if l < n && s.Keys[l] > s.Keys[big] {
			big = l
		}
		if l+1 < n && s.Keys[l+1] > s.Keys[big] {
			big = l + 1
		}
		if big == i {
			break
		}
		s.swap(i, big)
		i = big
	}
}

// merge offers every row of o.
func (s *Sample) merge(o *Sample) {
	for i, k := range o.Keys {
		s.add(k, o.Rows[i*o.Dim:(i+1)*o.Dim])
	}
}

// sorted returns the rows in increasing order of key.
func (s *Sample) sorted() []float64 {
	idx := make([]int, len(s.Keys))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return s.Keys[idx[a]] < s.Keys[idx[b]] })
	out := make([]float64, 0, len(s.Rows))
	for _, i := range idx {
		out = append(out, s.Rows[i*s.Dim:(i+1)*s.Dim]...)
	}
	return out
}

// KernelPrep is the first pass of Kernel's fit (see the top of this
// file): add every episode with Add (or merge partial preps), then
// Features.
type KernelPrep struct {
	Learner Kernel
	Gamma   float64
	Dim     int
	// Steps is the number of logged states, Mean and M2 their running
	// mean and sum of squared deviations per dimension.
	Steps    float64
	Mean, M2 []float64
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
	return &KernelPrep{Learner: l, Gamma: gamma, Dim: dim, Mean: make([]float64, dim), M2: make([]float64, dim),
		Centres: Sample{K: set.m, Dim: dim}, Next: Sample{K: set.bandwidthSample, Dim: dim}}, nil
}

// checkKernelEpisode returns an error for a state, next state or pair of
// log-probabilities of episode e the fit cannot use (checkNeuralData's
// checks, episode by episode).
func checkKernelEpisode(d *dataset.Dataset, e int) error {
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
	if err := checkKernelEpisode(d, e); err != nil {
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
		p.Steps++
		for k, v := range obs {
			delta := v - p.Mean[k]
			p.Mean[k] += delta / p.Steps
			p.M2[k] += delta * (v - p.Mean[k])
		}
		p.Centres.add(stepKey(seed, centreSalt, idh, t), obs)
		if next, ok := d.NextObs(e, j); ok && g > 0 {
			p.Next.add(stepKey(seed, bandwidthSalt, idh, t), next)
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
	if o.Steps > 0 {
		n := p.Steps + o.Steps
		for k := range p.Mean {
			delta := o.Mean[k] - p.Mean[k]
			p.M2[k] += o.M2[k] + delta*delta*p.Steps*o.Steps/n
			p.Mean[k] += delta * o.Steps / n
		}
		p.Steps = n
	}
	p.Episodes += o.Episodes
	p.Centres.merge(&o.Centres)
	p.Next.merge(&o.Next)
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
}

// Features fixes the feature maps from the first pass.
func (p *KernelPrep) Features() (*KernelFeatures, error) {
	if p.Steps == 0 {
		return nil, errors.New("ratio: no logged states")
	}
	set, err := p.Learner.settings()
	if err != nil {
		return nil, err
	}
	dim := p.Dim
	f := &KernelFeatures{Gamma: p.Gamma, Seed: p.Learner.Seed, Mean: slices.Clone(p.Mean), Scale: make([]float64, dim),
		ByEpisode: p.Episodes >= kernelFolds, Steps: int(p.Steps)}
	for k := range f.Scale {
		f.Scale[k] = math.Sqrt(p.M2[k] / p.Steps)
		if !(f.Scale[k] > 0) || math.IsInf(f.Scale[k], 0) {
			f.Scale[k] = 1
		}
	}
	scaleRows := func(rows []float64) []float64 {
		for i := range rows {
			k := i % dim
			rows[i] = (rows[i] - f.Mean[k]) / f.Scale[k]
		}
		return rows
	}
	h := set.bandwidth
	if h == 0 {
		next := scaleRows(p.Next.sorted())
		if len(next) < 2*dim {
			return nil, fmt.Errorf("ratio: %d transitions, need at least 2", len(next)/dim)
		}
		// Every pair of the sample counts: the draws of MedianOf only
		// reorder it.
		if h, err = minimax.Median(rand.New(rand.NewPCG(p.Learner.Seed, kernelStream)), next, dim, len(next)/dim); err != nil {
			return nil, errors.New("ratio: all sampled next states coincide; set Kernel.Bandwidth")
		}
	}
	f.Bandwidth = h
	f.Centres = scaleRows(p.Centres.sorted())
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
	if f.ByEpisode {
		return episodeFold(f.Seed, idHash)
	}
	return t * kernelFolds / T
}

// KernelMoments are the second pass's sums of one copy of the data: the
// loss's sums per fold and the discounted sums of phi over the logged
// states (Kernel's cbar is StateSum / StateWeight).
type KernelMoments struct {
	Folds       []*minimax.Sums
	StateSum    []float64
	StateWeight float64
	// Transitions counts the loss's terms (dummies included) and Steps
	// the logged states, with multiplicity.
	Transitions, Steps int
}

// NewMoments returns zero sums.
func (f *KernelFeatures) NewMoments() *KernelMoments {
	_, psi := f.maps()
	p := f.NumFeatures()
	m := &KernelMoments{StateSum: make([]float64, p)}
	for range kernelFolds {
		m.Folds = append(m.Folds, minimax.NewSums(psi.dim(), p))
	}
	return m
}

// KernelEpisode is one episode's share of the second pass, formed once
// by KernelFeatures.Episode and added to every copy with its
// multiplicity. Phi holds phi(x_t) for every step t (T rows of
// NumFeatures values), which the estimator's own sums reuse.
type KernelEpisode struct {
	Phi         []float64
	parts       [kernelFolds]*minimax.Sums
	used        [kernelFolds]bool
	state       []float64
	weight      float64
	transitions int
	steps       int
	ch          *minimax.Chunk
	x, fn       []float64
}

// Episode forms the share of episode e of d (checked as KernelPrep.Add
// checks it) in ep, which it reuses.
func (f *KernelFeatures) Episode(d *dataset.Dataset, e int, ep *KernelEpisode) error {
	if d.StateDim != len(f.Mean) {
		return fmt.Errorf("ratio: states of dimension %d, the model's are %d", d.StateDim, len(f.Mean))
	}
	if err := checkKernelEpisode(d, e); err != nil {
		return err
	}
	phi, psi := f.maps()
	dk, dw, dim := psi.dim(), phi.size(), len(f.Mean)
	if ep.ch == nil {
		ep.ch = minimax.NewChunk(minimax.ChunkLen, dk, dw)
		ep.x, ep.fn = make([]float64, dim), make([]float64, dw)
		ep.state = make([]float64, dw)
	}
	for k := range ep.parts {
		if ep.used[k] {
			ep.parts[k] = zeroSums(ep.parts[k])
		}
		ep.used[k] = false
	}
	clear(ep.state)
	ep.weight, ep.transitions = 0, 0
	lo, hi := d.Span(e)
	T := hi - lo
	ep.steps = T
	ep.Phi = slices.Grow(ep.Phi[:0], T*dw)[:T*dw]
	if T == 0 {
		return nil
	}
	gamma := f.Gamma
	// phi(x_t) and the discounted state sums.
	g := 1.0
	for j := lo; j < hi; j++ {
		t := j - lo
		f.scale(ep.x, d.ObsAt(j))
		row := ep.Phi[t*dw : (t+1)*dw]
		phi.features(ep.x, row)
		for i, v := range row {
			ep.state[i] += g * v
		}
		ep.weight += g
		g *= gamma
	}
	// The loss's terms, in the order of kernelTransitions, flushed per
	// fold in chunks of at most ChunkLen.
	idh := fnv1a(d.IDs[e])
	ch := ep.ch
	n, fold := 0, -1
	var a *minimax.Sums
	flush := func() {
		if n > 0 {
			a.Accumulate(ch, n)
			n = 0
		}
	}
	term := func(fd int, rho, beta float64, t int, next []float64, dummy bool) {
		if fd != fold || n == ChunkLen {
			flush()
			if fd != fold {
				fold = fd
				if ep.parts[fd] == nil {
					ep.parts[fd] = minimax.NewSums(dk, dw)
				}
				ep.used[fd] = true
				a = ep.parts[fd]
			}
		}
		pr := ch.L[n*dk : (n+1)*dk]
		f.scale(ep.x, next)
		psi.features(ep.x, pr)
		for q := range pr {
			pr[q] *= rho
		}
		phi.features(ep.x, ep.fn)
		gr, rr := ch.G[n*dw:(n+1)*dw], ch.R[n*dw:(n+1)*dw]
		if dummy {
			for q := range gr {
				gr[q] = -ep.fn[q]
			}
			ch.C[n] = 1
		} else {
			fs := ep.Phi[t*dw : (t+1)*dw]
			for q := range gr {
				gr[q] = beta*fs[q] - ep.fn[q]
			}
			ch.C[n] = 0
		}
		for q := range rr {
			rr[q] = rho * gr[q]
		}
		ch.RC[n] = rho * ch.C[n]
		a.Z += rho
		a.Z2 += rho * rho
		a.H0 += ch.RC[n] * ch.RC[n]
		n++
		ep.transitions++
	}
	if gamma < 1 {
		term(f.foldOf(idh, 0, T), 1, 0, 0, d.ObsAt(lo), true)
	}
	g = gamma // gamma^(t+1)
	for j := lo; j < hi; j++ {
		if next, ok := d.NextObs(e, j); ok && g > 0 {
			t := j - lo
			term(f.foldOf(idh, t, T), g, math.Exp(d.LogTarget[j]-d.LogBehavior[j]), t, next, false)
		}
		g *= gamma
	}
	flush()
	return nil
}

// ChunkLen is the number of terms accumulated at once.
const ChunkLen = minimax.ChunkLen

// zeroSums clears s.
func zeroSums(s *minimax.Sums) *minimax.Sums {
	clear(s.S)
	clear(s.U)
	clear(s.H)
	clear(s.Hv)
	s.Z, s.Z2, s.H0 = 0, 0, 0
	return s
}

// Add adds episode ep with multiplicity k.
func (m *KernelMoments) Add(ep *KernelEpisode, k int) {
	if k == 0 {
		return
	}
	a := float64(k)
	for f, used := range ep.used {
		if used {
			m.Folds[f].AddScaled(ep.parts[f], a)
		}
	}
	for i, v := range ep.state {
		m.StateSum[i] += a * v
	}
	m.StateWeight += a * ep.weight
	m.Transitions += k * ep.transitions
	m.Steps += k * ep.steps
}

// Merge adds o's sums.
func (m *KernelMoments) Merge(o *KernelMoments) {
	for f := range m.Folds {
		m.Folds[f].Add(o.Folds[f])
	}
	for i, v := range o.StateSum {
		m.StateSum[i] += v
	}
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
func (l Kernel) solveSums(model *KernelModel, folds []*minimax.Sums, cbar []float64) error {
	all := minimax.Total(folds)
	nu := l.Ridge
	if nu == 0 {
		cv, err := minimax.CrossValidate(all, folds, cbar, nil, kernelRidges, l.Signed, 1e-2)
		if err != nil {
			return fmt.Errorf("ratio: %w", err)
		}
		nu, model.Folds, model.Grid, model.HeldOutLoss, model.HeldOutSE = cv.Ridge, cv.Folds, cv.Grid, cv.Loss, cv.SE
	}
	sol, err := minimax.NewQP(all, cbar, nil)
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

// Features sets dst (NumFeatures values) to phi(x) of the logged state
// obs: the features w is linear in.
func (f *KernelFeatures) Features(dst, obs []float64) {
	phi, _ := f.maps()
	x := make([]float64, len(obs))
	f.scale(x, obs)
	phi.features(x, dst)
}
