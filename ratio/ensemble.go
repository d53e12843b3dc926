package ratio

import (
	"fmt"
	"math/rand/v2"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/ihope-ope/ihope/dataset"
)

// DefaultRestarts is the number of fits an Ensemble averages when its
// Restarts is 0: the default of bch-neural, ihope estimate and the
// experiments. On the README's Pendulum logs 35 of 40 single networks
// landed within 0.1 of the long-run truth and a few far off; with four,
// bch-neural's interquartile mean (ope.DensityRatio drops the lowest and
// the highest) kept ten training seeds within 0.1 of the truth and of
// each other, at about 35 s of CPU per ensemble, which its members share
// over two cores (README).
const DefaultRestarts = 4

// Ensemble fits Restarts copies of a learner that draws random numbers,
// each with its own training seed, concurrently, and averages their
// ratios: w(s) = (1/R) sum_k w_k(s). It is bch-neural's learner (Learner
// = Neural): one fit of the network depends on its seed (sample,
// initialisation), and the mean of several is a better ratio than any
// one of them.
//
// Member 0 is fitted with Seed itself, so that an ensemble of one is the
// learner alone; member k > 0 with the k-th draw of rand.NewPCG(Seed, s)
// for a fixed stream s. The members are fitted by up to Workers
// goroutines and averaged in member order, so the model does not depend
// on the scheduling: the same seed gives the same bits.
//
// Why average the ratios rather than the members' estimates: the mean
// ratio is a ratio.Model like any other, so the density-ratio estimator,
// its weight diagnostics, the bootstrap and dr use it unchanged. Each
// member is normalised to a mean of 1 over the logged states, so the
// self-normalised estimate with the mean ratio is the mean of the
// members' estimates weighted by sum_j w_k(s_j) beta_j, which differ
// from member to member only by noise; the estimator reports the
// members' own estimates and their spread beside it (see Averaged), and
// ope.DensityRatio keeps the middle half of the members by those
// estimates (Subset), because a failed fit is rare but far off.
type Ensemble struct {
	// Learner fits one member; its own seed is replaced.
	Learner SeededLearner
	// Restarts is the number of members R. If 0, DefaultRestarts is used.
	Restarts int
	// Seed seeds the members' training (see the type's documentation).
	Seed uint64
	// Workers is the number of members fitted at once. If 0, GOMAXPROCS.
	// It does not change the result.
	Workers int
}

// Averaged is implemented by models that average fitted members (an
// Ensemble's), so that an estimator can report the members' spread.
type Averaged interface {
	Model
	// MemberRatios returns StepRatios(d) and every member's own w(s_j),
	// in member order.
	MemberRatios(d *dataset.Dataset) (mean []float64, members [][]float64, err error)
}

// ensembleStream is the second word of the PCG state that derives the
// members' seeds ("ens" in ASCII).
const ensembleStream = 0x656e73

// Name returns the member learner's name: an ensemble of neural fits is
// still "neural" (estimator "bch-neural").
func (e Ensemble) Name() string { return e.Learner.Name() }

// WithSeed returns e with another seed.
func (e Ensemble) WithSeed(seed uint64) Learner {
	e.Seed = seed
	return e
}

// restarts returns R with the default filled in.
func (e Ensemble) restarts() (int, error) {
	switch {
	case e.Restarts < 0:
		return 0, fmt.Errorf("ratio: %d restarts, want >= 0", e.Restarts)
	case e.Restarts == 0:
		return DefaultRestarts, nil
	}
	return e.Restarts, nil
}

// Seeds returns the training seeds of the members.
func (e Ensemble) Seeds() ([]uint64, error) {
	r, err := e.restarts()
	if err != nil {
		return nil, err
	}
	seeds := make([]uint64, r)
	seeds[0] = e.Seed
	rng := rand.New(rand.NewPCG(e.Seed, ensembleStream))
	for k := 1; k < r; k++ {
		seeds[k] = rng.Uint64()
	}
	return seeds, nil
}

// Fit fits the members on d with discount gamma, concurrently, and
// returns their mean as an *EnsembleModel. An error of any member is
// returned (the first in member order).
func (e Ensemble) Fit(d *dataset.Dataset, gamma float64) (Model, error) {
	if e.Learner == nil {
		return nil, fmt.Errorf("ratio: ensemble without a learner")
	}
	seeds, err := e.Seeds()
	if err != nil {
		return nil, err
	}
	members := make([]Model, len(seeds))
	errs := make([]error, len(seeds))
	var g errgroup.Group
	workers := e.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	g.SetLimit(workers)
	for k, seed := range seeds {
		g.Go(func() error {
			members[k], errs[k] = e.Learner.WithSeed(seed).Fit(d, gamma)
			return nil
		})
	}
	g.Wait()
	for k, err := range errs {
		if err != nil {
			if len(seeds) == 1 {
				return nil, err
			}
			return nil, fmt.Errorf("restart %d of %d: %w", k+1, len(seeds), err)
		}
	}
	return &EnsembleModel{members: members}, nil
}

// WithValue implements ValueTested: every member is fitted with the
// value as a test function, if its learner takes one.
func (e Ensemble) WithValue(v, next []float64) (Learner, bool) {
	vt, ok := e.Learner.(ValueTested)
	if !ok {
		return e, false
	}
	l, took := vt.WithValue(v, next)
	sl, ok := l.(SeededLearner)
	if !took || !ok {
		return e, false
	}
	e.Learner = sl
	return e, true
}

// EnsembleModel is the mean of the ratios of an Ensemble's members.
type EnsembleModel struct {
	members []Model
}

// Members returns the members' models, in member order.
func (m *EnsembleModel) Members() []Model { return append([]Model(nil), m.members...) }

// StepRatios returns the mean of the members' w(s_j) for every step j of
// d, summed in member order.
func (m *EnsembleModel) StepRatios(d *dataset.Dataset) ([]float64, error) {
	w, _, err := m.MemberRatios(d)
	return w, err
}

// MemberRatios returns the mean ratio of StepRatios and the members' own.
func (m *EnsembleModel) MemberRatios(d *dataset.Dataset) ([]float64, [][]float64, error) {
	ws := make([][]float64, len(m.members))
	for k, mem := range m.members {
		w, err := mem.StepRatios(d)
		if err != nil {
			return nil, nil, err
		}
		ws[k] = w
	}
	mean := make([]float64, len(ws[0]))
	for _, w := range ws {
		for j, v := range w {
			mean[j] += v
		}
	}
	r := float64(len(ws))
	for j := range mean {
		mean[j] /= r
	}
	return mean, ws, nil
}

// Subset returns the ensemble of the members keep (indices in member
// order), sharing their models.
func (m *EnsembleModel) Subset(keep []int) *EnsembleModel {
	out := &EnsembleModel{members: make([]Model, len(keep))}
	for i, k := range keep {
		out.members[i] = m.members[k]
	}
	return out
}

// Warnings returns the members' warnings, each once.
func (m *EnsembleModel) Warnings() []string {
	var out []string
	seen := map[string]bool{}
	for _, mem := range m.members {
		if wr, ok := mem.(Warner); ok {
			for _, s := range wr.Warnings() {
				if !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}
		}
	}
	return out
}
