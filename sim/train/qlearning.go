package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
)

// Defaults of QLearning, those of the paper's Taxi experiment (Section 5)
// and the authors' code.
const (
	DefaultLearningRate      = 0.01
	DefaultGamma             = 0.99
	DefaultTemperature       = 2.0
	DefaultStepsPerIteration = 5000
	DefaultIterations        = 1000
)

// QLearning holds the settings of tabular Q-learning with softmax
// exploration on one continuing run of an environment. The zero value
// reproduces the paper's Taxi recipe; see the package documentation.
//
// Each step, in state s, draws a ~ pi_Q(.|s) with
//
//	pi_Q(a|s) = exp(Q(s,a)/tau) / sum_b exp(Q(s,b)/tau),
//
// observes (s', r) and applies
//
//	Q(s,a) <- (1-eta) Q(s,a) + eta (r + gamma max_b Q(s',b)).
//
// The learned policies are pi_Q at the requested iterations.
//
// References:
//
//	Liu, Li, Tang, Zhou. Breaking the Curse of Horizon: Infinite-Horizon
//	Off-Policy Estimation. NeurIPS 2018, Section 5 (Taxi).
type QLearning struct {
	// LearningRate is eta in (0, 1]. If it is 0, DefaultLearningRate (0.01)
	// is used.
	LearningRate float64
	// Gamma is the discount of the learned Q, in (0, 1). If it is 0,
	// DefaultGamma (0.99) is used. It is a property of the learner, not of
	// the value later estimated.
	Gamma float64
	// Temperature is tau > 0, used both to explore and for the returned
	// policies. If it is 0, DefaultTemperature (2) is used.
	Temperature float64
	// StepsPerIteration is the number of environment steps in one
	// iteration. If it is 0, DefaultStepsPerIteration (5000) is used.
	StepsPerIteration int
	// Iterations is the length of the run when Run is given no snapshots.
	// If it is 0, DefaultIterations (1000) is used.
	Iterations int
	// Progress, if not nil, is called after every iteration with the
	// number of iterations done and the total.
	Progress func(done, total int)
}

func (q QLearning) withDefaults() (QLearning, error) {
	if q.LearningRate == 0 {
		q.LearningRate = DefaultLearningRate
	}
	if q.Gamma == 0 {
		q.Gamma = DefaultGamma
	}
	if q.Temperature == 0 {
		q.Temperature = DefaultTemperature
	}
	if q.StepsPerIteration == 0 {
		q.StepsPerIteration = DefaultStepsPerIteration
	}
	if q.Iterations == 0 {
		q.Iterations = DefaultIterations
	}
	switch {
	case !(q.LearningRate > 0 && q.LearningRate <= 1):
		return q, fmt.Errorf("train: q-learning: learning rate %v outside (0, 1]", q.LearningRate)
	case !(q.Gamma > 0 && q.Gamma < 1):
		return q, fmt.Errorf("train: q-learning: gamma %v outside (0, 1)", q.Gamma)
	case !(q.Temperature > 0) || math.IsInf(q.Temperature, 1):
		return q, fmt.Errorf("train: q-learning: temperature %v, want a finite value > 0", q.Temperature)
	case q.StepsPerIteration < 0:
		return q, fmt.Errorf("train: q-learning: %d steps per iteration", q.StepsPerIteration)
	case q.Iterations < 0:
		return q, fmt.Errorf("train: q-learning: %d iterations", q.Iterations)
	}
	return q, nil
}

