package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
)

// Defaults of Reinforce, tuned on Pendulum.
const (
	reinforceIterations   = 1000
	reinforceEpisodes     = 16
	reinforceHorizon      = 200
	reinforceGamma        = 0.99
	reinforceLearningRate = 1e-2
	reinforceValueRate    = 3e-3
	reinforceValueHidden  = 32
	reinforceValueSteps   = 5
)

// Reinforce holds the settings of REINFORCE with a learned state-value
// baseline (Williams 1992; Sutton and Barto 2018, Section 13.4) for a
// truncated Gaussian policy (policy.TruncGaussian) whose mean network is
// trained and whose standard deviation stays fixed, as the paper trains
// its Pendulum policies (Section 5: "We train a near-optimal policy pi_*
// using REINFORCE ... pi_+ is another policy from REINFORCE when it has not
// converged"). Zero fields take the documented defaults.
//
// One iteration draws Episodes episodes of Horizon steps from the reset
// distribution and, with returns-to-go
//
//	G_t = sum_{k=t}^{H-1} gamma^(k-t) r_k + gamma^(H-t) V(s_H),
//
// (the last term bootstraps the time-limit truncation with the baseline,
// Pardo et al. 2018), advantages A_t = G_t - V(s_t) standardised over the
// batch, takes one Adam ascent step along
//
//	(1/N) sum_t A_t grad log pi(a_t|s_t)
//
// and then ValueSteps Adam steps on the squared error of the baseline
// network V against G_t (scaled by 1-gamma so that V is of the order of a
// reward).
//
// Runs are reproducible: the same rng state, environment, initial policy
// and settings give bit-identical policies whatever the number of Workers.
//
// References:
//
//	Williams, R. J. (1992). Simple statistical gradient-following
//	algorithms for connectionist reinforcement learning. Machine Learning 8.
//	Kingma, D. P., Ba, J. (2015). Adam: A method for stochastic
//	optimization. ICLR.
//	Pardo, F., Tavakoli, A., Levdik, V., Kormushev, P. (2018). Time limits
//	in reinforcement learning. ICML.
type Reinforce struct {
	// Iterations is the length of the run when Run is given no
	// snapshots; if it is 0, 1000 is used.
	Iterations int
	// Episodes is the number of episodes per iteration; if it is 0, 16.
	Episodes int
	// Horizon is the number of steps per episode; if it is 0, 200
	// (Gymnasium's time limit for Pendulum).
	Horizon int
	// Gamma in (0, 1) discounts the returns; if it is 0, 0.99.
	Gamma float64
	// LearningRate is Adam's step size for the policy; if it is 0, 1e-2.
	LearningRate float64
	// ValueLearningRate is Adam's step size for the baseline; if it is
	// 0, 3e-3.
	ValueLearningRate float64
	// ValueHidden is the hidden width of the baseline network (obs ->
	// ValueHidden -> 1, tanh); if it is 0, 32.
	ValueHidden int
	// ValueSteps is the number of baseline updates per iteration; if it
	// is 0, 5.
	ValueSteps int
	// Workers is the number of goroutines that roll out and differentiate
	// episodes; if it is 0, 1. The result does not depend on it.
	Workers int
	// Progress, if not nil, is called after every iteration with the
	// iterations done, the total, and the average reward per step of the
	// iteration's episodes.
	Progress func(done, total int, avgReward float64)
}

func (r Reinforce) withDefaults() (Reinforce, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	deff := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&r.Iterations, reinforceIterations)
	def(&r.Episodes, reinforceEpisodes)
	def(&r.Horizon, reinforceHorizon)
	deff(&r.Gamma, reinforceGamma)
	deff(&r.LearningRate, reinforceLearningRate)
	deff(&r.ValueLearningRate, reinforceValueRate)
	def(&r.ValueHidden, reinforceValueHidden)
	def(&r.ValueSteps, reinforceValueSteps)
	def(&r.Workers, 1)
	switch {
	case r.Iterations < 0 || r.Episodes < 0 || r.Horizon < 0 || r.ValueHidden < 0 || r.ValueSteps < 0 || r.Workers < 0:
		return r, fmt.Errorf("train: reinforce: negative setting in %+v", r)
	case !(r.Gamma > 0 && r.Gamma < 1):
		return r, fmt.Errorf("train: reinforce: gamma %v outside (0, 1)", r.Gamma)
	case !(r.LearningRate > 0) || math.IsInf(r.LearningRate, 1) || !(r.ValueLearningRate > 0) || math.IsInf(r.ValueLearningRate, 1):
		return r, fmt.Errorf("train: reinforce: learning rates %v and %v, want finite values > 0", r.LearningRate, r.ValueLearningRate)
	}
	return r, nil
}

