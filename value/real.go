package value

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/policy"
)

// This file holds what the learners of real-valued states (Linear,
// Neural) share: the standardisation of states and actions, the target's
// action distribution at a state (the logs' target_prob_k columns for
// discrete actions, Monte Carlo draws from Target.Continuous for real
// ones) and the checks of the logged values.

// DefaultSamples is the number of actions drawn from Target.Continuous per
// state when Target.Samples is 0.
const DefaultSamples = 16

// mcStream is mixed into the second word of the PCG state of the Monte
// Carlo draws of the target's actions ("value-mc" in ASCII), so that they
// never coincide with another use of Target.Seed.
const mcStream = 0x76616c75652d6d63

// scaler standardises vectors per component: (x - mean)/scale with the
// mean and scaler deviation of the logged vectors (a component with
// scaler deviation 0 is only centred).
type scaler struct {
	mean, scale []float64
}

// newScaler returns the standardisation of the n rows of x (row-major,
// dim per row), with the mean and the scaler deviation that divides by
// n (two passes, so that a large mean does not cost precision).
func newScaler(x []float64, dim int) scaler {
	s := scaler{mean: make([]float64, dim), scale: make([]float64, dim)}
	n := len(x) / max(dim, 1)
	for j := range n {
		for k, v := range x[j*dim : (j+1)*dim] {
			s.mean[k] += v
		}
	}
	for k := range s.mean {
		s.mean[k] /= float64(max(n, 1))
	}
	for j := range n {
		for k, v := range x[j*dim : (j+1)*dim] {
			s.scale[k] += (v - s.mean[k]) * (v - s.mean[k])
		}
	}
	for k := range s.scale {
		s.scale[k] = math.Sqrt(s.scale[k] / float64(max(n, 1)))
		if !(s.scale[k] > 0) || math.IsInf(s.scale[k], 0) {
			s.scale[k] = 1
		}
	}
	return s
}

// apply writes the standardised x to dst (len(x) entries).
func (s scaler) apply(dst, x []float64) {
	for k, v := range x {
		dst[k] = (v - s.mean[k]) / s.scale[k]
	}
}

// realTarget is the target's action distribution as a learner of
// real-valued states reads it: the logs' TargetProbs columns (discrete
// actions) or draws from a policy over real actions.
type realTarget struct {
	numActions int // discrete actions; 0 for real actions
	actionDim  int // real actions
	cont       policy.Continuous
	samples    int
	seed       uint64
}

// newRealTarget checks pi against the logs d (real states) and returns
// how the learner who (its name, for messages) reads the target's action
// distribution.
func newRealTarget(who string, d *dataset.Dataset, pi Target) (realTarget, error) {
	if d.StateDim <= 0 {
		return realTarget{}, fmt.Errorf("value: %s needs real-valued states (StateDim > 0); use the tabular learner for discrete states", who)
	}
	if pi.Policy != nil {
		return realTarget{}, fmt.Errorf("value: %s: Target.Policy is a tabular policy over discrete states, but these logs have real-valued states; "+
			"give the target's action distribution as target_prob_k columns (discrete actions) or Target.Continuous (real actions)", who)
	}
	if d.ActionDim == 0 {
		if pi.Continuous != nil {
			return realTarget{}, fmt.Errorf("value: %s: Target.Continuous is a policy over real actions, but these logs have %d discrete actions", who, d.NumActions)
		}
		if d.NumActions <= 0 {
			return realTarget{}, fmt.Errorf("value: %s: the logs have no actions (NumActions = 0, ActionDim = 0)", who)
		}
		if !d.HasTargetProbs() {
			return realTarget{}, fmt.Errorf("value: %s needs the target's action distribution at every state: "+
				"the logs carry no target_prob_k columns (Dataset.TargetProbs), and no other source was given", who)
		}
		if len(d.TargetProbs) != d.NumSteps()*d.NumActions {
			return realTarget{}, fmt.Errorf("value: %s: TargetProbs has %d entries, want %d steps x %d actions",
				who, len(d.TargetProbs), d.NumSteps(), d.NumActions)
		}
		return realTarget{numActions: d.NumActions}, nil
	}
	if pi.Continuous == nil {
		return realTarget{}, fmt.Errorf("value: %s needs the target policy over real actions (Target.Continuous) to draw the target's actions at every state", who)
	}
	if pi.Continuous.ActionDim() != d.ActionDim {
		return realTarget{}, fmt.Errorf("value: %s: Target.Continuous has %d action components, the logs %d", who, pi.Continuous.ActionDim(), d.ActionDim)
	}
	if pi.Samples < 0 {
		return realTarget{}, fmt.Errorf("value: %s: Target.Samples %d, want >= 0", who, pi.Samples)
	}
	s := pi.Samples
	if s == 0 {
		s = DefaultSamples
	}
	return realTarget{actionDim: d.ActionDim, cont: pi.Continuous, samples: s, seed: pi.Seed}, nil
}

