package value

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/kernelloss"
	"gonum.org/v1/gonum/floats"
)

// This file splits MQL's kernel fit into the two passes over the data
// that a stream of shards can make (package stream); the in-memory fit
// makes the same two passes:
//
//  1. MQLPrep: the states' per-dimension mean and variance
//     (kernelloss.Welford), the number of non-empty episodes (which decides
//     the folds of a cross-validation) and a bottom-k sample of
//     rffMedianStates states (kernelloss.BottomK: every step's key a fixed
//     hash of its episode's id and t, so the sample is uniform without
//     replacement and the same however the log is split), whose median
//     pairwise distance times Bandwidth is the kernel's scale.
//     MQLPrep.Features fixes the scaling (q's monomials) and the random
//     Fourier features of the kernel (drawn from a generator no data
//     enters).
//  2. MQLMoments: the loss's sums per fold (kernelloss.Quadratic) and the sum of
//     the target's expected features at the episodes' first states,
//     sum_e E_{a~pi} phi(s^e_0, a), which the estimate reads q at (q
//     being linear in phi, (1 - gamma) E_d0[v(s_0)] = (1 - gamma)
//     theta^T sum_e phi(s^e_0, pi) / m), each episode's share formed
//     once (MQLStream.Episode) and added to every bootstrap copy with
//     its multiplicity. MQL.FitMoments solves, as Fit does.
//
// With CrossValidate an episode's fold is a fixed hash of its id modulo 5
// (fewer than five non-empty episodes: step t of an episode of T steps
// is in fold floor(5 t / T)).

const (
	mqlMedianSalt = 0x6d716c2d6d656469 // "mql-medi"
	mqlFoldSalt   = 0x6d716c2d666f6c64 // "mql-fold"
)

// mqlSettings are MQL's kernel settings with the defaults filled.
type mqlSettings struct {
	degree, dk, workers int
	bw                  float64
}

func (l MQL) kernelSettings() (mqlSettings, error) {
	if l.Degree < 0 || l.KernelFeatures < 0 || l.Workers < 0 || !(l.Ridge >= 0) || math.IsInf(l.Ridge, 0) ||
		!(l.Bandwidth >= 0) || math.IsInf(l.Bandwidth, 0) {
		return mqlSettings{}, fmt.Errorf("value: mql: settings %+v, want finite values >= 0", l)
	}
	s := mqlSettings{degree: l.Degree, dk: l.KernelFeatures, bw: l.Bandwidth, workers: l.Workers}
	if s.degree == 0 {
		s.degree = 4
	}
	if s.dk == 0 {
		s.dk = 128
	}
	if s.bw == 0 {
		s.bw = 1
	}
	if s.workers == 0 {
		s.workers = runtime.GOMAXPROCS(0)
	}
	return s, nil
}

// MQLKernel are the settings of MQL's kernel fit (the fields of MQL its
// two passes read), comparable.
type MQLKernel struct {
	Degree, KernelFeatures int
	Bandwidth, Ridge       float64
	CrossValidate          bool
}

// kernel returns l's kernel settings.
func (l MQL) kernel() MQLKernel {
	return MQLKernel{Degree: l.Degree, KernelFeatures: l.KernelFeatures, Bandwidth: l.Bandwidth, Ridge: l.Ridge, CrossValidate: l.CrossValidate}
}

// learner returns the MQL of settings k.
func (k MQLKernel) learner() MQL {
	return MQL{Degree: k.Degree, KernelFeatures: k.KernelFeatures, Bandwidth: k.Bandwidth, Ridge: k.Ridge, CrossValidate: k.CrossValidate}
}

// MQLPrep is the first pass of MQL's kernel fit (see the top of this
// file).
type MQLPrep struct {
	Kernel          MQLKernel
	Gamma           float64
	Dim, NumActions int
	States          kernelloss.Welford
	Episodes        int
	// Sample holds (state, action) vectors for real actions, states
	// for discrete ones.
	Sample kernelloss.BottomK
	// ActionDim is the length of a real action (0 for discrete actions),
	// Actions their per-dimension mean and variance.
	ActionDim int
	Actions   kernelloss.Welford
}

