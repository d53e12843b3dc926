package ope

import (
	"errors"
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/value"
)

// sampleValue is a value learner that trains in SampleSums: fqe with the
// neural value learner (value.Neural) and mql in its neural form
// (value.MQL with Neural). Their in-memory estimate (startValue) reads
// the model at the episodes' first states,
//
//	Horizon:  R = (1/m) sum_i g0(T_i) v(s^i_0),   g0(T) = 1/sum_{t<T} gamma^t
//	LongRun:  R = (1/m) sum_i (1 - gamma) v(s^i_0)   (gamma < 1),   R = rho   (gamma = 1),
//
// (neither learner fits finite-horizon values, so fqe reaches this only
// under LongRun, checkValueEstimand refusing Horizon before; the Horizon
// line is the in-memory formula a finite-horizon learner would share),
// so a copy's sum is sum_i k_i g0_i v(s^i_0) over its episodes (k_i the
// multiplicity) and m its number of episodes. Before the mean, startValue
// refuses a diverged model (checkBounded): one whose |q|, |v| or |v(s')|
// at some step exceeds 10 max|r| times the horizon, max|r| over the
// log's steps and, for Horizon, the horizon that of its longest episode.
// That is a bound on maxima, not on sums, so each copy keeps three maxima
// over its episodes — max|r|, the longest episode and the largest |q|,
// |v|, |v(s')| (NaN, an unknown next state, passes as in memory) — and
// the check is exact: the same refusal on the same log, though its
// message names the largest value where the in-memory one names the
// first. At gamma = 1 under LongRun the estimate is the model's own
// average reward rho (mql; value.Neural does not fit gamma = 1): nothing
// is evaluated, and every bootstrap copy gives the same rho.
type sampleValue struct {
	name    string // "fqe", "mql"
	learner value.Learner
	target  value.Target
	est     Estimand
	gamma   float64
	// After the training.
	model value.Model
	kind  string // Result.Learner
}

func newSampleValueSums(name string, l value.Learner, target value.Target, est Estimand, gamma float64, copies, reservoir int, seed uint64) *SampleSums {
	m := &sampleValue{name: name, learner: l, target: target, est: est, gamma: gamma}
	return newSampleSums(name, m, gamma, copies, reservoir, seed)
}

func (s *sampleValue) form() string {
	if s.name == "fqe" {
		return "fqe with the neural value learner"
	}
	return s.name + " in its neural form"
}

// rhoOnly reports whether the estimate is the model's rho alone.
func (s *sampleValue) rhoOnly() bool { return s.est == LongRun && s.gamma == 1 }

func (s *sampleValue) first(*dataset.Dataset, int) error { return nil }

func (s *sampleValue) mergeFirst(sampleModel) {}

// fit trains the learner; one sum per copy (of g0 v(s_0)) and three
// maxima (|r|, T, |values|), none when the estimate is rho.
func (s *sampleValue) fit(d *dataset.Dataset) (int, int, error) {
	m, err := s.learner.Fit(d, s.gamma, s.target)
	if err != nil {
		return 0, 0, err
	}
	s.model = m
	s.kind = s.learner.Name()
	if s.name == "mql" {
		s.kind = learnerKind(d, m)
	}
	if s.rhoOnly() {
		return 0, 0, nil
	}
	return 1, 3, nil
}

func (s *sampleValue) episode(d *dataset.Dataset, sum, max []float64) error {
	if s.rhoOnly() {
		return nil
	}
	q, v, next, err := s.model.Values(d)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	T := d.NumSteps()
	g0 := 1 - s.gamma
	if s.est == Horizon {
		g0, _ = discountStart(s.gamma, T)
	}
	sum[0] = g0 * v[0]
	for _, r := range d.Reward {
		max[0] = math.Max(max[0], math.Abs(r))
	}
	max[1] = float64(T)
	for _, xs := range [][]float64{q, v, next} {
		for _, x := range xs {
			if a := math.Abs(x); a > max[2] { // NaN passes, as in checkBounded
				max[2] = a
			}
		}
	}
	return nil
}

func (s *sampleValue) mergeSecond(o sampleModel) error {
	if o.(*sampleValue).model != s.model {
		return errors.New("cannot merge second passes of different trained models")
	}
	return nil
}

func (s *sampleValue) finish(c int, sum, max []float64, episodes int64) (Result, WeightSummary, error) {
	res := Result{Estimand: s.est, Model: s.model, Learner: s.kind}
	if s.rhoOnly() {
		rho := s.model.Rho()
		if math.IsNaN(rho) {
			return Result{}, WeightSummary{}, fmt.Errorf("%s: the value model has no average reward", s.name)
		}
		res.Value = rho
		if c == 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: at gamma = 1 its estimate is the trained model's average reward, which every bootstrap copy shares: the interval has no width", s.name))
		}
		return res, WeightSummary{}, nil
	}
	rmax, horizon := max[0], valueHorizon(s.gamma, s.est, int(max[1]))
	if max[2] > 10*rmax*horizon {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", s.name, errDiverged(max[2], rmax*horizon))
	}
	res.Value = sum[0] / float64(episodes)
	if math.IsNaN(res.Value) || math.IsInf(res.Value, 0) {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: the value model gives %v", s.name, res.Value)
	}
	return res, WeightSummary{}, nil
}
