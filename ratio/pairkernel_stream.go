package ratio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/kernelloss"
	"github.com/ihope-ope/ihope/value"
)

// This file splits the kernel fit of MWL and DualDICE (fitPairKernel)
// into the two passes over the data that a stream of shards can make
// (package stream), as kernel_stream.go does for Kernel; the in-memory
// fit makes the same two passes:
//
//  1. PairKernelPrep: the states' per-dimension mean and variance
//     (kernelloss.Welford), the number of non-empty episodes (which decides
//     the folds) and of the loss's transitions, and two bottom-k samples
//     (kernelloss.BottomK), of the states (the bumps' centres) and of the
//     next states of the transitions (the median bandwidth): every step's
//     key is a fixed hash of Seed, its episode's id and t, so the samples
//     are uniform without replacement and the same whatever order or
//     split the log comes in. Features fixes the scaling, the bandwidth,
//     the centres and the kernel's frequencies (from
//     rand.NewPCG(Seed, pairKernelStream), which no data enters).
//  2. PairKernelMoments: the loss's sums per fold (kernelloss.Quadratic of the
//     transitions; the start terms apart, because their weight
//     rho0 = (1 - gamma) n / m needs the totals n and m of the copy),
//     and E_D[phi] and E_D[phi phi^T] (the normalisation and DualDICE's
//     penalty), each episode's share formed once (Episode) and added to
//     every bootstrap copy with its multiplicity. MWL.FitMoments and
//     DualDICE.FitMoments solve, as FitPairs does.
//
// With CrossValidate an episode's fold is a fixed hash of Seed and its
// id modulo 5 (with fewer than five non-empty episodes, step t of an
// episode of T steps is in fold floor(5 t / T)).

const (
	pairCentreSalt    = 0x706169722d63656e // "pair-cen"
	pairBandwidthSalt = 0x706169722d62616e // "pair-ban"
)

// pairKernelSettings are PairKernel's settings with the defaults filled.
type pairKernelSettings struct {
	dk, m, sample, workers int
}

func (l PairKernel) settings(name string) (pairKernelSettings, error) {
	s := pairKernelSettings{dk: l.KernelFeatures, m: l.Centres, sample: l.BandwidthSample, workers: l.Workers}
	if s.dk < 0 || s.m < 0 || s.workers < 0 || s.sample < 0 || !(l.Ridge >= 0) || math.IsInf(l.Ridge, 0) ||
		!(l.Bandwidth >= 0) || math.IsInf(l.Bandwidth, 0) {
		return s, fmt.Errorf("ratio: %s: settings %+v, want finite values >= 0", name, l)
	}
	if s.dk == 0 {
		s.dk = 64
	}
	s.dk += s.dk % 2
	if s.m == 0 {
		s.m = 64
	}
	if s.workers == 0 {
		s.workers = runtime.GOMAXPROCS(0)
	}
	if s.sample == 0 {
		s.sample = 1000
	}
	return s, nil
}

// PairKernelPrep is the first pass of the kernel fit of MWL or DualDICE
// (see the top of this file): add every episode with Add (or merge
// partial preps), then Features.
type PairKernelPrep struct {
	Name            string
	Kernel          PairKernel
	Gamma           float64
	Dim, NumActions int
	// ActionDim is the length of a real action, 0 for discrete actions.
	// For real actions States, Centres and Next hold (state, action)
	// vectors, Next those of the transitions (the bandwidth sample).
	ActionDim int
	States    kernelloss.Welford
	// Episodes counts the non-empty episodes, Transitions the loss's
	// transitions (steps with a next state and the target's distribution
	// there).
	Episodes, Transitions int
	// Centres samples the logged states, Next the next states of the
	// transitions (the bandwidth sample).
	Centres, Next kernelloss.BottomK
}

// NewPrep returns an empty first pass of the learner name ("mwl",
// "dualdice") with settings l and discount gamma.
func (l PairKernel) NewPrep(name string, gamma float64) (*PairKernelPrep, error) {
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("ratio: %s: discount %v outside (0, 1]", name, gamma)
	}
	if _, err := l.settings(name); err != nil {
		return nil, err
	}
	return &PairKernelPrep{Name: name, Kernel: l, Gamma: gamma}, nil
}