// compatible reports whether d has the shape of the logs the target was
// resolved on, so that a model may read its values.
func (t realTarget) compatible(who string, d *dataset.Dataset, stateDim int) error {
	switch {
	case d.StateDim != stateDim:
		return fmt.Errorf("value: %s model of %d-dimensional states, logs of %d", who, stateDim, d.StateDim)
	case t.numActions > 0 && (d.ActionDim != 0 || d.NumActions != t.numActions):
		return fmt.Errorf("value: %s model of %d discrete actions, logs of %d discrete actions and %d-dimensional actions",
			who, t.numActions, d.NumActions, d.ActionDim)
	case t.numActions == 0 && d.ActionDim != t.actionDim:
		return fmt.Errorf("value: %s model of %d-dimensional actions, logs of %d", who, t.actionDim, d.ActionDim)
	case t.numActions > 0 && (!d.HasTargetProbs() || len(d.TargetProbs) != d.NumSteps()*d.NumActions):
		return fmt.Errorf("value: %s needs the target's action distribution at every state: the logs carry no target_prob_k columns (Dataset.TargetProbs)", who)
	}
	return nil
}

// mcSampler draws the target's actions at a state for the Monte Carlo
// averages v(s) = (1/S) sum_k q(s, a_k), a_k ~ pi(.|s). The S actions at
// state s are drawn in order from
//
//	rand.NewPCG(Target.Seed, mcStream ^ key(s)),
//
// key(s) a hash of the bits of the state vector. Drawing from a
// generator seeded by the state, rather than from one stream in step
// order, makes the draws at a state the same wherever it appears: the
// next state s'_j of one step and the state s_{j+1} of the step after it
// get the same actions, so next[j] = v[j+1] exactly; the draws do not
// depend on the order in which steps are visited, so the work can be
// split over goroutines; and a model gives the same v(s) on any logs
// (cross-fitting).
type mcSampler struct {
	t   realTarget
	pcg *rand.PCG
	rng *rand.Rand
}

func newMCSampler(t realTarget) *mcSampler {
	pcg := rand.NewPCG(0, 0)
	return &mcSampler{t: t, pcg: pcg, rng: rand.New(pcg)}
}

// draw calls f with the S actions drawn at obs, in order.
func (s *mcSampler) draw(obs []float64, f func(k int, a []float64)) {
	s.pcg.Seed(s.t.seed, mcStream^stateKey(obs))
	for k := range s.t.samples {
		f(k, s.t.cont.Sample(s.rng, obs))
	}
}

// stateKey hashes the bits of a state vector (each word mixed in by the
// SplitMix64 finaliser).
func stateKey(obs []float64) uint64 {
	h := uint64(len(obs))
	for _, v := range obs {
		h = mix64(h ^ math.Float64bits(v))
	}
	return h
}