// NewPrep returns an empty first pass of l's kernel fit for discount
// gamma.
func (l MQL) NewPrep(gamma float64) (*MQLPrep, error) {
	if err := checkDiscount("mql", gamma); err != nil {
		return nil, err
	}
	if l.Neural {
		return nil, errors.New("value: mql: the neural form has no two-pass fit")
	}
	if _, err := l.kernelSettings(); err != nil {
		return nil, err
	}
	return &MQLPrep{Kernel: l.kernel(), Gamma: gamma}, nil
}

// checkMQLEpisode checks the columns of d and the steps of episode e as
// the kernel fit reads them. For real actions the target's draws are
// checked where they are read (MQLFeatures.Episode).
func checkMQLEpisode(d *dataset.Dataset, e int) error {
	if d.StateDim <= 0 {
		return errors.New("value: mql needs real-valued states (StateDim > 0); use the tabular learner for discrete states")
	}
	if d.ActionDim == 0 {
		if _, err := newRealTarget("mql", d, Target{}); err != nil {
			return err
		}
	}
	lo, hi := d.Span(e)
	for j := lo; j < hi; j++ {
		if err := checkRealStep("mql", d, e, j); err != nil {
			return err
		}
	}
	return nil
}

// Add adds episode e of d.
func (p *MQLPrep) Add(d *dataset.Dataset, e int) error {
	if err := checkMQLEpisode(d, e); err != nil {
		return err
	}
	if p.Dim == 0 {
		p.Dim, p.NumActions, p.ActionDim = d.StateDim, d.NumActions, d.ActionDim
		p.States = kernelloss.NewWelford(p.Dim)
		if p.ActionDim > 0 {
			p.Actions = kernelloss.NewWelford(p.ActionDim)
		}
		p.Sample = kernelloss.BottomK{K: rffMedianStates, Dim: p.Dim + p.ActionDim}
	}
	if d.StateDim != p.Dim || d.NumActions != p.NumActions || d.ActionDim != p.ActionDim {
		return fmt.Errorf("value: mql: %d state components, %d actions and %d action components, the first episodes' %d, %d and %d",
			d.StateDim, d.NumActions, d.ActionDim, p.Dim, p.NumActions, p.ActionDim)
	}
	lo, hi := d.Span(e)
	if hi == lo {
		return nil
	}
	p.Episodes++
	idh := kernelloss.HashID(d.IDs[e])
	row := make([]float64, p.Dim+p.ActionDim)
	for j := lo; j < hi; j++ {
		obs := d.ObsAt(j)
		p.States.Add(obs)
		if p.ActionDim > 0 {
			p.Actions.Add(d.ActionVecAt(j))
		}
		if key := kernelloss.StepKey(mqlMedianSalt, idh, j-lo); p.Sample.Admits(key) {
			copy(row, obs)
			if p.ActionDim > 0 {
				copy(row[p.Dim:], d.ActionVecAt(j))
			}
			p.Sample.Add(key, row)
		}
	}
	return nil
}

// Merge adds o's episodes.
func (p *MQLPrep) Merge(o *MQLPrep) error {
	if p.Kernel != o.Kernel || p.Gamma != o.Gamma {
		return errors.New("value: mql: cannot merge first passes of different settings")
	}
	if o.Dim == 0 {
		return nil
	}
	if p.Dim == 0 {
		p.Dim, p.NumActions, p.ActionDim = o.Dim, o.NumActions, o.ActionDim
		p.States = kernelloss.NewWelford(p.Dim)
		if p.ActionDim > 0 {
			p.Actions = kernelloss.NewWelford(p.ActionDim)
		}
		p.Sample = kernelloss.BottomK{K: o.Sample.K, Dim: o.Sample.Dim}
	}
	if p.Dim != o.Dim || p.NumActions != o.NumActions || p.ActionDim != o.ActionDim {
		return errors.New("value: mql: cannot merge first passes of different shapes")
	}
	p.States.Merge(&o.States)
	if p.ActionDim > 0 {
		p.Actions.Merge(&o.Actions)
	}
	p.Episodes += o.Episodes
	p.Sample.Merge(&o.Sample)
	return nil
}