// checkPairColumns checks the columns of d for a state-action kernel
// learner: real states, discrete actions, the target's distributions.
func checkPairColumns(name string, d *dataset.Dataset) error {
	switch {
	case d == nil || d.StateDim <= 0:
		return fmt.Errorf("ratio: %s: the kernel fit needs real-valued states", name)
	case d.ActionDim > 0:
		return nil // the target's draws are checked where they are read
	case d.NumActions <= 0:
		return fmt.Errorf("ratio: %s: the logs have no actions (NumActions = 0, ActionDim = 0)", name)
	case !d.HasTargetProbs():
		return fmt.Errorf("ratio: %s needs the target's whole action distribution: target_prob_0, target_prob_1, ... columns", name)
	}
	return nil
}

// checkPairEpisode checks the steps of episode e: finite states, next
// states and rewards, actions in range (the behavior's probabilities are
// never read).
func checkPairEpisode(name string, d *dataset.Dataset, e int) error {
	lo, hi := d.Span(e)
	for j := lo; j < hi; j++ {
		next, ok := d.NextObs(e, j)
		if !finiteAll(d.ObsAt(j)) || ok && !finiteAll(next) || math.IsNaN(d.Reward[j]) || math.IsInf(d.Reward[j], 0) {
			return fmt.Errorf("ratio: %s: episode %q step %d: state, next state or reward not finite", name, d.IDs[e], j-lo)
		}
		if d.ActionDim > 0 {
			if !finiteAll(d.ActionVecAt(j)) {
				return fmt.Errorf("ratio: %s: episode %q step %d: action %v not finite", name, d.IDs[e], j-lo, d.ActionVecAt(j))
			}
		} else if a := d.Action[j]; a < 0 || int(a) >= d.NumActions {
			return fmt.Errorf("ratio: %s: episode %q step %d: action %d outside 0..%d", name, d.IDs[e], j-lo, a, d.NumActions-1)
		}
	}
	return nil
}

// Add adds episode e of d.
func (p *PairKernelPrep) Add(d *dataset.Dataset, e int) error {
	if err := checkPairColumns(p.Name, d); err != nil {
		return err
	}
	set, _ := p.Kernel.settings(p.Name)
	if p.Dim == 0 {
		p.Dim, p.NumActions, p.ActionDim = d.StateDim, d.NumActions, d.ActionDim
		jd := p.Dim + p.ActionDim
		p.States = kernelloss.NewWelford(jd)
		p.Centres = kernelloss.BottomK{K: set.m, Dim: jd}
		p.Next = kernelloss.BottomK{K: set.sample, Dim: jd}
	}
	if d.StateDim != p.Dim || d.NumActions != p.NumActions || d.ActionDim != p.ActionDim {
		return fmt.Errorf("ratio: %s: %d state components, %d actions and %d action components, the first episodes' %d, %d and %d",
			p.Name, d.StateDim, d.NumActions, d.ActionDim, p.Dim, p.NumActions, p.ActionDim)
	}
	if err := checkPairEpisode(p.Name, d, e); err != nil {
		return err
	}
	lo, hi := d.Span(e)
	if hi == lo {
		return nil
	}
	p.Episodes++
	idh := kernelloss.HashID(d.IDs[e])
	seed := p.Kernel.Seed
	row := make([]float64, p.Dim+p.ActionDim)
	for j := lo; j < hi; j++ {
		t := j - lo
		obs := d.ObsAt(j)
		if p.ActionDim > 0 {
			copy(row, obs)
			copy(row[p.Dim:], d.ActionVecAt(j))
			obs = row
		}
		p.States.Add(obs)
		if key := stepKey(seed, pairCentreSalt, idh, t); p.Centres.Admits(key) {
			p.Centres.Add(key, obs)
		}
		next, ok := d.NextObs(e, j)
		if !ok {
			continue
		}
		if p.ActionDim > 0 {
			next = obs // real actions: the bandwidth of the logged (s, a)
		} else if _, ok := d.NextTargetProbs(e, j); !ok {
			continue
		}
		p.Transitions++
		if key := stepKey(seed, pairBandwidthSalt, idh, t); p.Next.Admits(key) {
			p.Next.Add(key, next)
		}
	}
	return nil
}