// mix64 is the finaliser of SplitMix64 (Steele, Lea, Flood 2014).
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// finite reports whether every entry of v is finite.
func allFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// checkRealStep checks the logged values of step j (t of episode e) that a
// learner of real-valued states reads: the state, the action and the
// reward.
func checkRealStep(who string, d *dataset.Dataset, e, j int) error {
	t := j - d.Start[e]
	if obs := d.ObsAt(j); !allFinite(obs) {
		return fmt.Errorf("value: %s: episode %q step %d: state %v is not finite", who, d.IDs[e], t, obs)
	}
	if d.ActionDim > 0 {
		if a := d.ActionVecAt(j); !allFinite(a) {
			return fmt.Errorf("value: %s: episode %q step %d: action %v is not finite", who, d.IDs[e], t, a)
		}
	} else if a := d.Action[j]; a < 0 || int(a) >= d.NumActions {
		return fmt.Errorf("value: %s: episode %q step %d: action %d outside 0..%d", who, d.IDs[e], t, a, d.NumActions-1)
	}
	if r := d.Reward[j]; math.IsNaN(r) || math.IsInf(r, 0) {
		return fmt.Errorf("value: %s: episode %q step %d: reward %v is not finite", who, d.IDs[e], t, r)
	}
	return nil
}

// checkTargetRow checks a row of the target's action distribution.
func checkTargetRow(who string, d *dataset.Dataset, e, j int, p []float64, where string) error {
	for a, v := range p {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("value: %s: episode %q step %d: target probability %v of action %d at the %s state",
				who, d.IDs[e], j-d.Start[e], v, a, where)
		}
	}
	return nil
}

// checkDiscount checks the discount of a Fit.
func checkDiscount(who string, gamma float64) error {
	if !(gamma > 0 && gamma <= 1) {
		return fmt.Errorf("value: %s: discount %v outside (0, 1]", who, gamma)
	}
	return nil
}