// MQLFeatures are the feature maps of MQL's kernel fit, fixed by the
// first pass: the scaling of q's monomials and the scale Sigma of the
// kernel's random Fourier features, the number of folds (1, or 5 to
// cross-validate) and whether they are episode-wise.
//
// For real actions (ActionDim > 0, ActionMean and ActionScale their
// scaling) q's features are the joint monomials of the standardised
// (state, action) vector z = (x, y) of degree at most Degree (Linear's
// "poly" features for real actions), and the kernel is the Gaussian of
// z, exp(-||z - z~||^2 / (2 Sigma^2)), in KernelFeatures random Fourier
// features of z: the product of the state's and the action's Gaussian
// kernels, where discrete actions have 1[a = a~]. The target's expected
// features E_{a~pi} phi(s, a) at the next and start states are the mean
// over the actions drawn from Target.Continuous there (ihope estimate
// --target-draws), as fqe's (ActionDraws).
type MQLFeatures struct {
	Kernel          MQLKernel
	Gamma           float64
	Dim, NumActions int
	Mean, Scale     []float64
	Sigma           float64
	Folds           int
	ByEpisode       bool

	ActionDim               int
	ActionMean, ActionScale []float64

	f   *linFeatures
	psi rffMap
	set mqlSettings
	// target reads the draws of real actions (set by the in-memory fit;
	// a stream has none and cannot fit real actions).
	target realTarget
}

// Features fixes the feature maps from the first pass.
func (p *MQLPrep) Features() (*MQLFeatures, error) {
	if p.States.N == 0 {
		return nil, errors.New("value: mql: no logged states")
	}
	set, err := p.Kernel.learner().kernelSettings()
	if err != nil {
		return nil, err
	}
	f := &MQLFeatures{Kernel: p.Kernel, Gamma: p.Gamma, Dim: p.Dim, NumActions: p.NumActions, Folds: 1, ActionDim: p.ActionDim}
	f.Mean, f.Scale = p.States.Scaling()
	if p.ActionDim > 0 {
		f.ActionMean, f.ActionScale = p.Actions.Scaling()
	}
	if p.Kernel.CrossValidate {
		f.Folds, f.ByEpisode = mqlFolds, p.Episodes >= mqlFolds
	}
	xs := p.Sample.Sorted()
	joint := scaler{mean: append(slices.Clone(f.Mean), f.ActionMean...), scale: append(slices.Clone(f.Scale), f.ActionScale...)}
	joint.applyRows(xs, p.Dim+p.ActionDim)
	f.Sigma = set.bw * medianOfRows(xs, p.Dim+p.ActionDim)
	return f, f.init()
}

// applyRows standardises the rows of xs (dim values each) in place.
func (s scaler) applyRows(xs []float64, dim int) {
	for i := 0; i+dim <= len(xs); i += dim {
		s.apply(xs[i:i+dim], xs[i:i+dim])
	}
}

// init builds the feature maps (after Features, or a decode).
func (f *MQLFeatures) init() error {
	if f.f != nil {
		return nil
	}
	set, err := f.Kernel.learner().kernelSettings()
	if err != nil {
		return err
	}
	lf := &linFeatures{state: scaler{mean: f.Mean, scale: f.Scale}, numActions: f.NumActions, stateDim: f.Dim}
	nvar := f.Dim + f.ActionDim
	if numMonomials(nvar, set.degree, maxLinearFeatures) < 0 {
		return fmt.Errorf("value: mql: degree %d in %d variables gives more than %d features; lower Degree", set.degree, nvar, maxLinearFeatures)
	}
	lf.smono = newMonomials(f.Dim, set.degree)
	lf.nb = lf.smono.len()
	lf.P = lf.nb
	if f.ActionDim > 0 {
		lf.numActions, lf.actionDim = 0, f.ActionDim
		lf.action = scaler{mean: f.ActionMean, scale: f.ActionScale}
		lf.jointPoly(set.degree)
	}
	lf.p = lf.P * max(lf.numActions, 1)
	if lf.p > maxLinearFeatures {
		return fmt.Errorf("value: mql: %d features (times %d actions) is more than %d; lower Degree", lf.P, f.NumActions, maxLinearFeatures)
	}
	f.f, f.psi, f.set = lf, newRFFSigma(nvar, set.dk, f.Sigma), set
	return nil
}