// Merge adds o's episodes.
func (p *PairKernelPrep) Merge(o *PairKernelPrep) error {
	if p.Name != o.Name || p.Kernel != o.Kernel || p.Gamma != o.Gamma {
		return fmt.Errorf("ratio: %s: cannot merge first passes of different settings", p.Name)
	}
	if o.Dim == 0 {
		return nil
	}
	if p.Dim == 0 {
		p.Dim, p.NumActions, p.ActionDim = o.Dim, o.NumActions, o.ActionDim
		p.States = kernelloss.NewWelford(o.Dim + o.ActionDim)
		p.Centres = kernelloss.BottomK{K: o.Centres.K, Dim: o.Centres.Dim}
		p.Next = kernelloss.BottomK{K: o.Next.K, Dim: o.Next.Dim}
	}
	if p.Dim != o.Dim || p.NumActions != o.NumActions || p.ActionDim != o.ActionDim {
		return fmt.Errorf("ratio: %s: cannot merge first passes of different shapes", p.Name)
	}
	p.States.Merge(&o.States)
	p.Episodes += o.Episodes
	p.Transitions += o.Transitions
	p.Centres.Merge(&o.Centres)
	p.Next.Merge(&o.Next)
	return nil
}

// PairKernelFeatures are the feature maps of the kernel fit of MWL or
// DualDICE, fixed by the first pass: the scaling x = (s - Mean)/Scale,
// the bandwidth h, w's bumps (Centres, Widths; the same per action) and
// the frequencies of the kernel's random Fourier features (Omega, Pairs
// cosine-sine pairs), the number of folds (1, or 5 to cross-validate)
// and whether they are episode-wise.
//
// For real actions (ActionDim > 0) there is one block instead of one per
// action: Mean and Scale, the centres and the frequencies are those of
// the (state, action) vector z = (x, y), w(s, a) = phi(z)^T theta, and
// the kernel is the Gaussian of z (the product of the state's and the
// action's Gaussian kernels, where discrete actions have 1[a = a~]).
// The target's psi(s', pi) = E_{a'~pi} psi(s', a') at the next and start
// states is the mean over the actions drawn from it there
// (value.ActionDraws: ihope estimate --target-draws).
type PairKernelFeatures struct {
	Name            string
	Gamma           float64
	Seed            uint64
	Dim, NumActions int
	ActionDim       int
	Mean, Scale     []float64
	Bandwidth       float64
	Centres, Widths []float64
	Omega           []float64
	Pairs           int
	Folds           int
	ByEpisode       bool

	phi *bumps
	psi *fourier
	// draws reads the target's actions (real actions; set by the
	// in-memory fit, a stream has none).
	draws value.ActionDraws
}

// Features fixes the feature maps from the first pass.
func (p *PairKernelPrep) Features() (*PairKernelFeatures, error) {
	name := p.Name
	if p.Transitions < 2 {
		return nil, fmt.Errorf("ratio: %s: %d transitions, need at least 2", name, p.Transitions)
	}
	set, err := p.Kernel.settings(name)
	if err != nil {
		return nil, err
	}
	dim := p.Dim + p.ActionDim
	f := &PairKernelFeatures{Name: name, Gamma: p.Gamma, Seed: p.Kernel.Seed, Dim: p.Dim, NumActions: p.NumActions, ActionDim: p.ActionDim, Folds: 1}
	f.Mean, f.Scale = p.States.Scaling()
	if p.Kernel.CrossValidate {
		f.Folds, f.ByEpisode = kernelFolds, p.Episodes >= kernelFolds
	}
	scaleRows := func(rows []float64) []float64 {
		for i := range rows {
			k := i % dim
			rows[i] = (rows[i] - f.Mean[k]) / f.Scale[k]
		}
		return rows
	}
	h := p.Kernel.Bandwidth
	if h == 0 {
		// Every pair of the sample counts: the draws only reorder it.
		next := scaleRows(p.Next.Sorted())
		if h, err = kernelloss.Median(rand.New(rand.NewPCG(p.Kernel.Seed, pairKernelStream)), next, dim, len(next)/dim); err != nil {
			return nil, fmt.Errorf("ratio: %s: all sampled next states coincide; set the bandwidth", name)
		}
	}
	f.Bandwidth = h
	f.Centres = scaleRows(p.Centres.Sorted())
	f.Widths = make([]float64, len(f.Centres)/dim)
	for k := range f.Widths {
		f.Widths[k] = h * kernelWidths[k%len(kernelWidths)]
	}
	psi := newFourier(rand.New(rand.NewPCG(p.Kernel.Seed, pairKernelStream)), dim, set.dk, h, []float64{1})
	f.Omega, f.Pairs = psi.omega, psi.m
	return f, nil
}