// ReinforceResult is the outcome of a REINFORCE run.
type ReinforceResult struct {
	// Policies are the snapshots, in the order requested.
	Policies []*policy.TruncGaussian
	// AvgReward[i] is the average reward per step of the episodes drawn
	// in iteration i+1 (with the policy of iteration i): the learning
	// curve.
	AvgReward []float64
}

// Run trains a copy of init on e and returns the policy after each of the
// requested numbers of iterations (0 gives init itself; duplicates
// allowed). If snapshots is empty, the single policy after Iterations
// iterations is returned. The run lasts max(snapshots) iterations.
//
// The random draws are, in order: the baseline network's initial weights,
// then per iteration one Uint64 per episode from rng, each seeding the
// PCG stream that episode's reset, actions and transitions draw from.
func (r Reinforce) Run(rng *rand.Rand, e sim.Continuous, init *policy.TruncGaussian, snapshots []int) (*ReinforceResult, error) {
	r, err := r.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := init.Validate(); err != nil {
		return nil, fmt.Errorf("train: reinforce: %w", err)
	}
	if init.ObsDim() != e.ObsDim() || init.ActionDim() != e.ActionDim() {
		return nil, fmt.Errorf("train: reinforce: policy maps %d observations to %d actions, environment has %d and %d",
			init.ObsDim(), init.ActionDim(), e.ObsDim(), e.ActionDim())
	}
	if len(snapshots) == 0 {
		snapshots = []int{r.Iterations}
	}
	last := 0
	for _, s := range snapshots {
		if s < 0 {
			return nil, fmt.Errorf("train: reinforce: snapshot at iteration %d", s)
		}
		last = max(last, s)
	}

	pol := init.Clone()
	value, err := policy.NewMLP(rng, e.ObsDim(), r.ValueHidden, 1)
	if err != nil {
		return nil, fmt.Errorf("train: reinforce: %w", err)
	}
	polOpt := newAdam(pol.Mean.NumParams(), r.LearningRate)
	valOpt := newAdam(value.NumParams(), r.ValueLearningRate)
	res := &ReinforceResult{Policies: make([]*policy.TruncGaussian, len(snapshots))}
	take := func(it int) {
		for i, s := range snapshots {
			if s == it {
				res.Policies[i] = pol.Clone()
			}
		}
	}
	take(0)

	eps := make([]trajectory, r.Episodes)
	seeds := make([]uint64, r.Episodes)
	for it := 1; it <= last; it++ {
		for i := range seeds {
			seeds[i] = rng.Uint64()
		}
		// Pass 1: roll out, evaluate the baseline, form returns.
		r.parallel(func(i int) {
			eps[i].run(e, pol, value, seeds[i], r.Horizon, r.Gamma)
		})
		avg, mean, sd := batchStats(eps)
		res.AvgReward = append(res.AvgReward, avg)
		if math.IsNaN(avg) || math.IsNaN(mean) || math.IsNaN(sd) {
			return nil, fmt.Errorf("train: reinforce: iteration %d: non-finite rewards or returns", it)
		}
		// Pass 2: per-episode gradients, then a reduction in episode
		// order so the sum does not depend on scheduling.
		n := float64(r.Episodes * r.Horizon)
		r.parallel(func(i int) {
			eps[i].policyGrad(pol, mean, sd)
		})
		grad := polOpt.grad
		clear(grad)
		for i := range eps {
			for j, g := range eps[i].grad {
				grad[j] += g / n
			}
		}
		polOpt.ascend(pol.Mean.Params)

		vgrad := valOpt.grad
		for range r.ValueSteps {
			r.parallel(func(i int) {
				eps[i].valueGrad(value, 1-r.Gamma)
			})
			clear(vgrad)
			for i := range eps {
				for j, g := range eps[i].vgrad {
					vgrad[j] -= g / n // descend on squared error
				}
			}
			valOpt.ascend(value.Params)
		}
		if err := pol.Mean.Validate(); err != nil {
			return nil, fmt.Errorf("train: reinforce: iteration %d: %w", it, err)
		}
		take(it)
		if r.Progress != nil {
			r.Progress(it, last, avg)
		}
	}
	return res, nil
}