// Same reports whether g fixed the same features as f.
func (f *MQLFeatures) Same(g *MQLFeatures) bool {
	return f.Kernel == g.Kernel && f.Gamma == g.Gamma && f.Dim == g.Dim && f.NumActions == g.NumActions &&
		f.Sigma == g.Sigma && f.Folds == g.Folds && f.ByEpisode == g.ByEpisode &&
		slices.Equal(f.Mean, g.Mean) && slices.Equal(f.Scale, g.Scale) && f.ActionDim == g.ActionDim &&
		slices.Equal(f.ActionMean, g.ActionMean) && slices.Equal(f.ActionScale, g.ActionScale)
}

// NumFeatures returns p, the coefficients of q (without rho).
func (f *MQLFeatures) NumFeatures() int {
	if f.init() != nil {
		return 0
	}
	return f.f.p
}

// dims returns D (test entries) and P (coefficients, rho included for
// gamma = 1).
func (f *MQLFeatures) dims() (int, int) {
	P := f.f.p
	if f.Gamma == 1 {
		P++
	}
	return max(f.NumActions, 1) * f.psi.d, P
}

// foldOf returns the fold of step t of an episode of T steps whose id
// hashes to idHash.
func (f *MQLFeatures) foldOf(idHash uint64, t, T int) int {
	folds := mqlFolds
	if f.Folds == 1 {
		folds = 1
	}
	return kernelloss.FoldOf(folds, f.ByEpisode, mqlFoldSalt, idHash, t, T)
}

// MQLMoments are the second pass's sums of one copy of the data: the
// loss's sums per fold, the counts of transitions, and Start, the sum of
// E_{a~pi} phi(s_0, a) over the Episodes first states.
type MQLMoments struct {
	Folds                []*kernelloss.Quadratic
	Transitions, Skipped int
	Start                []float64
	Episodes             int
}

// NewMoments returns zero sums.
func (f *MQLFeatures) NewMoments() *MQLMoments {
	if f.init() != nil {
		return nil
	}
	D, P := f.dims()
	m := &MQLMoments{Start: make([]float64, f.f.p)}
	for range f.Folds {
		m.Folds = append(m.Folds, kernelloss.NewQuadratic(D, P))
	}
	return m
}

// MQLEpisode is one episode's share of the second pass, formed once by
// MQLFeatures.Episode and added to every copy with its multiplicity.
type MQLEpisode struct {
	m     *MQLMoments
	used  []bool
	ch    *kernelloss.Chunk
	sc    *linScratch
	z, ps []float64
}

