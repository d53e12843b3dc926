package paper

import (
	"context"
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/research/experiment"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/ring"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// The ring experiment's fixed settings (Appendix B): RingStates states,
// the behavior picks R with probability RingRho and the target with
// 1 - RingRho. rho = 0.45 keeps the trajectory weight's variance within
// reach of Monte Carlo up to 50 steps while IS still breaks down within
// the horizons of the MSE panel.
const (
	RingStates   = 5
	RingRho      = 0.45
	RingEpisodes = 20    // logged episodes per cell of the MSE panel
	RingMC       = 20000 // trajectories per seed behind a Monte Carlo variance
)

func init() {
	experiment.Register(&experiment.Experiment{
		Name:        "ring",
		Description: "Appendix B ring: variance of the trajectory IS weight vs length (exact A^L-1 vs Monte Carlo) and estimators' MSE vs T",
		Seeds:       100,
		QuickSeeds:  2,
		Panels:      ringPanels,
	})
}

func ringPanels(quick bool) ([]experiment.Panel, error) {
	m, err := ring.New(RingStates)
	if err != nil {
		return nil, err
	}
	target := ring.Policy(RingStates, 1-RingRho)
	behavior := ring.Policy(RingStates, RingRho)
	sampler := sim.NewSampler(m)
	lengths := []int{1, 2, 5, 10, 20, 50}
	horizons := []int{10, 20, 50, 100, 200, 500, 1000}
	if quick {
		lengths = []int{5, 20}
		horizons = []int{10, 100}
	}
	world := fmt.Sprintf("Ring of %d states, behavior P(R) = %g, target P(R) = %g", RingStates, RingRho, 1-RingRho)

	variance := experiment.Panel{
		Name:           "variance",
		Title:          fmt.Sprintf("%s:\nvariance of the trajectory weight prod_t π(a_t|s_t)/π0(a_t|s_t), %d trajectories per seed", world, RingMC),
		XName:          "L",
		XLabel:         "trajectory length L (steps)",
		YLabel:         "variance of the trajectory weight",
		LogX:           true,
		Kind:           results.KindMetric,
		Metric:         "var_mc",
		MetricLabel:    "Monte Carlo",
		Reference:      "var_analytic",
		ReferenceLabel: "exact A_ρ^L - 1 (Appendix B)",
		Estimator:      "is-trajectory",
	}
	for _, L := range lengths {
		variance.Settings = append(variance.Settings, experiment.Setting{
			ID: fmt.Sprintf("L=%d", L), X: float64(L),
			Run: func(ctx context.Context, c *experiment.Cell) (*experiment.Outcome, error) {
				return ringVariance(ctx, c, sampler, behavior, target, L)
			},
		})
	}

	mse := experiment.Panel{
		Name:   "T",
		Title:  fmt.Sprintf("%s:\nn = %d logged trajectories, average reward (γ = 1)", world, RingEpisodes),
		XName:  "T",
		XLabel: "trajectory length T (steps)",
		LogX:   true,
		Kind:   results.KindMSE,
	}
	for _, T := range horizons {
		mse.Settings = append(mse.Settings, experiment.Setting{
			ID: fmt.Sprintf("T=%d", T), X: float64(T),
			Run: func(ctx context.Context, c *experiment.Cell) (*experiment.Outcome, error) {
				v, err := c.Memo(fmt.Sprintf("ring/truth/T=%d", T), func() (any, error) {
					return mdp.Value(m, target, nil, T, 1), nil
				})
				if err != nil {
					return nil, err
				}
				d, err := rollout.Sample(c.Rand(fmt.Sprintf("data/T=%d", T)), sampler, behavior, target, RingEpisodes, T)
				if err != nil {
					return nil, err
				}
				seed := c.Rand(fmt.Sprintf("oracle/T=%d", T)).Uint64()
				return &experiment.Outcome{
					Truth: v.(float64), TruthMethod: "exact",
					Records: records(d, 1, tabularEstimators(sampler, target, seed, true)),
				}, nil
			},
		})
	}
	return []experiment.Panel{variance, mse}, nil
}

// ringVariance estimates Var[w_{0:L-1}] from RingMC behavior trajectories
// of L steps and returns it with its standard error,
//
//	se(s^2) = sqrt( (m4 - s^4 (M-3)/(M-1)) / M ),
//
// m4 the sample fourth central moment, next to the exact A_rho^L - 1
// (ring.WeightVariance with T = L-1).
func ringVariance(ctx context.Context, c *experiment.Cell, sampler sim.Discrete, behavior, target policy.Discrete, L int) (*experiment.Outcome, error) {
	rng := c.Rand(fmt.Sprintf("variance/L=%d", L))
	w := make([]float64, 0, RingMC)
	const chunk = 1000
	for len(w) < RingMC {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, err := rollout.Sample(rng, sampler, behavior, target, min(chunk, RingMC-len(w)), L)
		if err != nil {
			return nil, err
		}
		for e := range d.NumEpisodes() {
			lo, hi := d.Span(e)
			lw := 0.0
			for j := lo; j < hi; j++ {
				lw += d.LogRatio(j)
			}
			w = append(w, math.Exp(lw)) // |log w| <= L log(11/9): no overflow
		}
	}
	M := float64(len(w))
	mean := 0.0
	for _, x := range w {
		mean += x
	}
	mean /= M
	var m2, m4 float64
	for _, x := range w {
		d := (x - mean) * (x - mean)
		m2 += d
		m4 += d * d
	}
	s2 := m2 / (M - 1)
	m4 /= M
	se := math.Sqrt(math.Max(0, m4-s2*s2*(M-3)/(M-1)) / M)
	exactVar := ring.WeightVariance(RingRho, L-1)
	return &experiment.Outcome{
		Truth: exactVar, TruthMethod: "exact",
		Metrics: map[string]float64{
			"var_mc":       s2,
			"var_mc_se":    se,
			"var_analytic": exactVar,
		},
	}, nil
}