// episodeOfStep returns the episode of step j.
func episodeOfStep(d *dataset.Dataset, j int) int {
	lo, hi := 0, d.NumEpisodes()
	for lo+1 < hi { // Start[lo] <= j < Start[hi]
		mid := (lo + hi) / 2
		if d.Start[mid] <= j {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// stepHalves returns the two stepHalves [0, n/2) and [n/2, n) of the steps: the
// fixed pieces the learners split their passes into, so that the result
// does not depend on the number of goroutines.
func stepHalves(n int) [2][2]int { return [2][2]int{{0, n / 2}, {n / 2, n}} }

// ActionDraws is a target over real actions as the learners of
// real-valued states read it: at a state, Target.Samples actions
// (DefaultSamples if 0) drawn from Target.Continuous by a generator seeded
// by Target.Seed and the state's bits (mcSampler), so that a state gets
// the same draws wherever it appears, and E_{a~pi} f(s, a) is their mean.
// With policy.Draws (ihope estimate --target-draws) and one draw per
// state, every draw is that one action; with several, Samples of them are
// picked uniformly, as fqe does. Package ratio's kernel fits (mwl) read
// it.
type ActionDraws struct{ t realTarget }

// NewActionDraws checks pi against the logs d of real states and real
// actions and returns how the learner who reads the target there.
func NewActionDraws(who string, d *dataset.Dataset, pi Target) (ActionDraws, error) {
	if d == nil || d.ActionDim == 0 {
		return ActionDraws{}, fmt.Errorf("value: %s: draws of the target's actions are for logs of real-valued actions", who)
	}
	t, err := newRealTarget(who, d, pi)
	if err != nil {
		return ActionDraws{}, err
	}
	return ActionDraws{t: t}, nil
}

// ActionDim is the length of an action vector (0 for the zero value).
func (a ActionDraws) ActionDim() int { return a.t.actionDim }

// Samples is the number of actions drawn per state.
func (a ActionDraws) Samples() int { return a.t.samples }

// ActionSampler draws the actions of an ActionDraws; one per goroutine.
type ActionSampler struct{ s *mcSampler }

// NewSampler returns a sampler of a's draws.
func (a ActionDraws) NewSampler() *ActionSampler { return &ActionSampler{s: newMCSampler(a.t)} }

// Each calls f with every action drawn at obs, in order (the slice is the
// policy's, fresh at each call). An action that is not finite (a
// policy.Draws given no draw at obs returns NaNs) is an error.
func (s *ActionSampler) Each(obs []float64, f func(a []float64)) error {
	ok := true
	s.s.draw(obs, func(_ int, a []float64) {
		if !allFinite(a) {
			ok = false
		}
		f(a)
	})
	if !ok {
		return errNoDraw
	}
	return nil
}

// errNoDraw is the error of a state where the target's draws are not
// finite: a draws file without a draw at that state.
var errNoDraw = errors.New("no finite action of the target drawn there (a draws file without a draw at this state?)")

// TargetProbsFromDraws returns a copy of the logs d of real states and
// discrete actions whose target_prob_k columns (TargetProbs, and
// FinalTargetProbs after every episode whose next state is known) are the
// frequencies of the target's actions drawn at each state: t.Continuous's
// draws are one-component vectors holding an action's index 0 ...
// NumActions-1, Samples of them per state as ActionDraws reads them. It
// is how mql and mwl (package ope) read a discrete target known only by
// actions drawn from it; with one draw per state of a deterministic
// target the columns are its one-hot rows exactly. The other columns are
// shared with d.
func TargetProbsFromDraws(who string, d *dataset.Dataset, t Target) (*dataset.Dataset, error) {
	switch {
	case d == nil || d.StateDim <= 0 || d.ActionDim != 0 || d.NumActions <= 0:
		return nil, fmt.Errorf("value: %s: the target's draws of discrete actions are for logs of real states and discrete actions", who)
	case t.Continuous == nil || t.Continuous.ActionDim() != 1:
		return nil, fmt.Errorf("value: %s: draws of discrete actions are one-component vectors holding the action's index", who)
	case t.Samples < 0:
		return nil, fmt.Errorf("value: %s: Target.Samples %d, want >= 0", who, t.Samples)
	}
	s := t.Samples
	if s == 0 {
		s = DefaultSamples
	}
	smp := &ActionSampler{s: newMCSampler(realTarget{actionDim: 1, cont: t.Continuous, samples: s, seed: t.Seed})}
	nA := d.NumActions
	freq := func(dst, obs []float64, e, step int, where string) error {
		clear(dst)
		bad := math.NaN()
		err := smp.Each(obs, func(a []float64) {
			k := int(a[0])
			if float64(k) != a[0] || k < 0 || k >= nA {
				bad = a[0]
				return
			}
			dst[k]++
		})
		if err == nil && !math.IsNaN(bad) {
			err = fmt.Errorf("action %v drawn, want an index in 0..%d", bad, nA-1)
		}
		if err != nil {
			return fmt.Errorf("value: %s: episode %q step %d: at the %s state, %w", who, d.IDs[e], step, where, err)
		}
		for k := range dst {
			dst[k] /= float64(s)
		}
		return nil
	}
	out := *d
	out.TargetProbs = make([]float64, d.NumSteps()*nA)
	out.FinalTargetProbs = make([]float64, d.NumEpisodes()*nA)
	out.HasFinalTarget = make([]bool, d.NumEpisodes())
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			if err := freq(out.TargetProbs[j*nA:(j+1)*nA], d.ObsAt(j), e, j-lo, "logged"); err != nil {
				return nil, err
			}
		}
		if d.HasFinal[e] && hi > lo {
			obs := d.FinalObs[e*d.StateDim : (e+1)*d.StateDim]
			if err := freq(out.FinalTargetProbs[e*nA:(e+1)*nA], obs, e, hi-1-lo, "next"); err != nil {
				return nil, err
			}
			out.HasFinalTarget[e] = true
		}
	}
	return &out, nil
}