// Episode forms the share of episode e of d in ep, which it reuses.
func (f *MQLFeatures) Episode(d *dataset.Dataset, e int, ep *MQLEpisode) error {
	if err := f.init(); err != nil {
		return err
	}
	if err := checkMQLEpisode(d, e); err != nil {
		return err
	}
	if d.StateDim != f.Dim || d.NumActions != f.NumActions || d.ActionDim != f.ActionDim {
		return fmt.Errorf("value: mql: %d state components, %d actions and %d action components, the first pass's %d, %d and %d",
			d.StateDim, d.NumActions, d.ActionDim, f.Dim, f.NumActions, f.ActionDim)
	}
	if f.ActionDim > 0 {
		return f.episodeReal(d, e, ep)
	}
	lf, psi, gamma := f.f, f.psi, f.Gamma
	dk, nA, p := psi.d, f.NumActions, lf.p
	_, P := f.dims()
	if ep.m == nil || len(ep.m.Folds) != f.Folds || ep.m.Folds[0].P != P || len(ep.ps) != dk {
		*ep = MQLEpisode{m: f.NewMoments(), used: make([]bool, f.Folds), ch: kernelloss.NewChunk(kernelloss.ChunkLen, dk, P),
			sc: lf.newScratch(realTarget{numActions: nA}), z: make([]float64, f.Dim), ps: make([]float64, dk)}
	}
	ep.reset()
	m := ep.m
	lo, hi := d.Span(e)
	T := hi - lo
	if T == 0 {
		return nil
	}
	m.Episodes = 1
	lf.expected(ep.sc, d.ObsAt(lo), d.TargetProbsAt(lo))
	copy(m.Start, ep.sc.psi)
	idh := kernelloss.HashID(d.IDs[e])
	inv := 1 / math.Sqrt(float64(dk))
	ch, sc := ep.ch, ep.sc
	for act := range nA {
		w := kernelloss.FoldChunk{Chunk: ch, Folds: m.Folds, Used: ep.used[:],
			Add: func(q *kernelloss.Quadratic, ch *kernelloss.Chunk, n int) { q.AccumulateRows(ch, n, act*dk, dk) }}
		for j := lo; j < hi; j++ {
			if int(d.Action[j]) != act {
				continue
			}
			next, ok := d.NextObs(e, j)
			if !ok {
				continue
			}
			probs, ok := d.NextTargetProbs(e, j)
			if !ok {
				m.Skipped++
				continue
			}
			r, a := w.Row(f.foldOf(idh, j-lo, T))
			// Transition i: l_i = psi(s_i, a_i) (the kernel's features in
			// block a_i), h_i = gamma phi(s'_i, pi) - phi(s_i, a_i) (and -1
			// for rho), c_i = r_i.
			lf.state.apply(ep.z, d.ObsAt(j))
			psi.eval(ep.ps, ep.z)
			lrow := ch.L[r*dk : (r+1)*dk]
			sq := 0.0
			for t, v := range ep.ps {
				lrow[t] = v * inv
				sq += lrow[t] * lrow[t]
			}
			nl := math.Sqrt(sq)
			g := ch.G[r*P : (r+1)*P]
			lf.expected(sc, next, probs)
			for t, v := range sc.psi {
				g[t] = gamma * v
			}
			blk := lf.stateAction(sc.x, sc, d, j)
			for t, v := range sc.x {
				g[blk*lf.P+t] -= v
			}
			if gamma == 1 {
				g[p] = -1
			}
			addTransition(ch, a, r, P, g, nl, sq, d.Reward[j])
			m.Transitions++
		}
		w.Flush()
	}
	return nil
}

