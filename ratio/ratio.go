package ratio

import "github.com/ihope-ope/ihope/dataset"

// Learner fits a density-ratio model to logged data: the tabular solver
// (Tabular), the kernel solver (Kernel) and the neural trainer (Neural)
// for real states, and the learners to come. A
// learner is a value of settings; Fit does not change it, so one learner
// may fit many datasets at once.
type Learner interface {
	// Name is the learner's short name, e.g. "tabular"; the density-ratio
	// estimator built on it is called "bch-" + Name.
	Name() string
	// Fit learns w from the logged transitions of d with discount gamma
	// in (0, 1].
	Fit(d *dataset.Dataset, gamma float64) (Model, error)
}

// Model is a learned density ratio w(s) = d_pi(s)/d_pi0(s).
type Model interface {
	// StepRatios returns w(s_j) for every step j of d, in step order
	// (d may be the data it was fitted on or any other log of the same
	// state space), in a slice of its own that the caller may overwrite.
	StepRatios(d *dataset.Dataset) ([]float64, error)
}

// Seeded is implemented by learners whose fit draws random numbers: the
// same learner with another seed. The bootstrap refits such a learner
// with a fresh seed on every resample, so that its interval accounts for
// the training's randomness too.
type Seeded interface {
	WithSeed(seed uint64) Learner
}

// SeededLearner is a Learner whose fit draws random numbers (Neural), as
// Ensemble takes it.
type SeededLearner interface {
	Learner
	Seeded
}

// Warner is implemented by models that have something to say about
// themselves in plain words (a negative tabular ratio, ...).
type Warner interface {
	Warnings() []string
}

var (
	_ Learner  = Tabular{}
	_ Learner  = Kernel{}
	_ Learner  = Neural{}
	_ Learner  = Ensemble{}
	_ Model    = (*TabularModel)(nil)
	_ Model    = (*KernelModel)(nil)
	_ Model    = (*NeuralModel)(nil)
	_ Warner   = (*TabularModel)(nil)
	_ Seeded   = Neural{}
	_ Seeded   = Ensemble{}
	_ Model    = (*EnsembleModel)(nil)
	_ Warner   = (*EnsembleModel)(nil)
	_ Averaged = (*EnsembleModel)(nil)
	_ Warner   = (*KernelModel)(nil)
)
