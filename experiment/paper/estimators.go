package paper

import (
	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/env"
	"github.com/ihope-ope/ihope/experiment/results"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/policy"
)

// tabularEstimators returns fresh estimators for a tabular world, in the
// order of the figures' legends: the on-policy oracle (oracleSeed seeds
// its rollouts), the naive average, the importance-sampling baselines
// (with or without the plain IS variants), the model-based estimator and
// the paper's tabular density-ratio estimator.
func tabularEstimators(sim env.Discrete, target *policy.Tabular, oracleSeed uint64, withIS bool) []ope.Estimator {
	ests := []ope.Estimator{
		&ope.OnPolicy{Env: sim, Target: target, Seed: oracleSeed},
		&ope.Naive{},
	}
	if withIS {
		ests = append(ests, &ope.TrajectoryIS{})
	}
	ests = append(ests, &ope.TrajectoryWIS{})
	if withIS {
		ests = append(ests, &ope.StepwiseIS{})
	}
	return append(ests,
		&ope.StepwiseWIS{},
		&ope.ModelBased{Target: target},
		&ope.DensityRatioTabular{},
	)
}

// runEstimators runs every estimator on d; a failing estimator gives a
// record with its error (the runner sets its estimate to NaN).
func runEstimators(d *dataset.Dataset, gamma float64, ests []ope.Estimator) []results.Record {
	recs := make([]results.Record, len(ests))
	for i, e := range ests {
		recs[i].Estimator = e.Name()
		res, err := e.Estimate(d, gamma)
		if err != nil {
			recs[i].Error = err.Error()
			continue
		}
		recs[i].Estimate = results.Float(res.Value)
	}
	return recs
}

// stateDistribution returns the gamma-weighted distribution of the logged
// states s_t (weight gamma^t), the d_pi0 the tabular ratio is normalised
// against (package ratio, Aggregate).
func stateDistribution(d *dataset.Dataset, gamma float64) []float64 {
	c := make([]float64, d.NumStates)
	total := 0.0
	for _, ep := range d.Episodes {
		g := 1.0
		for _, st := range ep.Steps {
			c[st.State] += g
			total += g
			g *= gamma
		}
	}
	for s := range c {
		c[s] /= total
	}
	return c
}
