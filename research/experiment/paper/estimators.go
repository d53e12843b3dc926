package paper

import (
	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// tabularEstimators returns the estimators of a tabular world's figures,
// from the registry, in the order of their legends: the on-policy oracle
// (oracleSeed seeds its rollouts), the naive average, the
// importance-sampling baselines (with or without the plain IS variants),
// the model-based estimator, fitted Q evaluation, marginalized IS, the
// paper's tabular density-ratio estimator and the doubly robust one, all
// asked for the horizon value the figures measure (the density ratio
// targets the long-run value whatever is asked, as in the paper).
func tabularEstimators(sampler sim.Discrete, target *policy.Tabular, oracleSeed uint64, withIS bool) []ope.Estimator {
	names := []string{"on-policy", "naive"}
	if withIS {
		names = append(names, "is-trajectory")
	}
	names = append(names, "wis-trajectory")
	if withIS {
		names = append(names, "is-stepwise")
	}
	names = append(names, "wis-stepwise", "model-based", "fqe", "mis", "bch-tabular", "dr")
	return estimators(ope.Options{Sim: rollout.Simulator{Env: sampler, Target: target}, Target: target, OracleSeed: oracleSeed, Estimand: ope.Horizon}, names...)
}

// estimators builds the named estimators from the registry. The names are
// the paper's, fixed in this package, so an unknown one is a programmer's
// mistake. The value models stay polynomial (ope.Options.
// ValuePolynomialOnly): the figures were drawn so, and the network a
// misfit would escalate to (bch-kernel's value test on discounted
// Pendulum) would train in every cell.
func estimators(o ope.Options, names ...string) []ope.Estimator {
	o.ValuePolynomialOnly = true
	ests, err := ope.New(names, o)
	if err != nil {
		panic(err)
	}
	return ests
}

// runEstimators runs every estimator on d; a failing estimator gives a
// record with its error (the runner sets its estimate to NaN). The
// results come back too, in the same order, for the models behind them.
func runEstimators(d *dataset.Dataset, gamma float64, ests []ope.Estimator) ([]results.Record, []ope.Result) {
	recs := make([]results.Record, len(ests))
	res := make([]ope.Result, len(ests))
	for i, e := range ests {
		recs[i].Estimator = e.Name()
		r, err := e.Estimate(d, gamma)
		if err != nil {
			recs[i].Error = err.Error()
			continue
		}
		recs[i].Estimate = results.Float(r.Value)
		res[i] = r
	}
	return recs, res
}

// records runs every estimator on d and returns their records.
func records(d *dataset.Dataset, gamma float64, ests []ope.Estimator) []results.Record {
	recs, _ := runEstimators(d, gamma, ests)
	return recs
}

// stateDistribution returns the gamma-weighted distribution of the logged
// states s_t (weight gamma^t), the d_pi0 the tabular ratio is normalised
// against (package ratio, Aggregate).
func stateDistribution(d *dataset.Dataset, gamma float64) []float64 {
	c := make([]float64, d.NumStates)
	total := 0.0
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		g := 1.0
		for j := lo; j < hi; j++ {
			c[d.State[j]] += g
			total += g
			g *= gamma
		}
	}
	for s := range c {
		c[s] /= total
	}
	return c
}