// maps returns the feature maps phi (w's, per action) and psi (the
// kernel's, per action).
func (f *PairKernelFeatures) maps() (*bumps, *fourier) {
	if f.phi == nil {
		jd := f.Dim + f.ActionDim
		f.phi = &bumps{dim: jd, centres: f.Centres, widths: f.Widths, inv: invWidths(f.Widths)}
		f.psi = &fourier{in: jd, m: f.Pairs, omega: f.Omega, scale: math.Sqrt(1 / float64(f.Pairs))}
	}
	return f.phi, f.psi
}

// NumFeatures returns the number of w's coefficients, NumActions times
// (1 + the centres) (one block for real actions).
func (f *PairKernelFeatures) NumFeatures() int { return f.blocks() * (len(f.Widths) + 1) }

// blocks returns the number of blocks of the features: one per discrete
// action, one for real actions.
func (f *PairKernelFeatures) blocks() int { return max(f.NumActions, 1) }

// Same reports whether g fixed the same features as f.
func (f *PairKernelFeatures) Same(g *PairKernelFeatures) bool {
	return f.Name == g.Name && f.Gamma == g.Gamma && f.Seed == g.Seed && f.Dim == g.Dim && f.NumActions == g.NumActions && f.ActionDim == g.ActionDim &&
		f.Bandwidth == g.Bandwidth && f.Pairs == g.Pairs && f.Folds == g.Folds && f.ByEpisode == g.ByEpisode &&
		slices.Equal(f.Mean, g.Mean) && slices.Equal(f.Scale, g.Scale) && slices.Equal(f.Centres, g.Centres) &&
		slices.Equal(f.Widths, g.Widths) && slices.Equal(f.Omega, g.Omega)
}

func (f *PairKernelFeatures) scale(dst, obs []float64) {
	for k, v := range obs {
		dst[k] = (v - f.Mean[k]) / f.Scale[k]
	}
}

// scaleJoint writes the scaled (state, action) vector of real actions to
// dst (Dim + ActionDim entries).
func (f *PairKernelFeatures) scaleJoint(dst, obs, act []float64) {
	f.scale(dst, obs)
	for k, v := range act {
		dst[f.Dim+k] = (v - f.Mean[f.Dim+k]) / f.Scale[f.Dim+k]
	}
}

// foldOf returns the fold of step t of an episode of T steps whose id
// hashes to idHash.
func (f *PairKernelFeatures) foldOf(idHash uint64, t, T int) int {
	folds := kernelFolds
	if f.Folds == 1 {
		folds = 1
	}
	return kernelloss.FoldOf(folds, f.ByEpisode, f.Seed+foldSalt, idHash, t, T)
}

// PairKernelMoments are the second pass's sums of one copy of the data
// (see the top of this file).
type PairKernelMoments struct {
	// Folds are the loss's sums of the transitions per fold; Start[f]
	// sums psi(s_0, pi) over the episodes of fold f (StartN of them),
	// StartSq sums |psi(s_0, pi)|^2 (the U-statistic's diagonal).
	Folds   []*kernelloss.Quadratic
	Start   [][]float64
	StartN  []float64
	StartSq []float64
	// PhiSum sums phi(s, a) over the transitions and Second phi phi^T
	// (per action, the upper triangle of its k x k block).
	PhiSum, Second []float64
	// Transitions counts the loss's transitions, Skipped the steps with
	// a next state but without the target's distribution there.
	Transitions, Skipped int
}

