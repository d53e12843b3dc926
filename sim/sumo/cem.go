package sumo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// CEM holds the settings of the cross-entropy method (Rubinstein 1999;
// Szita and Lőrincz 2006) that trains the weights of a LinearSoftmax
// policy, as the paper trains its traffic policies (Appendix D: "We train
// a policy pi_* using Cross entropy (CE) method for 10 iterations").
// Zero fields take the documented defaults.
//
// Iteration t draws Population weight vectors from N(mu, diag(sigma^2)),
// scores each by its average reward over Episodes episodes of Steps steps
// (after the warm-up; all candidates of an iteration share the episodes'
// SUMO and action seeds, so they are compared on the same traffic), and
// refits mu and sigma to the Elite best:
//
//	mu_t      = mean of the elite weights
//	sigma_t^2 = variance of the elite weights + Noise^2
//
// The policy of iteration t is the LinearSoftmax with weights mu_t.
//
// References:
//
//	Rubinstein, R. (1999). The cross-entropy method for combinatorial and
//	continuous optimization. Methodology and Computing in Applied
//	Probability 1.
//	Szita, I., Lőrincz, A. (2006). Learning Tetris using the noisy
//	cross-entropy method. Neural Computation 18.
type CEM struct {
	// Iterations is the number of iterations; if 0, 10.
	Iterations int `json:"iterations"`
	// Population is the number of candidates per iteration; if 0, 40.
	Population int `json:"population"`
	// Elite is the number of best candidates refitted to; if 0, 8.
	Elite int `json:"elite"`
	// Episodes is the number of episodes scoring each candidate; if 0, 1.
	Episodes int `json:"episodes"`
	// Steps is the length of a scoring episode; if 0, 150.
	Steps int `json:"steps"`
	// InitStd is sigma_0 around mu_0 = 0 (the uniform policy); if 0, 3.
	InitStd float64 `json:"init_std"`
	// Noise is added to the refitted standard deviation; if 0, 0.1.
	Noise float64 `json:"noise"`
	// Scale and Epsilon are the policy's (LinearSoftmax); if 0,
	// DefaultScale and DefaultEpsilon.
	Scale   float64 `json:"scale"`
	Epsilon float64 `json:"epsilon"`
	// Workers is the number of SUMO processes run at once; if 0,
	// GOMAXPROCS.
	Workers int `json:"-"`
}

// Iteration is the state of a CEM run after one iteration.
type Iteration struct {
	Iteration int `json:"iteration"`
	// Policy has the refitted mean weights mu_t.
	Policy *LinearSoftmax `json:"policy"`
	// Std is the refitted sigma_t.
	Std []float64 `json:"std"`
	// MeanScore, EliteScore and BestScore are the average reward of
	// the candidates, of the elite and of the best candidate.
	MeanScore  float64 `json:"mean_score"`
	EliteScore float64 `json:"elite_score"`
	BestScore  float64 `json:"best_score"`
}

func (c CEM) withDefaults() (CEM, error) {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Iterations, 10)
	def(&c.Population, 40)
	def(&c.Elite, 8)
	def(&c.Episodes, 1)
	def(&c.Steps, 150)
	if c.InitStd == 0 {
		c.InitStd = 3
	}
	if c.Noise == 0 {
		c.Noise = 0.1
	}
	if c.Scale == 0 {
		c.Scale = DefaultScale
	}
	if c.Epsilon == 0 {
		c.Epsilon = DefaultEpsilon
	}
	if c.Iterations < 1 || c.Population < 2 || c.Elite < 1 || c.Elite > c.Population || c.Episodes < 1 || c.Steps < 1 || !(c.InitStd > 0) || !(c.Noise >= 0) {
		return c, fmt.Errorf("sumo: CEM settings %+v", c)
	}
	return c, nil
}

// Train runs the method on network n, calling report (if not nil) after
// every iteration, and returns the iterations. The run is reproducible:
// the same rng state, network and settings give the same policies
// whatever Workers is.
func (c CEM) Train(ctx context.Context, rng *rand.Rand, n *Network, report func(Iteration)) ([]Iteration, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	lights := n.NumLights()
	dim := NumPhases * NumFeatures
	mu := make([]float64, dim)
	sigma := make([]float64, dim)
	for i := range sigma {
		sigma[i] = c.InitStd
	}
	var out []Iteration
	for it := 1; it <= c.Iterations; it++ {
		cands := make([]*LinearSoftmax, c.Population)
		for i := range cands {
			w := make([]float64, dim)
			for k := range w {
				w[k] = mu[k] + sigma[k]*rng.NormFloat64()
			}
			cands[i] = &LinearSoftmax{Lights: lights, Weights: w, Scale: c.Scale, Epsilon: c.Epsilon}
		}
		shared := drawSeeds(rng, c.Episodes)
		seeds := make([]episodeSeed, 0, c.Population*c.Episodes)
		for range cands {
			seeds = append(seeds, shared...)
		}
		sums := make([]float64, len(seeds))
		err := n.runEpisodes(ctx, seeds, c.Workers, func(j int, s *Sim, rng *rand.Rand) error {
			var err error
			sums[j], err = rollout(s, rng, cands[j/c.Episodes], c.Steps, nil)
			return err
		})
		if err != nil {
			return out, fmt.Errorf("sumo: CEM iteration %d: %w", it, err)
		}
		score := make([]float64, c.Population)
		order := make([]int, c.Population)
		for i := range score {
			for e := range c.Episodes {
				score[i] += sums[i*c.Episodes+e]
			}
			score[i] /= float64(c.Episodes * c.Steps)
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
		rec := Iteration{Iteration: it, BestScore: score[order[0]]}
		for i := range score {
			rec.MeanScore += score[i] / float64(c.Population)
		}
		for _, i := range order[:c.Elite] {
			rec.EliteScore += score[i] / float64(c.Elite)
		}
		for k := range mu {
			m, v := 0.0, 0.0
			for _, i := range order[:c.Elite] {
				m += cands[i].Weights[k]
			}
			m /= float64(c.Elite)
			for _, i := range order[:c.Elite] {
				d := cands[i].Weights[k] - m
				v += d * d
			}
			v /= float64(c.Elite)
			mu[k], sigma[k] = m, math.Sqrt(v+c.Noise*c.Noise)
		}
		rec.Policy = &LinearSoftmax{Lights: lights, Weights: append([]float64(nil), mu...), Scale: c.Scale, Epsilon: c.Epsilon}
		rec.Std = append([]float64(nil), sigma...)
		out = append(out, rec)
		if report != nil {
			report(rec)
		}
	}
	return out, nil
}
