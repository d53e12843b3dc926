package sumo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/ihope-ope/ihope/policy"

	"github.com/ihope-ope/ihope/dataset"
)

// episodeSeed is what one episode needs to be reproduced: SUMO's seed and
// the seed of the action draws.
type episodeSeed struct {
	sumo   int
	action [2]uint64
}

func drawSeeds(rng *rand.Rand, n int) []episodeSeed {
	s := make([]episodeSeed, n)
	for i := range s {
		s[i] = episodeSeed{sumo: int(rng.Int32N(1 << 30)), action: [2]uint64{rng.Uint64(), rng.Uint64()}}
	}
	return s
}

// runEpisodes runs f on episodes 0..len(seeds)-1, each in its own SUMO
// process, at most workers at a time (0: GOMAXPROCS). The first error
// cancels the others and is returned; every SUMO is reaped before
// runEpisodes returns.
func (n *Network) runEpisodes(ctx context.Context, seeds []episodeSeed, workers int, f func(i int, s *Sim, rng *rand.Rand) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  int
	)
	for range min(workers, len(seeds)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil
				mu.Unlock()
				if stop || i >= len(seeds) {
					return
				}
				err := n.episode(ctx, seeds[i], func(s *Sim, rng *rand.Rand) error { return f(i, s, rng) })
				if err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("episode %d: %w", i, err)
						cancel()
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}

func (n *Network) episode(ctx context.Context, seed episodeSeed, f func(s *Sim, rng *rand.Rand) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s, err := n.Start(ctx, seed.sumo)
	if err != nil {
		return err
	}
	if err := f(s, rand.New(rand.NewPCG(seed.action[0], seed.action[1]))); err != nil {
		s.Kill()
		return err
	}
	return s.Close()
}

// Sample logs episodes episodes of T steps each, acting with behavior and
// recording for every action its log-probability under behavior and
// target (exact: both are computed, not estimated). Every episode is its
// own SUMO run with its own seed, after the warm-up; up to workers run at
// once (0: GOMAXPROCS). The seeds come from rng, so the same rng state
// gives the same dataset whatever workers is (SUMO is deterministic for a
// given seed and sequence of actions).
//
// Steps carry the counts in Obs and NextObs (State and NextState are -1)
// and the joint action in Action; the dataset has StateDim =
// n.ObsDim() and NumActions = n.NumActions(). Episode ids are "0", "1",
// ...
func (n *Network) Sample(ctx context.Context, rng *rand.Rand, behavior, target Policy, episodes, T, workers int) (*dataset.Dataset, error) {
	if episodes <= 0 || T <= 0 {
		return nil, fmt.Errorf("sumo: sample %d episodes of %d steps", episodes, T)
	}
	return n.SampleLengths(ctx, rng, behavior, target, repeat(T, episodes), workers)
}