// NewMoments returns zero sums.
func (f *PairKernelFeatures) NewMoments() *PairKernelMoments {
	phi, psi := f.maps()
	k, nA := phi.size(), f.blocks()
	D, P := nA*psi.dim(), nA*k
	m := &PairKernelMoments{StartN: make([]float64, f.Folds), StartSq: make([]float64, f.Folds),
		PhiSum: make([]float64, P), Second: make([]float64, nA*k*k)}
	for range f.Folds {
		m.Folds = append(m.Folds, kernelloss.NewQuadratic(D, P))
		m.Start = append(m.Start, make([]float64, D))
	}
	return m
}

// PairKernelEpisode is one episode's share of the second pass, formed
// once by PairKernelFeatures.Episode and added to every copy with its
// multiplicity. Besides the moments it holds the estimate's sums over
// the episode's steps with a next state (the transitions of
// ope.PairRatio, the target's distribution at the next state known or
// not): RewardPhi = sum r phi(s, a), StepPhi = sum phi(s, a) and StepSq
// = sum phi phi^T (per action, the upper triangle of its block), over
// Steps steps. w being linear in phi, E_D[w r] = theta^T RewardPhi /
// Steps.
type PairKernelEpisode struct {
	RewardPhi, StepPhi, StepSq []float64
	Steps                      int

	m          *PairKernelMoments
	used       []bool
	ch         *kernelloss.Chunk
	x, ps, pn  []float64
	fit, other []float64 // rows of phi for the second moments

	smp    *value.ActionSampler // real actions: the target's draws
	xa, pa []float64            // real actions: a drawn pair, its psi
}

