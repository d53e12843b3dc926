package ope

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/value"
)

// ErrAbsorbingAverage is why no estimator gives the long-run average
// reward (gamma = 1) of a log whose episodes end in terminal states: the
// chain of any policy that terminates sits in the absorbing state for
// ever after, so its long-run average reward is 0 whatever the policy,
// an estimand nobody wants. The horizon value (the expected return over
// the logged horizon, normalised) or a discount gamma < 1 is what an
// episodic task asks for.
var ErrAbsorbingAverage = errors.New("so the long-run average reward (gamma = 1) is 0 for every policy: " +
	"estimate the horizon value (--estimand horizon) or discount (gamma < 1)")

// absorbed is an episodic log as the estimators read it (see absorbing).
type absorbed struct {
	// d is the log with its absorbing state explicit (Dataset.Absorbing),
	// or the log itself when no episode is terminal.
	d *dataset.Dataset
	// logged is the log as given.
	logged *dataset.Dataset
}

// absorbing returns the log an estimator of estimand est reads: d with
// its terminal episodes padded by dataset.Dataset.Absorbing, the
// absorbing state z made explicit, to
//
//	T = the longest episode's length      (Horizon: every terminal episode
//	                                        is padded to the log's horizon
//	                                        with reward 0)
//	T = the longest episode's length + 1  (LongRun, gamma < 1: z is logged
//	                                        at least once after every
//	                                        terminal step, so a learner
//	                                        sees its zero reward and its
//	                                        self-loop)
//
// and ErrAbsorbingAverage for LongRun with gamma = 1. A log without
// terminal episodes is returned as it is.
func absorbing(name string, d *dataset.Dataset, gamma float64, est Estimand) (absorbed, error) {
	a := absorbed{d: d, logged: d}
	if d.NumTerminal() == 0 {
		return a, nil
	}
	T := max(d.MaxLen(), d.Horizon) // a resample keeps its log's horizon
	if est.OrDefault() == LongRun {
		if gamma == 1 {
			return a, fmt.Errorf("%s: %d of %d episodes end in a terminal state, %w", name, d.NumTerminal(), d.NumEpisodes(), ErrAbsorbingAverage)
		}
		T++
	}
	a.d = d.Absorbing(T)
	if est.OrDefault() == LongRun {
		// z is logged after every terminal step and stays for ever: a
		// discounted weigher counts a terminal episode's last step, in z,
		// as itself and every later one, gamma^t/(1 - gamma)
		// (Dataset.Tail). The padding alone left the tail out: with every
		// episode one terminal step at gamma = 0.9, bch-tabular gave
		// 0.0221 against a truth of 0.0020 (z's share of the visitation,
		// 0.9, was 0.47 of the weights).
		a.d.Tail = make([]bool, d.NumEpisodes())
		for e := range a.d.Tail {
			a.d.Tail[e] = d.IsTerminal(e)
		}
	}
	return a, nil
}

// absorbingLongRun is absorbing for an estimator of the long-run value
// only, whose refusal at gamma = 1 (still ErrAbsorbingAverage to
// errors.Is) cannot advise it the horizon value, as absorbing's does:
// it names the estimators that have one.
func absorbingLongRun(name string, d *dataset.Dataset, gamma float64) (absorbed, error) {
	a, err := absorbing(name, d, gamma, LongRun)
	if errors.Is(err, ErrAbsorbingAverage) {
		err = longRunOnlyError{fmt.Sprintf("%s: %d of %d episodes end in a terminal state, so the long-run average reward (gamma = 1) is 0 for every policy, and %s estimates the long-run value only: discount (gamma < 1), or for the horizon value use fqe, dr, model-based or wis-stepwise",
			name, d.NumTerminal(), d.NumEpisodes(), name)}
	}
	return a, err
}

// longRunOnlyError is absorbingLongRun's refusal.
type longRunOnlyError struct{ msg string }

func (e longRunOnlyError) Error() string { return e.msg }
func (e longRunOnlyError) Unwrap() error { return ErrAbsorbingAverage }

// padded reports whether the log was changed.
func (a absorbed) padded() bool { return a.d != a.logged }

// stepWeights returns the per-step weights of the logged steps, those
// of the absorbing steps dropped (they weigh a reward of 0), so that a
// Result's Weights have one entry per logged step as the diagnostics
// expect.
func (a absorbed) stepWeights(w []float64) []float64 {
	if !a.padded() || w == nil {
		return w
	}
	out := make([]float64, 0, a.logged.NumSteps())
	for e := range a.logged.NumEpisodes() {
		lo, _ := a.d.Span(e)
		out = append(out, w[lo:lo+a.logged.Len(e)]...)
	}
	return out
}

// target returns t extended to the absorbing state: a tabular policy
// gets a row for z that puts all mass on action 0, and a policy over
// real actions reads the logged state without its absorbing indicator.
func (a absorbed) target(t value.Target) value.Target {
	if !a.padded() {
		return t
	}
	if t.Policy != nil {
		t.Policy = absorbingDiscrete{Discrete: t.Policy, z: a.logged.NumStates}
	}
	if t.Continuous != nil && !a.logged.Discrete() {
		t.Continuous = absorbingContinuous{Continuous: t.Continuous, dim: a.logged.StateDim}
	}
	return t
}

// tabular returns p with a row for the absorbing state (all mass on
// action 0), or p itself if the log was not padded.
func (a absorbed) tabular(p *policy.Tabular) (*policy.Tabular, error) {
	if !a.padded() || p == nil || p.NumStates() != a.logged.NumStates {
		return p, nil // a size mismatch is reported by the estimator
	}
	rows := make([][]float64, p.NumStates()+1)
	for s := range p.NumStates() {
		rows[s] = p.Row(s)
	}
	rows[len(rows)-1] = make([]float64, p.NumActions())
	rows[len(rows)-1][0] = 1
	return policy.NewTabular(rows)
}

// absorbingDiscrete is a discrete target policy extended to the absorbing
// state z, where it takes action 0.
type absorbingDiscrete struct {
	policy.Discrete
	z int
}

// NumStates is z + 1 (asked for by the value learners' size check).
func (p absorbingDiscrete) NumStates() int { return p.z + 1 }

func (p absorbingDiscrete) Prob(s, a int) float64 {
	if s == p.z {
		if a == 0 {
			return 1
		}
		return 0
	}
	return p.Discrete.Prob(s, a)
}

func (p absorbingDiscrete) Sample(rng *rand.Rand, s int) int {
	if s == p.z {
		return 0
	}
	return p.Discrete.Sample(rng, s)
}

// absorbingContinuous is a policy over real actions read on states that
// carry the absorbing indicator (the last component), which it drops; in
// z it takes the zero action, the action the padding logs there (as
// absorbingDiscrete takes action 0). The value of z is 0, but a fitted
// value model shares its action terms with the real states, so the
// action drawn at z matters: sampling the target at the zero state
// instead, an audit's episodic linear-Gaussian log gave fqe -0.121 or
// -2.151 (truth -0.766) as a draws file's first row (Draws' fallback at
// a state it lacks) held action 0 or 5.
type absorbingContinuous struct {
	policy.Continuous
	dim int
}

func (p absorbingContinuous) LogProb(obs, action []float64) float64 {
	return p.Continuous.LogProb(obs[:p.dim], action)
}

func (p absorbingContinuous) Sample(rng *rand.Rand, obs []float64) []float64 {
	if len(obs) > p.dim && obs[p.dim] != 0 { // z
		return make([]float64, p.Continuous.ActionDim())
	}
	return p.Continuous.Sample(rng, obs[:p.dim])
}