// episodeReal is Episode for real actions: one block, the kernel's
// features of the standardised (state, action) vector, and the target's
// expected features at the next and start states the mean over its
// draws there.
func (f *MQLFeatures) episodeReal(d *dataset.Dataset, e int, ep *MQLEpisode) error {
	if f.target.cont == nil || f.target.actionDim != f.ActionDim {
		return errors.New("value: mql on real actions needs actions drawn from the target at the logged states (Target.Continuous; ihope estimate --target-draws), which a stream of shards does not carry")
	}
	lf, psi, gamma := f.f, f.psi, f.Gamma
	dk, p := psi.d, lf.p
	_, P := f.dims()
	if ep.m == nil || len(ep.m.Folds) != f.Folds || ep.m.Folds[0].P != P || len(ep.ps) != dk || ep.sc.smp == nil {
		*ep = MQLEpisode{m: f.NewMoments(), used: make([]bool, f.Folds), ch: kernelloss.NewChunk(kernelloss.ChunkLen, dk, P),
			sc: lf.newScratch(f.target), z: make([]float64, f.Dim+f.ActionDim), ps: make([]float64, dk)}
	}
	ep.reset()
	m := ep.m
	lo, hi := d.Span(e)
	T := hi - lo
	if T == 0 {
		return nil
	}
	ch, sc := ep.ch, ep.sc
	// expected sets sc.psi = E_{a~pi} phi(obs, a) from the draws at obs.
	expected := func(obs []float64, what string, j int) error {
		lf.expected(sc, obs, nil)
		if !allFinite(sc.psi) {
			return fmt.Errorf("value: mql: episode %q step %d: at the %s state, %w", d.IDs[e], j-lo, what, errNoDraw)
		}
		return nil
	}
	if err := expected(d.ObsAt(lo), "start", lo); err != nil {
		return err
	}
	m.Episodes = 1
	copy(m.Start, sc.psi)
	idh := kernelloss.HashID(d.IDs[e])
	inv := 1 / math.Sqrt(float64(dk))
	w := kernelloss.FoldChunk{Chunk: ch, Folds: m.Folds, Used: ep.used[:],
		Add: func(q *kernelloss.Quadratic, ch *kernelloss.Chunk, n int) { q.AccumulateRows(ch, n, 0, dk) }}
	for j := lo; j < hi; j++ {
		next, ok := d.NextObs(e, j)
		if !ok {
			continue
		}
		r, a := w.Row(f.foldOf(idh, j-lo, T))
		// Transition i: l_i = psi(s_i, a_i), h_i = gamma phi(s'_i, pi) -
		// phi(s_i, a_i) (and -1 for rho), c_i = r_i, as for discrete
		// actions with one block.
		if err := expected(next, "next", j); err != nil {
			return err
		}
		g := ch.G[r*P : (r+1)*P]
		for t, v := range sc.psi {
			g[t] = gamma * v
		}
		lf.stateAction(sc.x, sc, d, j) // also leaves the standardised (s_j, a_j) in sc.z
		for t, v := range sc.x {
			g[t] -= v
		}
		if gamma == 1 {
			g[p] = -1
		}
		psi.eval(ep.ps, sc.z)
		lrow := ch.L[r*dk : (r+1)*dk]
		sq := 0.0
		for t, v := range ep.ps {
			lrow[t] = v * inv
			sq += lrow[t] * lrow[t]
		}
		nl := math.Sqrt(sq)
		addTransition(ch, a, r, P, g, nl, sq, d.Reward[j])
		m.Transitions++
	}
	w.Flush()
	return nil
}

// Add adds episode ep with multiplicity k.
func (m *MQLMoments) Add(ep *MQLEpisode, k int) {
	if k == 0 || ep.m == nil {
		return
	}
	a := float64(k)
	o := ep.m
	kernelloss.AddFolds(m.Folds, o.Folds, ep.used[:], a)
	floats.AddScaled(m.Start, a, o.Start)
	m.Transitions += k * o.Transitions
	m.Skipped += k * o.Skipped
	m.Episodes += k * o.Episodes
}

// Merge adds o's sums.
func (m *MQLMoments) Merge(o *MQLMoments) {
	kernelloss.MergeFolds(m.Folds, o.Folds)
	floats.Add(m.Start, o.Start)
	m.Transitions += o.Transitions
	m.Skipped += o.Skipped
	m.Episodes += o.Episodes
}

// momentsOf makes the second pass over d in memory, as a stream of the
// same episodes would (kernelloss.SecondPass).
func (f *MQLFeatures) momentsOf(d *dataset.Dataset, workers int) (*MQLMoments, error) {
	return kernelloss.SecondPass(f.NewMoments(), d.NumEpisodes(), workers,
		func(e int, ep *MQLEpisode) error { return f.Episode(d, e, ep) })
}