// parallel calls f(i) for every episode index, on r.Workers goroutines.
func (r Reinforce) parallel(f func(i int)) {
	if r.Workers == 1 {
		for i := 0; i < r.Episodes; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range r.Workers {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := 0; i < r.Episodes; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// trajectory is one episode and its scratch space.
type trajectory struct {
	obs     [][]float64
	actions [][]float64
	rewards []float64
	values  []float64 // V(s_t), in reward units
	returns []float64 // G_t
	grad    []float64
	vgrad   []float64
}

func (ro *trajectory) run(e sim.Continuous, pol *policy.TruncGaussian, value *policy.MLP, seed uint64, H int, gamma float64) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	ro.obs = ro.obs[:0]
	ro.actions = ro.actions[:0]
	ro.rewards = ro.rewards[:0]
	s := e.Reset(rng)
	o := e.Observe(s)
	for range H {
		a := pol.Sample(rng, o)
		next, rew := e.Step(rng, s, a)
		ro.obs = append(ro.obs, o)
		ro.actions = append(ro.actions, a)
		ro.rewards = append(ro.rewards, rew)
		s = next
		o = e.Observe(s)
	}
	// V predicts (1-gamma) G; undo the scale.
	scale := 1 / (1 - gamma)
	ro.values = ro.values[:0]
	for _, x := range ro.obs {
		ro.values = append(ro.values, scale*value.Forward(x)[0])
	}
	g := scale * value.Forward(o)[0] // bootstrap the truncated tail
	ro.returns = slices.Grow(ro.returns[:0], H)[:H]
	for t := H - 1; t >= 0; t-- {
		g = ro.rewards[t] + gamma*g
		ro.returns[t] = g
	}
}

// batchStats returns the average reward per step, and the mean and
// standard deviation of the advantages G_t - V(s_t), over all episodes.
func batchStats(eps []trajectory) (avg, mean, sd float64) {
	n := 0
	for i := range eps {
		for t, g := range eps[i].returns {
			avg += eps[i].rewards[t]
			mean += g - eps[i].values[t]
			n++
		}
	}
	avg /= float64(n)
	mean /= float64(n)
	for i := range eps {
		for t, g := range eps[i].returns {
			d := g - eps[i].values[t] - mean
			sd += d * d
		}
	}
	sd = math.Sqrt(sd / float64(n))
	return avg, mean, sd
}

func (ro *trajectory) policyGrad(pol *policy.TruncGaussian, mean, sd float64) {
	ro.grad = resize(ro.grad, pol.Mean.NumParams())
	tmp := make([]float64, len(ro.grad))
	if sd == 0 {
		sd = 1
	}
	for t, x := range ro.obs {
		adv := (ro.returns[t] - ro.values[t] - mean) / sd
		clear(tmp)
		pol.AddGradLogProb(x, ro.actions[t], tmp)
		for j, v := range tmp {
			ro.grad[j] += adv * v
		}
	}
}

// valueGrad sets vgrad to the gradient of sum_t (V(s_t) - c G_t)^2 / 2 at
// the current baseline weights.
func (ro *trajectory) valueGrad(value *policy.MLP, c float64) {
	ro.vgrad = resize(ro.vgrad, value.NumParams())
	for t, x := range ro.obs {
		target := c * ro.returns[t]
		value.AddGradOf(x, ro.vgrad, func(y, d []float64) { d[0] = y[0] - target })
	}
}

// resize returns a zeroed slice of length n, reusing s's storage.
func resize(s []float64, n int) []float64 {
	s = slices.Grow(s[:0], n)[:n]
	clear(s)
	return s
}

// adam is Kingma and Ba's optimiser, written for ascent: ascend moves the
// parameters along +grad.
type adam struct {
	lr, b1, b2, eps float64
	t               int
	m, v, grad      []float64
}

func newAdam(n int, lr float64) *adam {
	return &adam{lr: lr, b1: 0.9, b2: 0.999, eps: 1e-8,
		m: make([]float64, n), v: make([]float64, n), grad: make([]float64, n)}
}

func (o *adam) ascend(params []float64) {
	o.t++
	c1 := 1 - math.Pow(o.b1, float64(o.t))
	c2 := 1 - math.Pow(o.b2, float64(o.t))
	for j, g := range o.grad {
		o.m[j] = o.b1*o.m[j] + (1-o.b1)*g
		o.v[j] = o.b2*o.v[j] + (1-o.b2)*g*g
		params[j] += o.lr * (o.m[j] / c1) / (math.Sqrt(o.v[j]/c2) + o.eps)
	}
}
