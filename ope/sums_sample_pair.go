package ope

import (
	"errors"
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/value"
)

// samplePair is a state-action ratio learner that trains in SampleSums:
// mwl and dualdice in their neural forms. Their in-memory estimate
// (PairRatio) weighs every transition j (a step with a known next state)
// by the model's w(s_j, a_j),
//
//	R = sum_j w_j r_j / n   or, normalised (mwl),   R = sum_j w_j r_j / sum_j w_j,
//
// so a copy keeps sum_j w_j r_j, sum_j w_j and n, the number of
// transitions, each episode's counted k times. For copy 0 also, over
// the transitions, sum_j |w_j|, sum_j w_j^2 and max_j |w_j|: the Kish
// effective sample size and the largest share of the weights
// w_j / sum_j w_j that PairRatio returns (both scale-free, so exact),
// and the number of steps, one weight each in memory (0 for a step
// without a transition).
type samplePair struct {
	name      string
	learner   ratio.PairLearner
	target    value.Target
	normalise bool
	gamma     float64
	// After the training.
	model        ratio.PairModel
	steps        int
	abs, sq, top float64
}

func newSamplePairSums(e PairRatio, gamma float64, copies int) *SampleSums {
	name := e.Name()
	m := &samplePair{name: name, learner: e.Learner, target: e.Target, normalise: e.Normalise, gamma: gamma}
	return newSampleSums(name, m, gamma, copies, e.Reservoir, e.SampleSeed)
}

func (s *samplePair) form() string { return s.name + " in its neural form" }

func (s *samplePair) first(*dataset.Dataset, int) error { return nil }

func (s *samplePair) mergeFirst(sampleModel) {}

// fit trains the learner; three sums per copy: sum w r, sum w, n.
func (s *samplePair) fit(d *dataset.Dataset) (int, int, error) {
	m, err := s.learner.FitPairs(d, s.gamma, s.target)
	if err != nil {
		return 0, 0, err
	}
	s.model = m
	return 3, 0, nil
}

func (s *samplePair) episode(d *dataset.Dataset, sum, _ []float64) error {
	w, err := s.model.StepRatios(d)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	for j := range d.NumSteps() {
		if !hasNext(d, 0, j) {
			continue
		}
		sum[0] += w[j] * d.Reward[j]
		sum[1] += w[j]
		sum[2]++
		a := math.Abs(w[j])
		s.abs += a
		s.sq += a * a
		if a > s.top || a != a {
			s.top = a
		}
	}
	s.steps += d.NumSteps()
	return nil
}

func (s *samplePair) mergeSecond(o sampleModel) error {
	t := o.(*samplePair)
	if t.model != s.model {
		return errors.New("cannot merge second passes of different trained models")
	}
	s.steps += t.steps
	s.abs += t.abs
	s.sq += t.sq
	if t.top > s.top || t.top != t.top {
		s.top = t.top
	}
	return nil
}

func (s *samplePair) finish(c int, sum, _ []float64, _ int64) (Result, WeightSummary, error) {
	num, den, n := sum[0], sum[1], sum[2]
	if n == 0 || !(den > 0) {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: the learned weights sum to %v over %d transitions", s.name, den, int64(n))
	}
	val := num / n
	if s.normalise {
		val = num / den
	}
	if math.IsNaN(val) || math.IsInf(val, 0) {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: the estimate is %v", s.name, val)
	}
	res := Result{Value: val, Estimand: LongRun, Model: s.model, Learner: "neural"}
	var ws WeightSummary
	if c == 0 {
		ws.Units = s.steps
		if s.sq > 0 {
			ws.ESS = s.abs * s.abs / s.sq
		}
		if s.abs > 0 {
			ws.MaxShare = s.top / s.abs
		}
		if wr, ok := s.model.(ratio.Warner); ok {
			for _, w := range wr.Warnings() {
				res.Warnings = append(res.Warnings, s.name+": "+w)
			}
		}
	}
	return res, ws, nil
}
