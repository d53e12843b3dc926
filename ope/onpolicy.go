package ope

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/dataset"
)

// onPolicyStream is the second word of the PCG state of OnPolicy's
// generator ("on-polic" in ASCII). It keeps the oracle's rollouts on a
// stream of their own, so that an experiment may reuse the seed that drew
// the logged data without correlating the two.
const onPolicyStream = 0x6f6e2d706f6c6963

// A Simulator rolls the target policy out in a world, for the on-policy
// oracle. Package ope imports no world: the worlds' side supplies it
// (rollout.Simulator for a discrete world, rollout.SimulatorContinuous for
// a real one).
type Simulator interface {
	// Check says why the target cannot be rolled out in the world (nil if
	// it can), e.g. they differ in their number of actions.
	Check() error
	// Return rolls the target out for T steps from a reset and returns
	// sum_{t<T} g0 gamma^t r_t, drawing from rng.
	Return(rng *rand.Rand, T int, g0, gamma float64) float64
}

// OnPolicy is the on-policy oracle, "on-policy": it ignores the logged
// data except for its shape and rolls out the target policy in a world
// instead,
//
//	R = (1/n) sum_i sum_{t<T_i} gamma^i_t r^i_t,   trajectories drawn under pi,
//
// with gamma^i_t normalised over each rollout's length T_i as for every
// other estimator. It is the Monte Carlo reference the paper's Section 5
// compares against: an estimate from as much on-policy data as the
// off-policy estimators see, not the exact value.
//
// By default it draws one rollout per logged episode, each as long as that
// episode. Episodes > 0 sets the number of rollouts and Horizon > 0 the
// length of every rollout; when Episodes exceeds the number of logged
// episodes and Horizon is 0, the logged lengths are reused cyclically.
// With both set, the dataset may be nil or empty.
//
// Randomness comes from rand.New(rand.NewPCG(Seed, s)) with a fixed stream
// constant s, created afresh in each call, so equal seeds give equal
// estimates.
//
// Result.Weights is nil.
type OnPolicy struct {
	// Sim rolls the target out in the world.
	Sim Simulator
	// Seed seeds the rollouts.
	Seed uint64
	// Episodes is the number of rollouts; 0 means one per logged episode.
	Episodes int
	// Horizon is the length of every rollout; 0 means the length of the
	// corresponding logged episode.
	Horizon int
}

var _ Estimator = (*OnPolicy)(nil)

// Name returns "on-policy".
func (*OnPolicy) Name() string { return "on-policy" }

// Estimate rolls out the target and returns its average normalised reward.
func (e *OnPolicy) Estimate(d *dataset.Dataset, gamma float64) (Result, error) {
	const name = "on-policy"
	if err := checkGamma(gamma); err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	if e.Sim == nil {
		return Result{}, fmt.Errorf("%s: needs a simulator of the world and the target policy", name)
	}
	if err := e.Sim.Check(); err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	return onPolicyMean(d, gamma, e.Episodes, e.Horizon, e.Seed, func(rng *rand.Rand, T int, g0 float64) float64 {
		return e.Sim.Return(rng, T, g0, gamma)
	})
}

// onPolicyMean averages rollout's normalised values over the rollouts
// that OnPolicy documents: episodes of them (0: one
// per logged episode), each horizon steps long (0: as long as the
// corresponding logged episode). rollout receives the rollout's length T
// and gamma_0 = 1/sum_{t<T} gamma^t.
func onPolicyMean(d *dataset.Dataset, gamma float64, episodes, horizon int, seed uint64, rollout func(rng *rand.Rand, T int, g0 float64) float64) (Result, error) {
	const name = "on-policy"
	if episodes < 0 || horizon < 0 {
		return Result{}, fmt.Errorf("%s: %d episodes of horizon %d", name, episodes, horizon)
	}
	n := episodes
	if n == 0 || horizon == 0 {
		if err := checkEpisodes(name, d); err != nil {
			return Result{}, err
		}
		if n == 0 {
			n = d.NumEpisodes()
		}
	}
	rng := rand.New(rand.NewPCG(seed, onPolicyStream))
	sum := 0.0
	for i := range n {
		T := horizon
		if T == 0 {
			T = d.Len(i % d.NumEpisodes())
		}
		g0, _ := discountStart(gamma, T)
		sum += rollout(rng, T, g0)
	}
	if v := sum / float64(n); !math.IsNaN(v) && !math.IsInf(v, 0) {
		return Result{Value: v, Estimand: Horizon}, nil
	}
	return Result{}, fmt.Errorf("%s: non-finite value %v", name, sum/float64(n))
}
