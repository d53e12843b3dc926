package ope

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ratio"
)

var _ TwoPassSums = (*KernelRatioSums)(nil)

// kernelTop is the number of steps of largest q whose features
// KernelRatioSums keeps for the largest weight's share.
const kernelTop = 64

// KernelRatioSums are bch-kernel's statistics, filled in two passes
// (TwoPassSums). The first pass is ratio.KernelPrep (the states' scaling,
// the number of episodes, the samples of states and next states that fix
// the bandwidth and the centres) and MaxLogQ, the largest log(gamma^t
// beta_j) over the steps. EndFirst fixes the features
// (ratio.KernelFeatures). The second pass sums, per copy, the loss's
// moments per fold (ratio.KernelMoments) and, since w(s) = phi(x)^T theta
// is linear in its features, the estimate's sums A = sum_j q_j r_j
// phi(x_j) and B = sum_j q_j phi(x_j), q_j = gamma^t beta_j exp(-MaxLogQ):
// then R = theta^T A / theta^T B, with theta ratio.Kernel.FitMoments's
// solution, the in-memory fit's cross-validation and solve on the same
// numbers.
//
// The weights' diagnostics from sums (copy 0): the halves' sums A1, B1,
// A2, B2 give Result.Transient; Q2 = sum_j q_j^2 phi phi^T gives
// sum_j v_j^2 = theta^T Q2 theta and so the Kish effective sample size
// exactly. The largest weight max_j q_j w(s_j) is not a sum: the stream
// keeps the features of the kernelTop steps of largest q, whose weights
// are exact, and bounds every other step's by OutQ sup_x w(x) <= OutQ
// sum_k theta_k (OutQ the largest q not kept, each bump at most 1, theta
// >= 0). WeightSummary.MaxShare is the larger of the two over sum_j v_j:
// the in-memory value when the largest weight is among the steps kept
// (the usual case, the weights following q), otherwise an upper bound.
//
// The bootstrap copies keep the features of the whole log (the first
// pass is not resampled) and resample the moments: the in-memory
// bootstrap refits the scaling, the bandwidth and the centres on every
// resample. Memory is that of the copies' moments, about 5 (D_k + P) P
// floats each (2 MB at the defaults D_k = 256, P = 129), whatever the
// number of steps.
type KernelRatioSums struct {
	Gamma   float64
	Learner ratio.Kernel
	// First is the first pass, nil once ended; MaxLogQ is the largest
	// log(gamma^t beta_j).
	First   *ratio.KernelPrep
	MaxLogQ Float
	// Features are fixed by EndFirst; Moments, A and B are per copy.
	Features       *ratio.KernelFeatures
	Moments        []*ratio.KernelMoments
	A, B           []Floats
	A1, B1, A2, B2 Floats
	// Q2 is sum_j q_j^2 phi phi^T (P x P, upper triangle).
	Q2 Floats
	// TopQ and TopPhi are the q and features of the kernelTop steps of
	// largest q; OutQ is the largest q of the others.
	TopQ, TopPhi Floats
	OutQ         Float
	Count        []int64 // episodes (blocks, in AddBlocks) with multiplicity, per copy
	Steps        int

	ep       ratio.KernelEpisode
	buf      []float64
	test     *kernelTest // the value test EndFirst adds (kernelTestedSums)
	topMin   int
	topKnown bool
}

func newKernelRatioSums(l ratio.Kernel, gamma float64, copies int) (*KernelRatioSums, error) {
	if l.Signed {
		return nil, errors.New("bch-kernel cannot stream a signed fit: its warning counts the logged states where w < 0, which needs every step's w; run it on a log that fits in memory")
	}
	s := &KernelRatioSums{Gamma: gamma, Learner: l, MaxLogQ: Float(math.Inf(-1)), Count: make([]int64, copies)}
	return s, nil
}

// FirstPass implements TwoPassSums.
func (s *KernelRatioSums) FirstPass() bool { return s.Features == nil }

// AddFirst implements TwoPassSums.
func (s *KernelRatioSums) AddFirst(d *dataset.Dataset, e int) error {
	const name = "bch-kernel"
	if s.Features != nil {
		return fmt.Errorf("%s: the first pass has ended", name)
	}
	if err := checkBehavior(name, d); err != nil {
		return err
	}
	if s.First == nil {
		p, err := s.Learner.NewPrep(d.StateDim, s.Gamma)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		s.First = p
	}
	if err := s.First.Add(d, e); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	lg := math.Log(s.Gamma)
	lo, hi := d.Span(e)
	for j := lo; j < hi; j++ {
		if v := d.LogRatio(j) + float64(j-lo)*lg; v > float64(s.MaxLogQ) {
			s.MaxLogQ = Float(v)
		}
	}
	return nil
}