// Episode forms the share of episode e of d in ep, which it reuses.
func (f *PairKernelFeatures) Episode(d *dataset.Dataset, e int, ep *PairKernelEpisode) error {
	name := f.Name
	if err := checkPairColumns(name, d); err != nil {
		return err
	}
	if d.StateDim != f.Dim || d.NumActions != f.NumActions || d.ActionDim != f.ActionDim {
		return fmt.Errorf("ratio: %s: %d state components, %d actions and %d action components, the first pass's %d, %d and %d",
			name, d.StateDim, d.NumActions, d.ActionDim, f.Dim, f.NumActions, f.ActionDim)
	}
	if err := checkPairEpisode(name, d, e); err != nil {
		return err
	}
	if f.ActionDim > 0 {
		return f.episodeReal(d, e, ep)
	}
	phi, psi := f.maps()
	k, dk, nA := phi.size(), psi.dim(), f.NumActions
	D, P := nA*dk, nA*k
	if ep.m == nil || len(ep.StepPhi) != P || len(ep.m.Folds) != f.Folds || ep.m.Folds[0].D != D {
		*ep = PairKernelEpisode{m: f.NewMoments(), used: make([]bool, f.Folds), ch: kernelloss.NewChunk(kernelloss.ChunkLen, D, k),
			x: make([]float64, f.Dim), ps: make([]float64, dk), pn: make([]float64, dk),
			fit: make([]float64, kernelloss.ChunkLen*k), other: make([]float64, kernelloss.ChunkLen*k),
			RewardPhi: make([]float64, P), StepPhi: make([]float64, P), StepSq: make([]float64, nA*k*k)}
	}
	ep.reset()
	m := ep.m
	lo, hi := d.Span(e)
	T := hi - lo
	if T == 0 {
		return nil
	}
	idh := kernelloss.HashID(d.IDs[e])
	gamma := f.Gamma
	if gamma < 1 {
		// The start term, l = psi(s_0, pi), h = 0, c = 1; its weight
		// rho0 is applied at the end (FitMoments).
		fo := f.foldOf(idh, 0, T)
		ep.used[fo] = true
		f.scale(ep.x, d.ObsAt(lo))
		psi.features(ep.x, ep.pn)
		st, sq := m.Start[fo], 0.0
		for b, pb := range d.TargetProbsAt(lo) {
			for q, v := range ep.pn {
				st[b*dk+q] += pb * v
			}
			sq += pb * pb
		}
		m.StartN[fo]++
		m.StartSq[fo] += sq
	}
	ch := ep.ch
	for act := range nA {
		nf, no := 0, 0
		w := kernelloss.FoldChunk{Chunk: ch, Folds: m.Folds, Used: ep.used[:],
			Add: func(q *kernelloss.Quadratic, ch *kernelloss.Chunk, n int) { q.AccumulateBlock(ch, n, act*k, k) }}
		second := func(rows []float64, n int, dst []float64) {
			if n > 0 {
				blas64.Syrk(blas.Trans, 1, blas64.General{Rows: n, Cols: k, Stride: k, Data: rows[:n*k]}, 1,
					blas64.Symmetric{N: k, Stride: k, Data: dst[act*k*k : (act+1)*k*k], Uplo: blas.Upper})
			}
		}
		for t := range T {
			j := lo + t
			if int(d.Action[j]) != act {
				continue
			}
			next, ok := d.NextObs(e, j)
			if !ok {
				continue
			}
			f.scale(ep.x, d.ObsAt(j))
			piNext, fits := d.NextTargetProbs(e, j)
			var fs []float64
			if fits {
				r, a := w.Row(f.foldOf(idh, t, T))
				if nf == kernelloss.ChunkLen {
					second(ep.fit, nf, m.Second)
					second(ep.fit, nf, ep.StepSq)
					nf = 0
				}
				fs = ep.fit[nf*k : (nf+1)*k]
				nf++
				phi.features(ep.x, fs)
				// Transition i: l_i = gamma psi(s'_i, pi) - psi(s_i, a_i),
				// block b being gamma pi(b|s'_i) psi(x'_i) - 1[b = a_i] psi(x_i),
				// and h_i = phi(s_i, a_i), the bumps of x_i in block a_i.
				psi.features(ep.x, ep.ps)
				f.scale(ep.x, next)
				psi.features(ep.x, ep.pn)
				row := ch.L[r*D : (r+1)*D]
				sq := 0.0
				for b := range nA {
					g := gamma * piNext[b]
					blk := row[b*dk : (b+1)*dk]
					for q, v := range ep.pn {
						blk[q] = g * v
					}
					if b == act {
						for q, v := range ep.ps {
							blk[q] -= v
						}
					}
					sq += kernelloss.Dot(blk, blk)
				}
				nl := math.Sqrt(sq)
				copy(ch.G[r*k:(r+1)*k], fs)
				for q, v := range fs {
					ch.R[r*k+q] = nl * v
				}
				ch.C[r], ch.RC[r] = 0, 0
				a.Z++
				a.Z2++
				m.Transitions++
				for q, v := range fs {
					m.PhiSum[act*k+q] += v
				}
			} else {
				m.Skipped++
				if no == kernelloss.ChunkLen {
					second(ep.other, no, ep.StepSq)
					no = 0
				}
				fs = ep.other[no*k : (no+1)*k]
				no++
				phi.features(ep.x, fs)
			}
			rw := d.Reward[j]
			for q, v := range fs {
				ep.RewardPhi[act*k+q] += rw * v
				ep.StepPhi[act*k+q] += v
			}
			ep.Steps++
		}
		w.Flush()
		second(ep.fit, nf, m.Second)
		second(ep.fit, nf, ep.StepSq)
		second(ep.other, no, ep.StepSq)
	}
	return nil
}