// Run learns on e and returns softmax(Q/Temperature) after each of the
// requested numbers of iterations, in the order requested (duplicates
// allowed; 0 gives the policy of the random initial Q). If snapshots is
// empty, Run returns the single policy after Iterations iterations. The run
// lasts max(snapshots) iterations; the same rng state gives the same
// policies.
//
// The random draws are, in order: the initial Q table (NumStates x
// NumActions uniforms, row by row), e.Reset, then per step one uniform for
// the action followed by e.Step.
func (q QLearning) Run(rng *rand.Rand, e sim.Discrete, snapshots []int) ([]*policy.Tabular, error) {
	q, err := q.withDefaults()
	if err != nil {
		return nil, err
	}
	nS, nA := e.NumStates(), e.NumActions()
	if nS <= 0 || nA <= 0 {
		return nil, fmt.Errorf("train: q-learning: environment with %d states and %d actions", nS, nA)
	}
	if len(snapshots) == 0 {
		snapshots = []int{q.Iterations}
	}
	for i, k := range snapshots {
		if k < 0 {
			return nil, fmt.Errorf("train: q-learning: snapshot %d at iteration %d", i, k)
		}
	}
	// order[j] is the index into snapshots of the j-th snapshot in time.
	order := make([]int, len(snapshots))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return snapshots[a] - snapshots[b] })
	total := snapshots[order[len(order)-1]]

	Q := make([]float64, nS*nA) // row-major
	for i := range Q {
		Q[i] = rng.Float64()
	}
	out := make([]*policy.Tabular, len(snapshots))
	next := 0 // next entry of order to fill
	take := func(iter int) error {
		for next < len(order) && snapshots[order[next]] == iter {
			pi, err := softmax(Q, nS, nA, q.Temperature)
			if err != nil {
				return fmt.Errorf("train: q-learning: iteration %d: %w", iter, err)
			}
			out[order[next]] = pi
			next++
		}
		return nil
	}
	if err := take(0); err != nil {
		return nil, err
	}

	invTemp := 1 / q.Temperature
	eta, gamma := q.LearningRate, q.Gamma
	p := make([]float64, nA)
	s := e.Reset(rng)
	if s < 0 || s >= nS {
		return nil, fmt.Errorf("train: q-learning: reset to state %d, want 0..%d", s, nS-1)
	}
	for iter := 1; iter <= total; iter++ {
		for range q.StepsPerIteration {
			row := Q[s*nA : (s+1)*nA]
			a := sampleSoftmax(rng, row, p, invTemp)
			s2, r := e.Step(rng, s, a)
			if s2 < 0 || s2 >= nS {
				return nil, fmt.Errorf("train: q-learning: step from state %d action %d reached state %d, want 0..%d", s, a, s2, nS-1)
			}
			if math.IsNaN(r) || math.IsInf(r, 0) {
				return nil, fmt.Errorf("train: q-learning: step from state %d action %d paid reward %v", s, a, r)
			}
			// The explicit conversions round each product, so no platform
			// fuses them into an FMA (Go spec, "Floating-point operators")
			// and a seed gives the same Q table on amd64 and arm64.
			target := r + float64(gamma*slices.Max(Q[s2*nA:(s2+1)*nA]))
			row[a] = float64((1-eta)*row[a]) + float64(eta*target)
			s = s2
		}
		if err := take(iter); err != nil {
			return nil, err
		}
		if q.Progress != nil {
			q.Progress(iter, total)
		}
	}
	return out, nil
}

// sampleSoftmax draws a with probability proportional to
// exp((row[a] - max row) * invTemp), using p as scratch space.
func sampleSoftmax(rng *rand.Rand, row, p []float64, invTemp float64) int {
	m := slices.Max(row)
	sum := 0.0
	for a, v := range row {
		p[a] = math.Exp((v - m) * invTemp)
		sum += p[a]
	}
	u := rng.Float64() * sum
	acc := 0.0
	for a, w := range p {
		acc += w
		if u < acc {
			return a
		}
	}
	// Rounding left u at the top of the last interval; every weight is
	// positive (the maximum's is 1), so the last action is a valid draw.
	return len(p) - 1
}

// softmax returns softmax(Q/temp) row by row as a policy.
func softmax(Q []float64, nS, nA int, temp float64) (*policy.Tabular, error) {
	q := make([][]float64, nS)
	for s := range q {
		q[s] = Q[s*nA : (s+1)*nA]
	}
	return policy.SoftmaxQ(q, temp)
}