// EndFirst implements TwoPassSums.
func (s *KernelRatioSums) EndFirst() error {
	const name = "bch-kernel"
	if s.Features != nil {
		return nil
	}
	if s.First == nil {
		return fmt.Errorf("%s: no episodes", name)
	}
	f, err := s.First.Features()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if s.test != nil {
		g, took := f.WithValue(s.test.v, s.test.next, s.test.start)
		if !took {
			return fmt.Errorf("%s: the value test does not match the log", name)
		}
		f = g
	}
	p := f.NumFeatures()
	s.Features, s.First = f, nil
	copies := len(s.Count)
	s.Moments, s.A, s.B = make([]*ratio.KernelMoments, copies), make([]Floats, copies), make([]Floats, copies)
	for c := range copies {
		s.Moments[c] = f.NewMoments()
		s.A[c], s.B[c] = make(Floats, p), make(Floats, p)
	}
	s.A1, s.B1, s.A2, s.B2 = make(Floats, p), make(Floats, p), make(Floats, p), make(Floats, p)
	s.Q2 = make(Floats, p*p)
	return nil
}

// Add implements Sums (the second pass).
func (s *KernelRatioSums) Add(d *dataset.Dataset, e int, mult []int) error {
	return s.AddBlocks(d, e, d.Len(e), func(int) []int { return mult })
}

// AddBlocks implements BlockSums: the second pass of episode e in blocks
// of length steps, each block's share (ratio.KernelFeatures.EpisodeRange)
// added to copy c mult(b)[c] times.
func (s *KernelRatioSums) AddBlocks(d *dataset.Dataset, e, length int, mult func(b int) []int) error {
	const name = "bch-kernel"
	if s.Features == nil {
		return fmt.Errorf("%s: the first pass has not ended (it fixes the features the second pass sums)", name)
	}
	if err := checkBehavior(name, d); err != nil {
		return err
	}
	lo, hi := d.Span(e)
	T := hi - lo
	if T == 0 {
		return s.Features.Episode(d, e, &s.ep) // checks the episode
	}
	if length <= 0 {
		return fmt.Errorf("%s: blocks of %d steps", name, length)
	}
	for b, a := 0, 0; a < T; b, a = b+1, a+length {
		if err := s.addRange(d, e, a, min(a+length, T), mult(b)); err != nil {
			return err
		}
	}
	return nil
}

// addRange adds steps [a, b) of episode e, in copy c mult[c] times.
func (s *KernelRatioSums) addRange(d *dataset.Dataset, e, a, b int, mult []int) error {
	const name = "bch-kernel"
	if err := s.Features.EpisodeRange(d, e, a, b, &s.ep); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	lo, hi := d.Span(e)
	T, n := hi-lo, b-a
	p := s.Features.NumFeatures()
	// q_j, then the block's A and B, once for all copies.
	s.buf = slices.Grow(s.buf[:0], n+2*p)[:n+2*p]
	qs, ea, eb := s.buf[:n], s.buf[n:n+p], s.buf[n+p:]
	clear(ea)
	clear(eb)
	lg := math.Log(s.Gamma)
	half := T / 2
	phi := s.ep.Phi
	for i := range n {
		t := a + i
		j := lo + t
		q := math.Exp(d.LogRatio(j) + float64(t)*lg - float64(s.MaxLogQ))
		qs[i] = q
		r := d.Reward[j]
		row := phi[i*p : (i+1)*p]
		var a1, b1 Floats
		switch {
		case t < half:
			a1, b1 = s.A1, s.B1
		case t >= T-half:
			a1, b1 = s.A2, s.B2
		}
		for k, v := range row {
			ea[k] += q * r * v
			eb[k] += q * v
			if a1 != nil {
				a1[k] += q * r * v
				b1[k] += q * v
			}
		}
		s.top(q, row)
	}
	// Q2 += sum_t (q_t phi_t)(q_t phi_t)^T: scale the rows in place (phi
	// is the block's scratch, not used after this).
	for i := range n {
		for k := i * p; k < (i+1)*p; k++ {
			phi[k] *= qs[i]
		}
	}
	blas64.Syrk(blas.Trans, 1, blas64.General{Rows: n, Cols: p, Stride: p, Data: phi[:n*p]}, 1,
		blas64.Symmetric{N: p, Stride: p, Data: s.Q2, Uplo: blas.Upper})
	s.Steps += n
	for c, k := range mult {
		if k == 0 {
			continue
		}
		s.Count[c] += int64(k)
		s.Moments[c].Add(&s.ep, k)
		fk := float64(k)
		for i := range p {
			s.A[c][i] += fk * ea[i]
			s.B[c][i] += fk * eb[i]
		}
	}
	return nil
}

// top offers a step of q and features row to the steps of largest q.
func (s *KernelRatioSums) top(q float64, row []float64) {
	p := len(row)
	if len(s.TopQ) < kernelTop {
		s.TopQ = append(s.TopQ, q)
		s.TopPhi = append(s.TopPhi, row...)
		s.topKnown = false
		return
	}
	if !s.topKnown {
		s.topMin, s.topKnown = 0, true
		for i, v := range s.TopQ {
			if v < s.TopQ[s.topMin] {
				s.topMin = i
			}
		}
	}
	m := s.topMin
	if q <= s.TopQ[m] {
		s.OutQ = Float(math.Max(float64(s.OutQ), q))
		return
	}
	s.OutQ = Float(math.Max(float64(s.OutQ), s.TopQ[m]))
	s.TopQ[m] = q
	copy(s.TopPhi[m*p:(m+1)*p], row)
	s.topKnown = false
}