// episodeReal is Episode for real actions: one block, the features of
// the scaled (state, action) vector, and psi(s', pi) the mean of psi over
// the target's draws at s' (and at s_0 for the start term).
func (f *PairKernelFeatures) episodeReal(d *dataset.Dataset, e int, ep *PairKernelEpisode) error {
	name := f.Name
	if f.draws.ActionDim() != f.ActionDim {
		return fmt.Errorf("ratio: %s on real actions needs actions drawn from the target at the logged states (Target.Continuous; ihope estimate --target-draws), which a stream of shards does not carry", name)
	}
	phi, psi := f.maps()
	k, dk := phi.size(), psi.dim()
	D, P, jd := dk, k, f.Dim+f.ActionDim
	if ep.m == nil || len(ep.StepPhi) != P || len(ep.m.Folds) != f.Folds || ep.m.Folds[0].D != D || ep.smp == nil {
		*ep = PairKernelEpisode{m: f.NewMoments(), used: make([]bool, f.Folds), ch: kernelloss.NewChunk(kernelloss.ChunkLen, D, k),
			x: make([]float64, jd), ps: make([]float64, dk), pn: make([]float64, dk),
			fit: make([]float64, kernelloss.ChunkLen*k), RewardPhi: make([]float64, P), StepPhi: make([]float64, P), StepSq: make([]float64, k*k),
			smp: f.draws.NewSampler(), xa: make([]float64, jd), pa: make([]float64, dk)}
	}
	ep.reset()
	m := ep.m
	lo, hi := d.Span(e)
	T := hi - lo
	if T == 0 {
		return nil
	}
	// meanPsi sets dst = psi(s, pi), the mean of psi(s, a) over the
	// target's actions drawn at obs.
	meanPsi := func(dst, obs []float64, what string, t int) error {
		clear(dst)
		n := 0
		err := ep.smp.Each(obs, func(a []float64) {
			f.scaleJoint(ep.xa, obs, a)
			psi.features(ep.xa, ep.pa)
			for q, v := range ep.pa {
				dst[q] += v
			}
			n++
		})
		if err != nil {
			return fmt.Errorf("ratio: %s: episode %q step %d: at the %s state, %w", name, d.IDs[e], t, what, err)
		}
		inv := 1 / float64(n)
		for q := range dst {
			dst[q] *= inv
		}
		return nil
	}
	idh := kernelloss.HashID(d.IDs[e])
	gamma := f.Gamma
	if gamma < 1 {
		// The start term, l = psi(s_0, pi), h = 0, c = 1, as for
		// discrete actions.
		fo := f.foldOf(idh, 0, T)
		if err := meanPsi(ep.pn, d.ObsAt(lo), "start", 0); err != nil {
			return err
		}
		ep.used[fo] = true
		st := m.Start[fo]
		for q, v := range ep.pn {
			st[q] += v
		}
		m.StartN[fo]++
		m.StartSq[fo] += kernelloss.Dot(ep.pn, ep.pn)
	}
	ch := ep.ch
	nf := 0
	w := kernelloss.FoldChunk{Chunk: ch, Folds: m.Folds, Used: ep.used[:],
		Add: func(q *kernelloss.Quadratic, ch *kernelloss.Chunk, n int) { q.AccumulateBlock(ch, n, 0, k) }}
	second := func(rows []float64, n int, dst []float64) {
		if n > 0 {
			blas64.Syrk(blas.Trans, 1, blas64.General{Rows: n, Cols: k, Stride: k, Data: rows[:n*k]}, 1,
				blas64.Symmetric{N: k, Stride: k, Data: dst[:k*k], Uplo: blas.Upper})
		}
	}
	for t := range T {
		j := lo + t
		next, ok := d.NextObs(e, j)
		if !ok {
			continue
		}
		r, a := w.Row(f.foldOf(idh, t, T))
		if nf == kernelloss.ChunkLen {
			second(ep.fit, nf, m.Second)
			second(ep.fit, nf, ep.StepSq)
			nf = 0
		}
		fs := ep.fit[nf*k : (nf+1)*k]
		nf++
		// Transition i: l_i = gamma psi(s'_i, pi) - psi(s_i, a_i) and
		// h_i = phi(s_i, a_i).
		f.scaleJoint(ep.x, d.ObsAt(j), d.ActionVecAt(j))
		phi.features(ep.x, fs)
		psi.features(ep.x, ep.ps)
		if err := meanPsi(ep.pn, next, "next", t); err != nil {
			return err
		}
		row := ch.L[r*D : (r+1)*D]
		for q, v := range ep.pn {
			row[q] = gamma*v - ep.ps[q]
		}
		nl := math.Sqrt(kernelloss.Dot(row, row))
		copy(ch.G[r*k:(r+1)*k], fs)
		for q, v := range fs {
			ch.R[r*k+q] = nl * v
		}
		ch.C[r], ch.RC[r] = 0, 0
		a.Z++
		a.Z2++
		m.Transitions++
		rw := d.Reward[j]
		for q, v := range fs {
			m.PhiSum[q] += v
			ep.RewardPhi[q] += rw * v
			ep.StepPhi[q] += v
		}
		ep.Steps++
	}
	w.Flush()
	second(ep.fit, nf, m.Second)
	second(ep.fit, nf, ep.StepSq)
	return nil
}

