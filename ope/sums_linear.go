package ope

import (
	"fmt"
	"math"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/value"
)

var _ TwoPassSums = (*LinearFQESums)(nil)

// LinearFQESums are fqe's statistics with the linear value learner
// (--value-model linear), in two passes (TwoPassSums): the first is
// value.LinearPrep (the states' scaling, the longest episode, the largest
// |reward| and a sample of steps), the second, per copy, the LSTD-Q
// moments (value.LinearMoments) and, per episode length T, the sum of the
// target's expected features at the first states, S_T = sum_{i: T_i = T}
// E_{a~pi} phi(s^i_0, a). Then the estimate is linear in them:
//
//	Horizon:  R = (1/m) sum_T g0(T) theta_T^T S_T       (g0(T) = 1/sum_{t<T} gamma^t)
//	LongRun:  R = (1 - gamma) (1/m) theta^T sum_T S_T   (gamma < 1), rho (gamma = 1)
//
// with the coefficients value.LinearStream.Fit solves, the in-memory fit's
// LSTD-Q on the same sums. In memory fqe checks the model's values at
// every step against what the rewards allow (a diverged model's estimate
// means nothing); a stream holds no per-step values, so it checks them at
// the first pass's sample of 1,000 steps instead (the same bound, 10
// max|r| times the horizon), which catches a model diverged over the
// states the log visits but not one that diverges at a few steps only.
type LinearFQESums struct {
	Gamma    float64
	Estimand Estimand
	Learner  value.Linear
	First    *value.LinearPrep
	Stream   *value.LinearStream
	Moments  []*value.LinearMoments
	// Starts[c][T] is S_T of copy c.
	Starts []map[int][]float64
	Count  []int64

	ep value.LinearEpisode
}

func newLinearFQESums(l value.Linear, est Estimand, gamma float64, copies int) (*LinearFQESums, error) {
	p, err := l.NewPrep(gamma)
	if err != nil {
		return nil, fmt.Errorf("fqe: %w", err)
	}
	return &LinearFQESums{Gamma: gamma, Estimand: est, Learner: l, First: p, Count: make([]int64, copies)}, nil
}

// FirstPass implements TwoPassSums.
func (s *LinearFQESums) FirstPass() bool { return s.Stream == nil }

// AddFirst implements TwoPassSums.
func (s *LinearFQESums) AddFirst(d *dataset.Dataset, e int) error {
	if s.Stream != nil {
		return fmt.Errorf("fqe: the first pass has ended")
	}
	if d.Len(e) == 0 {
		return fmt.Errorf("fqe: episode %q has no steps", d.IDs[e])
	}
	if err := s.First.Add(d, e); err != nil {
		return fmt.Errorf("fqe: %w", err)
	}
	return nil
}

// EndFirst implements TwoPassSums.
func (s *LinearFQESums) EndFirst() error {
	if s.Stream != nil {
		return nil
	}
	st, err := s.First.Features()
	if err != nil {
		return fmt.Errorf("fqe: %w", err)
	}
	s.Stream, s.First = st, nil
	s.Moments, s.Starts = make([]*value.LinearMoments, len(s.Count)), make([]map[int][]float64, len(s.Count))
	for c := range s.Count {
		s.Moments[c], s.Starts[c] = st.NewMoments(), map[int][]float64{}
	}
	return nil
}

// Add implements Sums (the second pass).
func (s *LinearFQESums) Add(d *dataset.Dataset, e int, mult []int) error {
	if s.Stream == nil {
		return fmt.Errorf("fqe: the first pass has not ended (it fixes the features the second pass sums)")
	}
	if err := s.Stream.Episode(d, e, &s.ep); err != nil {
		return fmt.Errorf("fqe: %w", err)
	}
	T := s.ep.T
	for c, k := range mult {
		if k == 0 {
			continue
		}
		s.Count[c] += int64(k)
		s.Moments[c].Add(&s.ep, k)
		st := s.Starts[c][T]
		if st == nil {
			st = make([]float64, len(s.ep.Psi0))
			s.Starts[c][T] = st
		}
		for i, v := range s.ep.Psi0 {
			st[i] += float64(k) * v
		}
	}
	return nil
}

// Merge implements Sums.
func (s *LinearFQESums) Merge(o Sums) error {
	t, err := mergeCheck("fqe", o, s.Gamma, len(s.Count), func(t *LinearFQESums) (float64, int) { return t.Gamma, len(t.Count) })
	if err != nil {
		return err
	}
	if t.Learner != s.Learner || t.Estimand != s.Estimand || s.FirstPass() != t.FirstPass() {
		return fmt.Errorf("fqe: cannot merge sums of other settings or of the other pass")
	}
	if s.FirstPass() {
		return s.First.Merge(t.First)
	}
	if a, b := s.Stream, t.Stream; !slices.Equal(a.Mean, b.Mean) || !slices.Equal(a.Scale, b.Scale) || a.MaxLen != b.MaxLen ||
		a.MaxAbsReward != b.MaxAbsReward || !slices.Equal(a.Check.Keys, b.Check.Keys) {
		return fmt.Errorf("fqe: cannot merge second passes over different first passes")
	}
	for c := range s.Count {
		s.Count[c] += t.Count[c]
		s.Moments[c].Merge(t.Moments[c])
		for T, v := range t.Starts[c] {
			st := s.Starts[c][T]
			if st == nil {
				s.Starts[c][T] = slices.Clone(v)
				continue
			}
			for i, x := range v {
				st[i] += x
			}
		}
	}
	return nil
}

// Finish implements Sums.
func (s *LinearFQESums) Finish(c int) (Result, WeightSummary, error) {
	const name = "fqe"
	if s.Stream == nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: the first pass has not ended", name)
	}
	if s.Count[c] == 0 {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: no episodes", name)
	}
	m, err := s.Stream.Fit(s.Moments[c])
	if err != nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
	}
	res := Result{Estimand: s.Estimand, Model: m, Learner: s.Learner.Name()}
	gamma := s.Gamma
	if s.Estimand == LongRun && gamma == 1 {
		if res.Value = m.Rho(); math.IsNaN(res.Value) {
			return Result{}, WeightSummary{}, fmt.Errorf("%s: the value model has no average reward", name)
		}
		return res, WeightSummary{}, nil
	}
	// The bound of checkBounded, on the sample of steps.
	horizon := valueHorizon(gamma, s.Estimand, s.Stream.MaxLen)
	rmax := s.Stream.MaxAbsReward
	if x := s.Stream.CheckValues(m); x > 10*rmax*horizon {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, errDiverged(x, rmax*horizon))
	}
	lengths := make([]int, 0, len(s.Starts[c]))
	for T := range s.Starts[c] {
		lengths = append(lengths, T)
	}
	slices.Sort(lengths)
	sum := 0.0
	for _, T := range lengths {
		g0 := 1 - gamma
		if s.Estimand == Horizon {
			g0, _ = discountStart(gamma, T)
		}
		sum += g0 * m.StartValue(s.Starts[c][T], T)
	}
	res.Value = sum / float64(s.Count[c])
	if math.IsNaN(res.Value) || math.IsInf(res.Value, 0) {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: the value model gives %v", name, res.Value)
	}
	return res, WeightSummary{}, nil
}