// sameFeatures reports whether two ended first passes fixed the same
// features.
func sameFeatures(a, b *ratio.KernelFeatures) bool {
	return a.Gamma == b.Gamma && a.Seed == b.Seed && a.Bandwidth == b.Bandwidth && a.Pairs == b.Pairs &&
		a.ByEpisode == b.ByEpisode && a.Steps == b.Steps && slices.Equal(a.Mean, b.Mean) && slices.Equal(a.Scale, b.Scale) &&
		slices.Equal(a.Centres, b.Centres) && slices.Equal(a.Widths, b.Widths) && slices.Equal(a.Omega, b.Omega)
}

// Merge implements Sums: first passes with first passes, second passes
// (over the same features) with second passes.
func (s *KernelRatioSums) Merge(o Sums) error {
	const name = "bch-kernel"
	t, err := mergeCheck(name, o, s.Gamma, len(s.Count), func(t *KernelRatioSums) (float64, int) { return t.Gamma, len(t.Count) })
	if err != nil {
		return err
	}
	if t.Learner != s.Learner {
		return fmt.Errorf("%s: cannot merge sums of learner settings %+v into %+v", name, t.Learner, s.Learner)
	}
	if s.FirstPass() != t.FirstPass() {
		return fmt.Errorf("%s: cannot merge sums of the first pass with sums of the second", name)
	}
	if s.FirstPass() {
		switch {
		case t.First == nil:
		case s.First == nil:
			s.First = t.First
		default:
			if err := s.First.Merge(t.First); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		s.MaxLogQ = Float(math.Max(float64(s.MaxLogQ), float64(t.MaxLogQ)))
		return nil
	}
	if !sameFeatures(s.Features, t.Features) || s.MaxLogQ != t.MaxLogQ {
		return fmt.Errorf("%s: cannot merge second passes over different first passes", name)
	}
	for c := range s.Count {
		s.Count[c] += t.Count[c]
		s.Moments[c].Merge(t.Moments[c])
		for i := range s.A[c] {
			s.A[c][i] += t.A[c][i]
			s.B[c][i] += t.B[c][i]
		}
	}
	for _, f := range [][2]Floats{{s.A1, t.A1}, {s.B1, t.B1}, {s.A2, t.A2}, {s.B2, t.B2}, {s.Q2, t.Q2}} {
		for i, v := range f[1] {
			f[0][i] += v
		}
	}
	p := s.Features.NumFeatures()
	s.OutQ = Float(math.Max(float64(s.OutQ), float64(t.OutQ)))
	for i, q := range t.TopQ {
		s.top(q, t.TopPhi[i*p:(i+1)*p])
	}
	s.Steps += t.Steps
	return nil
}

// Finish implements Sums.
func (s *KernelRatioSums) Finish(c int) (Result, WeightSummary, error) {
	const name = "bch-kernel"
	if s.Features == nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: the first pass has not ended", name)
	}
	if s.Count[c] == 0 {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: no episodes", name)
	}
	if math.IsInf(float64(s.MaxLogQ), -1) {
		return Result{}, WeightSummary{}, fmt.Errorf("every logged action has target probability 0")
	}
	m, err := s.Learner.FitMoments(s.Features, s.Moments[c])
	if err != nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
	}
	theta := m.Coef
	num, den := dotF(theta, s.A[c]), dotF(theta, s.B[c])
	if !(den > 0) {
		return Result{}, WeightSummary{}, fmt.Errorf("the learned weights sum to %v", den)
	}
	res := Result{Value: num / den, Estimand: LongRun, Learner: s.Learner.Name(), Model: m}
	var ws WeightSummary
	if c == 0 {
		res.Transient = math.NaN()
		if d1, d2 := dotF(theta, s.B1), dotF(theta, s.B2); d1 > 0 && d2 > 0 {
			res.Transient = dotF(theta, s.A1)/d1 - dotF(theta, s.A2)/d2
		}
		p := len(theta)
		qt := make([]float64, p)
		blas64.Symv(1, blas64.Symmetric{N: p, Stride: p, Data: s.Q2, Uplo: blas.Upper},
			blas64.Vector{N: p, Inc: 1, Data: theta}, 0, blas64.Vector{N: p, Inc: 1, Data: qt})
		ws.Units = s.Steps
		if sq := dotF(theta, qt); sq > 0 {
			ws.ESS = den * den / sq
		}
		wmax := 0.0 // sup_x w(x): theta >= 0 and every bump is at most 1
		for _, v := range theta {
			wmax += v
		}
		top := float64(s.OutQ) * wmax
		for i, q := range s.TopQ {
			top = math.Max(top, q*dotF(theta, s.TopPhi[i*p:(i+1)*p]))
		}
		ws.MaxShare = top / den
		for _, w := range m.Warnings() {
			res.Warnings = append(res.Warnings, name+": "+w)
		}
	}
	return res, ws, nil
}

func dotF(x []float64, y []float64) float64 {
	s := 0.0
	for i, v := range x {
		s += v * y[i]
	}
	return s
}