// SampleLengths is Sample with episode i lasting lengths[i] steps. Episode
// i depends only on rng's state and i, not on the lengths: its first T
// steps are the same whatever its length, and the first k episodes are
// the same whatever len(lengths) >= k. So one call with the longest
// lengths a set of experiments needs logs all their datasets at once, as
// prefixes (dataset.Dataset.Head).
func (n *Network) SampleLengths(ctx context.Context, rng *rand.Rand, behavior, target Policy, lengths []int, workers int) (*dataset.Dataset, error) {
	if err := checkLengths(lengths); err != nil {
		return nil, fmt.Errorf("sumo: sample: %w", err)
	}
	nA := n.NumActions()
	if behavior.NumActions() != nA || target.NumActions() != nA {
		return nil, fmt.Errorf("sumo: policies have %d and %d actions, network %d", behavior.NumActions(), target.NumActions(), nA)
	}
	eps := make([]dataset.Episode, len(lengths)) // episodes run in parallel

	err := n.runEpisodes(ctx, drawSeeds(rng, len(lengths)), workers, func(i int, s *Sim, rng *rand.Rand) error {
		ep := make([]dataset.Step, lengths[i])
		pb, pt := make([]float64, nA), make([]float64, nA)
		obs := s.Obs()
		for t := range ep {
			behavior.Probs(obs, pb)
			target.Probs(obs, pt)
			a := policy.Draw(rng, pb)
			lb, lt := math.Log(pb[a]), math.Log(pt[a])
			if math.IsNaN(lb) || math.IsInf(lb, 0) || math.IsNaN(lt) || math.IsInf(lt, 1) {
				return fmt.Errorf("step %d: action %d has probability %v under behavior and %v under target", t, a, pb[a], pt[a])
			}
			r, err := s.Step(a)
			if err != nil {
				return err
			}
			next := s.Obs()
			ep[t] = dataset.Step{
				State: -1, Obs: obs, Action: a, Reward: r,
				HasNext: true, NextState: -1, NextObs: next,
				LogBehavior: lb, LogTarget: lt,
			}
			obs = next
		}
		eps[i] = dataset.Episode{ID: fmt.Sprint(i), Steps: ep}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sumo: sample: %w", err)
	}
	d, err := dataset.New(0, nA, eps)
	if err != nil {
		return nil, fmt.Errorf("sumo: sample: %w", err)
	}
	return d, nil
}

func repeat(T, n int) []int {
	l := make([]int, n)
	for i := range l {
		l[i] = T
	}
	return l
}

func checkLengths(lengths []int) error {
	if len(lengths) == 0 {
		return fmt.Errorf("no episodes")
	}
	for i, T := range lengths {
		if T <= 0 {
			return fmt.Errorf("episode %d of %d steps", i, T)
		}
	}
	return nil
}

// AverageReward runs episodes episodes of T steps under pol (after the
// warm-up) and returns the mean reward per step of each episode, the
// on-policy value R of the paper with gamma = 1 (the negative mean number
// of vehicles on the detectors). Seeds and parallelism are as in Sample.
func (n *Network) AverageReward(ctx context.Context, rng *rand.Rand, pol Policy, episodes, T, workers int) ([]float64, error) {
	rewards, err := n.Rewards(ctx, rng, pol, episodes, T, workers)
	if err != nil {
		return nil, err
	}
	out := make([]float64, episodes)
	for i, r := range rewards {
		for _, v := range r {
			out[i] += v
		}
		out[i] /= float64(T)
	}
	return out, nil
}

// Rewards runs episodes episodes of T steps under pol (after the warm-up)
// and returns every episode's rewards, step by step. Seeds and
// parallelism are as in Sample, so AverageReward with the same rng state
// averages these very episodes.
func (n *Network) Rewards(ctx context.Context, rng *rand.Rand, pol Policy, episodes, T, workers int) ([][]float64, error) {
	if episodes <= 0 || T <= 0 {
		return nil, fmt.Errorf("sumo: roll out %d episodes of %d steps", episodes, T)
	}
	return n.RewardsLengths(ctx, rng, pol, repeat(T, episodes), workers)
}

// RewardsLengths is Rewards with episode i lasting lengths[i] steps; as
// in SampleLengths, episode i's first T rewards do not depend on the
// lengths.
func (n *Network) RewardsLengths(ctx context.Context, rng *rand.Rand, pol Policy, lengths []int, workers int) ([][]float64, error) {
	if err := checkLengths(lengths); err != nil {
		return nil, fmt.Errorf("sumo: roll out: %w", err)
	}
	if pol.NumActions() != n.NumActions() {
		return nil, fmt.Errorf("sumo: policy has %d actions, network %d", pol.NumActions(), n.NumActions())
	}
	out := make([][]float64, len(lengths))
	err := n.runEpisodes(ctx, drawSeeds(rng, len(lengths)), workers, func(i int, s *Sim, rng *rand.Rand) error {
		out[i] = make([]float64, 0, lengths[i])
		_, err := rollout(s, rng, pol, lengths[i], func(r float64) { out[i] = append(out[i], r) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sumo: roll out: %w", err)
	}
	return out, nil
}

// rollout runs T steps under pol and returns the sum of rewards, passing
// each reward to record if it is not nil.
func rollout(s *Sim, rng *rand.Rand, pol Policy, T int, record func(float64)) (float64, error) {
	p := make([]float64, pol.NumActions())
	obs := make([]float64, s.net.ObsDim())
	sum := 0.0
	for range T {
		copy(obs, s.obs)
		pol.Probs(obs, p)
		r, err := s.Step(policy.Draw(rng, p))
		if err != nil {
			return sum, err
		}
		sum += r
		if record != nil {
			record(r)
		}
	}
	return sum, nil
}