// FitMoments solves for q on the sums m over the features f, as Fit does
// on the data in memory (the ridge cross-validated over the folds if
// CrossValidate).
func (l MQL) FitMoments(f *MQLFeatures, m *MQLMoments) (*MQLKernelModel, error) {
	if err := f.init(); err != nil {
		return nil, err
	}
	if m.Transitions < 2 {
		return nil, fmt.Errorf("value: mql: %d transitions, need at least 2", m.Transitions)
	}
	gamma, lf := f.Gamma, f.f
	p := lf.p
	all := kernelloss.Total(m.Folds)
	penalty := ownCurvature(all, func(t int) bool {
		return t < p && (gamma == 1 || t%lf.P != 0) // the constant is monomial 0 of each block
	})
	target := realTarget{numActions: f.NumActions}
	if f.ActionDim > 0 {
		target = f.target
	}
	model := &MQLKernelModel{f: lf, target: target, rho: math.NaN(),
		Transitions: m.Transitions, Skipped: m.Skipped}
	nu := l.Ridge
	if nu == 0 {
		nu = DefaultMQLRidge
	}
	if l.CrossValidate {
		cv, err := kernelloss.CrossValidate(all, m.Folds, nil, penalty, mqlRidges, true, 1e-2)
		if err != nil {
			return nil, fmt.Errorf("value: mql: %w", err)
		}
		nu, model.Folds, model.Grid, model.HeldOutLoss, model.HeldOutSE = cv.Ridge, cv.Folds, cv.Grid, cv.Loss, cv.SE
	}
	qp, err := kernelloss.NewQP(all, nil, penalty)
	if err != nil {
		return nil, fmt.Errorf("value: mql: %w", err)
	}
	theta, _, err := qp.Solve(nu, true, nil)
	if err != nil {
		return nil, fmt.Errorf("value: mql: %w", err)
	}
	model.Ridge, model.Lambda, model.Loss = nu, nu*qp.Scale, all.VLoss(theta)
	model.theta = theta[:p]
	if gamma == 1 {
		model.rho = theta[p]
	}
	return model, nil
}

// MeanStartValue returns (1/m) sum_e v(s^e_0) = theta^T Start / Episodes
// over the first states of m's episodes.
func (m *MQLKernelModel) MeanStartValue(mo *MQLMoments) float64 {
	return dot(mo.Start, m.theta) / float64(mo.Episodes)
}

// ownCurvature returns the diagonal penalty that gives each penalised
// coefficient t (penalised(t)) a ridge in proportion to its own curvature
// Q_tt = sum_r S_rt^2 / z^2, relative to their mean: with kernelloss.QP's
// Scale (the mean curvature) the ridge on t is then nu Q_tt, as if every
// coefficient's feature had been scaled to unit curvature first. A
// uniform ridge (nu times the mean curvature on every coefficient) shrank
// the low-degree coefficients of q, whose curvature is far below the
// quartic ones', hardest; at gamma = 1 on a log that starts away from
// stationarity the shrunk part of q(s) - q(s') moved into rho, a bias of
// -0.03 to -0.10 that did not shrink with the data (see MQL). A
// coefficient with no curvature at all (an action never logged) gets
// penalty 1, the mean's ridge, which sets it to 0; QP.Scale then averages
// over it too, so with z such coefficients among m the others' ridge is
// nu Q_tt m'/(m' + z), m' = m - z, slightly less than nu Q_tt.
func ownCurvature(k *kernelloss.Quadratic, penalised func(t int) bool) []float64 {
	P := k.P
	curv := make([]float64, P)
	mean, count := 0.0, 0
	for t := range P {
		if !penalised(t) {
			continue
		}
		for r := range k.D {
			v := k.S[r*P+t] / k.Z
			curv[t] += v * v
		}
		mean += curv[t]
		count++
	}
	pen := make([]float64, P*P)
	if count == 0 || !(mean > 0) {
		return pen
	}
	mean /= float64(count)
	for t := range P {
		if !penalised(t) {
			continue
		}
		pen[t*P+t] = 1
		if curv[t] > 0 {
			pen[t*P+t] = curv[t] / mean
		}
	}
	return pen
}

// reset zeroes the episode's sums for the next episode, keeping their
// storage.
func (ep *MQLEpisode) reset() {
	m := ep.m
	for fo, used := range ep.used {
		if used {
			m.Folds[fo].Reset()
			ep.used[fo] = false
		}
	}
	clear(m.Start)
	m.Transitions, m.Skipped, m.Episodes = 0, 0, 0
}

// addTransition writes one transition's row r of the chunk: the Bellman
// features g scaled by the test function's norm nl (sq = nl^2) and the
// reward rw, and counts it in the fold's sums a.
func addTransition(ch *kernelloss.Chunk, a *kernelloss.Quadratic, r, P int, g []float64, nl, sq, rw float64) {
	for t, v := range g {
		ch.R[r*P+t] = nl * v
	}
	ch.C[r], ch.RC[r] = rw, nl*rw
	a.Z++
	a.Z2++
	a.H0 += sq * rw * rw
}