// Add adds episode ep with multiplicity k.
func (m *PairKernelMoments) Add(ep *PairKernelEpisode, k int) {
	if k == 0 || ep.m == nil {
		return
	}
	a := float64(k)
	o := ep.m
	kernelloss.AddFolds(m.Folds, o.Folds, ep.used[:], a)
	for f, used := range ep.used {
		if used {
			floats.AddScaled(m.Start[f], a, o.Start[f])
			m.StartN[f] += a * o.StartN[f]
			m.StartSq[f] += a * o.StartSq[f]
		}
	}
	floats.AddScaled(m.PhiSum, a, o.PhiSum)
	floats.AddScaled(m.Second, a, o.Second)
	m.Transitions += k * o.Transitions
	m.Skipped += k * o.Skipped
}

// Merge adds o's sums.
func (m *PairKernelMoments) Merge(o *PairKernelMoments) {
	kernelloss.MergeFolds(m.Folds, o.Folds)
	for f := range m.Folds {
		floats.Add(m.Start[f], o.Start[f])
	}
	floats.Add(m.StartN, o.StartN)
	floats.Add(m.StartSq, o.StartSq)
	floats.Add(m.PhiSum, o.PhiSum)
	floats.Add(m.Second, o.Second)
	m.Transitions += o.Transitions
	m.Skipped += o.Skipped
}

// momentsOf makes the second pass over d in memory, as a stream of the
// same episodes would (kernelloss.SecondPass).
func (f *PairKernelFeatures) momentsOf(d *dataset.Dataset, workers int) (*PairKernelMoments, error) {
	return kernelloss.SecondPass(f.NewMoments(), d.NumEpisodes(), workers,
		func(e int, ep *PairKernelEpisode) error { return f.Episode(d, e, ep) })
}

// FitMoments solves for w on the sums m over the features f, as FitPairs
// does on the data in memory. The model's Negative count is not known
// from sums (0).
func (l MWL) FitMoments(f *PairKernelFeatures, m *PairKernelMoments) (*PairKernelModel, error) {
	return fitPairMoments("mwl", l.Kernel, penaltyBumps, f, m)
}

// FitMoments solves for w on the sums m over the features f, as FitPairs
// does on the data in memory. The model's Negative count is not known
// from sums (0).
func (l DualDICE) FitMoments(f *PairKernelFeatures, m *PairKernelMoments) (*PairKernelModel, error) {
	if l.Ridge < 0 {
		return nil, fmt.Errorf("ratio: dualdice: ridge %v, want >= 0", l.Ridge)
	}
	return fitPairMoments("dualdice", l.Kernel, penaltySecondMoment, f, m)
}

// reset zeroes the episode's sums for the next episode, keeping their
// storage (the folds it touched, the start moments, the step features).
func (ep *PairKernelEpisode) reset() {
	m := ep.m
	for fo := range m.Folds {
		if ep.used[fo] {
			m.Folds[fo].Reset()
			clear(m.Start[fo])
			ep.used[fo] = false
		}
	}
	clear(m.StartN)
	clear(m.StartSq)
	clear(m.PhiSum)
	clear(m.Second)
	clear(ep.RewardPhi)
	clear(ep.StepPhi)
	clear(ep.StepSq)
	m.Transitions, m.Skipped, ep.Steps = 0, 0, 0
}
