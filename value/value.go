package value

import (
	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/policy"
)

// Learner fits a value model. A learner is a value of settings; Fit does
// not change it, so one learner may fit many datasets at once.
type Learner interface {
	// Name is the learner's short name, "tabular", "linear" or "neural",
	// reported in every estimate that used it.
	Name() string
	// Fit learns q from the logged transitions of d with discount gamma
	// in (0, 1] and the target's action distribution pi.
	Fit(d *dataset.Dataset, gamma float64, pi Target) (Model, error)
}

// Model is a learned value function of the target policy.
type Model interface {
	// Values returns, for every step j of d (step t of episode e, which
	// has T_e steps), q[j] = q(s_j, a_j), v[j] = v(s_j) and
	// next[j] = v(s'_j) (NaN where the next state is unknown). A
	// finite-horizon model indexes by the steps left: q[j] = q^(T_e-t),
	// v[j] = v^(T_e-t)(s_j), next[j] = v^(T_e-t-1)(s'_j), which is 0
	// after an episode's last step. d may be the data the model was
	// fitted on or other logs of the same world (cross-fitting).
	Values(d *dataset.Dataset) (q, v, next []float64, err error)
	// Rho is the average reward of a differential model (gamma = 1,
	// stationary), NaN for the others.
	Rho() float64
}

// Target is the target policy's whole action distribution, where a value
// learner needs it: v(s) = sum_a pi(a|s) q(s, a) at logged and next
// states. Exactly one source is used, in this order:
//
//   - Policy, a tabular policy over discrete states and actions (from
//     --target-policy, or built from the logs' target_prob_k columns by
//     TableFromData);
//   - Continuous, a policy over real actions acting on state vectors,
//     which only the experiments hold: v(s) is the mean of q(s, a) over
//     Samples actions drawn from it per state with a generator seeded by
//     Seed (documented on each learner);
//   - neither: the dataset's TargetProbs columns (discrete actions), at
//     s_j and, through the next step's row or the episode's final row,
//     at s'_j.
type Target struct {
	Policy     policy.Discrete
	Continuous policy.Continuous
	Samples    int
	Seed       uint64
}

// Horizoned is implemented by the learners that know which of the two
// kinds of model (package doc) they fit. FitsHorizon reports whether the
// learner fits the finite-horizon values q^h indexed by the steps left
// (Tabular and Linear with Finite) or a stationary model (the others, and
// Neural always). A stationary model read at the start states gives the
// long-run value, not the T-step one, so package ope refuses it where the
// horizon value is asked for (and a finite-horizon model where the long
// run is).
type Horizoned interface {
	FitsHorizon() bool
}

var (
	_ Horizoned = Tabular{}
	_ Horizoned = Linear{}
	_ Horizoned = Neural{}
	_ Horizoned = MQL{}
)

// Seeded is implemented by learners whose fit draws random numbers: the
// same learner with another seed (the bootstrap refits with a fresh one).
type Seeded interface {
	WithSeed(seed uint64) Learner
}

var _ Seeded = Neural{}
