package ope

import (
	"errors"
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/value"
)

var (
	_ TwoPassSums = (*PairKernelSums)(nil)
	_ TwoPassSums = (*MQLKernelSums)(nil)
)

// PairKernelSums are the statistics of mwl and dualdice in their kernel
// form (real states, discrete actions), filled in two passes
// (TwoPassSums). The first pass is ratio.PairKernelPrep (the states'
// scaling, the counts of episodes and transitions, the samples of states
// and next states that fix the centres and the bandwidth); EndFirst fixes
// the features (ratio.PairKernelFeatures). The second pass sums, per
// copy, the loss's moments (ratio.PairKernelMoments) and, w(s, a) =
// phi(s, a)^T theta being linear in its features, the estimate's sums
// over the n steps with a next state, A = sum_j r_j phi(s_j, a_j) and
// B = sum_j phi(s_j, a_j): then
//
//	R = theta^T A / n   or, self-normalised (mwl),   R = theta^T A / theta^T B,
//
// theta being ratio.MWL.FitMoments's (ratio.DualDICE.FitMoments's)
// solution, the in-memory fit's solve on the same numbers.
//
// The weights' diagnostics (copy 0): Q2 = sum_j phi phi^T gives
// sum_j w_j^2 = theta^T Q2 theta, so the effective sample size
// (sum_j w_j)^2 / sum_j w_j^2 is exact. It is Kish's (sum_j |w_j|)^2 /
// sum_j w_j^2, which the in-memory estimator reports, where w >= 0 at
// every transition, and below it otherwise (w is signed, and a stream
// cannot sum |w_j| without w: on the linear-Gaussian test logs w < 0 at
// a third of the transitions and the stream's ESS is 0.6 of Kish's). The
// largest weight's share is not kept (WeightSummary.MaxShare is NaN, and
// the command line prints no share): the
// bound max_a sum_k |theta_ak| / sum_j w_j that bch-kernel's stream uses
// reaches 0.5-0.9 for dualdice's signed coefficients, against a true
// share of 0.003-0.004, and would raise false warnings. Nor is the
// warning of the in-memory fit that counts the transitions where w < 0.
//
// The bootstrap copies keep the first pass's features (the in-memory
// bootstrap refits them on every resample) and resample the moments.
type PairKernelSums struct {
	Name      string
	Gamma     float64
	Kernel    ratio.PairKernel
	Ridge     float64 // dualdice's tabular ridge, checked by its FitMoments
	Normalise bool
	// First is the first pass, nil once ended.
	First    *ratio.PairKernelPrep
	Features *ratio.PairKernelFeatures
	Moments  []*ratio.PairKernelMoments
	A, B     []Floats
	N, Count []int64
	Q2       Floats

	ep ratio.PairKernelEpisode
}

func newPairKernelSums(name string, l ratio.PairKernel, ridge float64, normalise bool, gamma float64, copies int) (*PairKernelSums, error) {
	p, err := l.NewPrep(name, gamma)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &PairKernelSums{Name: name, Gamma: gamma, Kernel: l, Ridge: ridge, Normalise: normalise, First: p,
		N: make([]int64, copies), Count: make([]int64, copies)}, nil
}

// FirstPass implements TwoPassSums.
func (s *PairKernelSums) FirstPass() bool { return s.Features == nil }

// AddFirst implements TwoPassSums.
func (s *PairKernelSums) AddFirst(d *dataset.Dataset, e int) error {
	if s.Features != nil {
		return fmt.Errorf("%s: the first pass has ended", s.Name)
	}
	if err := s.First.Add(d, e); err != nil {
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	return nil
}

// EndFirst implements TwoPassSums.
func (s *PairKernelSums) EndFirst() error {
	if s.Features != nil {
		return nil
	}
	f, err := s.First.Features()
	if err != nil {
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	s.Features, s.First = f, nil
	copies, p := len(s.Count), f.NumFeatures()
	s.Moments, s.A, s.B = make([]*ratio.PairKernelMoments, copies), make([]Floats, copies), make([]Floats, copies)
	for c := range copies {
		s.Moments[c] = f.NewMoments()
		s.A[c], s.B[c] = make(Floats, p), make(Floats, p)
	}
	// One block of features per action, or one block of joint (state,
	// action) features on real actions (NumActions 0).
	blocks := max(f.NumActions, 1)
	k := p / blocks
	s.Q2 = make(Floats, blocks*k*k)
	return nil
}

// Add implements Sums (the second pass).
func (s *PairKernelSums) Add(d *dataset.Dataset, e int, mult []int) error {
	if s.Features == nil {
		return fmt.Errorf("%s: the first pass has not ended (it fixes the features the second pass sums)", s.Name)
	}
	if err := s.Features.Episode(d, e, &s.ep); err != nil {
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	for i, v := range s.ep.StepSq {
		s.Q2[i] += v
	}
	for c, k := range mult {
		if k == 0 {
			continue
		}
		s.Count[c] += int64(k)
		s.N[c] += int64(k * s.ep.Steps)
		s.Moments[c].Add(&s.ep, k)
		fk := float64(k)
		for i, v := range s.ep.RewardPhi {
			s.A[c][i] += fk * v
			s.B[c][i] += fk * s.ep.StepPhi[i]
		}
	}
	return nil
}

// Merge implements Sums: first passes with first passes, second passes
// (over the same features) with second passes.
func (s *PairKernelSums) Merge(o Sums) error {
	t, err := mergeCheck(s.Name, o, s.Gamma, len(s.Count), func(t *PairKernelSums) (float64, int) { return t.Gamma, len(t.Count) })
	if err != nil {
		return err
	}
	if t.Name != s.Name || t.Kernel != s.Kernel || t.Ridge != s.Ridge || t.Normalise != s.Normalise {
		return fmt.Errorf("%s: cannot merge sums of other settings", s.Name)
	}
	if s.FirstPass() != t.FirstPass() {
		return fmt.Errorf("%s: cannot merge sums of the first pass with sums of the second", s.Name)
	}
	if s.FirstPass() {
		if err := s.First.Merge(t.First); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		return nil
	}
	if !s.Features.Same(t.Features) {
		return fmt.Errorf("%s: cannot merge second passes over different first passes", s.Name)
	}
	for c := range s.Count {
		s.Count[c] += t.Count[c]
		s.N[c] += t.N[c]
		s.Moments[c].Merge(t.Moments[c])
		for i := range s.A[c] {
			s.A[c][i] += t.A[c][i]
			s.B[c][i] += t.B[c][i]
		}
	}
	for i, v := range t.Q2 {
		s.Q2[i] += v
	}
	return nil
}

// Finish implements Sums.
func (s *PairKernelSums) Finish(c int) (Result, WeightSummary, error) {
	name := s.Name
	if s.Features == nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: the first pass has not ended", name)
	}
	if s.Count[c] == 0 {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: no episodes", name)
	}
	var m *ratio.PairKernelModel
	var err error
	switch name {
	case "mwl":
		m, err = ratio.MWL{Kernel: s.Kernel}.FitMoments(s.Features, s.Moments[c])
	case "dualdice":
		m, err = ratio.DualDICE{Ridge: s.Ridge, Kernel: s.Kernel}.FitMoments(s.Features, s.Moments[c])
	default:
		err = fmt.Errorf("unknown learner %q", name)
	}
	if err != nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
	}
	theta := m.Coef
	num, den, n := dotF(theta, s.A[c]), dotF(theta, s.B[c]), s.N[c]
	if n == 0 || !(den > 0) {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: the learned weights sum to %v over %d transitions", name, den, n)
	}
	val := num / float64(n)
	if s.Normalise {
		val = num / den
	}
	if math.IsNaN(val) || math.IsInf(val, 0) {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: the estimate is %v", name, val)
	}
	res := Result{Value: val, Estimand: LongRun, Model: m, Learner: "kernel"}
	var ws WeightSummary
	if c == 0 {
		nA := max(s.Features.NumActions, 1) // blocks, as in EndFirst
		k := len(theta) / nA
		sq := 0.0
		for a := range nA {
			th := theta[a*k : (a+1)*k]
			blk := s.Q2[a*k*k : (a+1)*k*k]
			for i := range k {
				sq += th[i] * th[i] * blk[i*k+i]
				for j := i + 1; j < k; j++ {
					sq += 2 * th[i] * th[j] * blk[i*k+j]
				}
			}
		}
		ws.Units, ws.MaxShare = int(n), math.NaN() // not kept
		if sq > 0 {
			ws.ESS = den * den / sq
		}
		for _, w := range m.Warnings() {
			res.Warnings = append(res.Warnings, name+": "+w)
		}
	}
	return res, ws, nil
}

// MQLKernelSums are mql's statistics in its kernel form (real states,
// discrete actions), filled in two passes (TwoPassSums): the first is
// value.MQLPrep (the states' scaling, the number of episodes, a sample of
// states for the kernel's scale), EndFirst fixes the features
// (value.MQLFeatures), and the second sums, per copy, the loss's moments
// and the target's expected features at the episodes' first states
// (value.MQLMoments). Finish solves with value.MQL.FitMoments, the
// in-memory fit's solve, and reads q at the first states:
//
//	R = (1 - gamma) theta^T sum_e phi(s^e_0, pi) / m   (gamma < 1),   R = rho   (gamma = 1).
//
// In memory mql checks q's values at every step against what the rewards
// allow (10 max|r| / (1 - gamma)) and refuses a diverged model; a stream
// holds no per-step values and does not make that check.
type MQLKernelSums struct {
	Gamma    float64
	Learner  value.MQLKernel
	First    *value.MQLPrep
	Features *value.MQLFeatures
	Moments  []*value.MQLMoments
	Count    []int64

	ep value.MQLEpisode
}

func newMQLKernelSums(l value.MQL, gamma float64, copies int) (*MQLKernelSums, error) {
	p, err := l.NewPrep(gamma)
	if err != nil {
		return nil, fmt.Errorf("mql: %w", err)
	}
	return &MQLKernelSums{Gamma: gamma, Learner: p.Kernel, First: p, Count: make([]int64, copies)}, nil
}

// FirstPass implements TwoPassSums.
func (s *MQLKernelSums) FirstPass() bool { return s.Features == nil }

// AddFirst implements TwoPassSums.
func (s *MQLKernelSums) AddFirst(d *dataset.Dataset, e int) error {
	if s.Features != nil {
		return errors.New("mql: the first pass has ended")
	}
	if err := s.First.Add(d, e); err != nil {
		return fmt.Errorf("mql: %w", err)
	}
	return nil
}

// EndFirst implements TwoPassSums.
func (s *MQLKernelSums) EndFirst() error {
	if s.Features != nil {
		return nil
	}
	f, err := s.First.Features()
	if err != nil {
		return fmt.Errorf("mql: %w", err)
	}
	s.Features, s.First = f, nil
	s.Moments = make([]*value.MQLMoments, len(s.Count))
	for c := range s.Count {
		s.Moments[c] = f.NewMoments()
	}
	return nil
}

// Add implements Sums (the second pass).
func (s *MQLKernelSums) Add(d *dataset.Dataset, e int, mult []int) error {
	if s.Features == nil {
		return errors.New("mql: the first pass has not ended (it fixes the features the second pass sums)")
	}
	if err := s.Features.Episode(d, e, &s.ep); err != nil {
		return fmt.Errorf("mql: %w", err)
	}
	for c, k := range mult {
		if k == 0 {
			continue
		}
		s.Count[c] += int64(k)
		s.Moments[c].Add(&s.ep, k)
	}
	return nil
}

// Merge implements Sums.
func (s *MQLKernelSums) Merge(o Sums) error {
	t, err := mergeCheck("mql", o, s.Gamma, len(s.Count), func(t *MQLKernelSums) (float64, int) { return t.Gamma, len(t.Count) })
	if err != nil {
		return err
	}
	if t.Learner != s.Learner || s.FirstPass() != t.FirstPass() {
		return errors.New("mql: cannot merge sums of other settings or of the other pass")
	}
	if s.FirstPass() {
		return s.First.Merge(t.First)
	}
	if !s.Features.Same(t.Features) {
		return errors.New("mql: cannot merge second passes over different first passes")
	}
	for c := range s.Count {
		s.Count[c] += t.Count[c]
		s.Moments[c].Merge(t.Moments[c])
	}
	return nil
}

// Finish implements Sums.
func (s *MQLKernelSums) Finish(c int) (Result, WeightSummary, error) {
	const name = "mql"
	if s.Features == nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: the first pass has not ended", name)
	}
	mo := s.Moments[c]
	if s.Count[c] == 0 || mo.Episodes == 0 {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: no episodes", name)
	}
	m, err := value.MQL{Degree: s.Learner.Degree, KernelFeatures: s.Learner.KernelFeatures, Bandwidth: s.Learner.Bandwidth,
		Ridge: s.Learner.Ridge, CrossValidate: s.Learner.CrossValidate}.FitMoments(s.Features, mo)
	if err != nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
	}
	v := m.Rho()
	if s.Gamma < 1 {
		v = (1 - s.Gamma) * m.MeanStartValue(mo)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: the value model gives %v", name, v)
	}
	return Result{Value: v, Estimand: LongRun, Model: m, Learner: "kernel"}, WeightSummary{}, nil
}
