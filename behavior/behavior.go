package behavior

import (
	"fmt"
	"math"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/ihope-ope/ihope/dataset"
)

// Learner fits a model of the behavior policy to the logged (state,
// action) pairs of a dataset. A learner is a value of settings; Fit does
// not change it.
type Learner interface {
	// Name is the learner's short name ("counts", "logistic").
	Name() string
	// Fit learns pi0(a|s) from the steps of d.
	Fit(d *dataset.Dataset) (Model, error)
}

// Model is a fitted behavior policy.
type Model interface {
	// LogProbs returns log pi0(a_j|s_j) for every step j of d, in step
	// order: finite, and at most 0.
	LogProbs(d *dataset.Dataset) ([]float64, error)
}

var (
	_ Learner = Counts{}
	_ Learner = Logistic{}
)

// For returns the learner the data call for: Counts for discrete states,
// Logistic for real ones. Real actions are an error: their behavior
// density is not fitted.
func For(d *dataset.Dataset) (Learner, error) {
	if err := checkActions(d); err != nil {
		return nil, err
	}
	if d.Discrete() {
		return Counts{}, nil
	}
	return Logistic{}, nil
}

// checkActions returns an error for real-valued actions.
func checkActions(d *dataset.Dataset) error {
	if d.ActionDim > 0 {
		return fmt.Errorf("behavior: fitting the behavior policy needs discrete actions; a density of real actions (action_0, ...) is not fitted: log behavior_prob (or behavior_logprob)")
	}
	return nil
}

// DefaultFolds is CrossFit's number of folds when it is given 0.
const DefaultFolds = 5

// CrossFit returns log pi0(a_j|s_j) for every step j of d, each step's
// from a model that l fitted on the other folds: episode i is in fold
// i mod K, K = min(folds, episodes) (counting the copies of an episode in
// a bootstrap resample once, in one fold), and a log of one episode (a
// continuing task) is cut into K contiguous blocks of steps. folds 0
// means DefaultFolds; 1 fits once on all of d (in sample). The folds are
// fitted concurrently; the result does not depend on the schedule.
func CrossFit(l Learner, d *dataset.Dataset, folds int) ([]float64, error) {
	if folds < 0 {
		return nil, fmt.Errorf("behavior: %d folds", folds)
	}
	if err := checkActions(d); err != nil {
		return nil, err
	}
	n, m := d.NumSteps(), d.NumEpisodes()
	out := make([]float64, n)
	K := NumFolds(d, folds)
	// split returns fold k's training and evaluation data and the steps
	// of d that the evaluation data holds, in order.
	var split func(k int) (train, eval *dataset.Dataset, steps []int)
	switch {
	case folds != 1 && K < 2:
		return nil, fmt.Errorf("behavior: cross-fitting needs two episodes, or one of two steps or more; the log has %d of %d steps", d.NumIDs(), n)
	case folds == 1:
		split = func(int) (*dataset.Dataset, *dataset.Dataset, []int) { return d, d, nil }
	case m > 1:
		fold := d.EpisodeFolds(K)
		split = func(k int) (*dataset.Dataset, *dataset.Dataset, []int) {
			var train, eval, steps []int
			for e := range m {
				if fold[e] != k {
					train = append(train, e)
					continue
				}
				eval = append(eval, e)
				lo, hi := d.Span(e)
				for j := lo; j < hi; j++ {
					steps = append(steps, j)
				}
			}
			return d.Subset(train), d.Subset(eval), steps
		}
	default:
		split = func(k int) (*dataset.Dataset, *dataset.Dataset, []int) {
			lo, hi := k*n/K, (k+1)*n/K
			var starts, lens []int
			if lo > 0 {
				starts, lens = append(starts, 0), append(lens, lo)
			}
			if hi < n {
				starts, lens = append(starts, hi), append(lens, n-hi)
			}
			steps := make([]int, hi-lo)
			for i := range steps {
				steps[i] = lo + i
			}
			return d.Blocks(starts, lens), d.Blocks([]int{lo}, []int{hi - lo}), steps
		}
	}
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for k := range K {
		g.Go(func() error {
			train, eval, steps := split(k)
			model, err := l.Fit(train)
			if err != nil {
				return fmt.Errorf("behavior: %s: %w", l.Name(), err)
			}
			lp, err := model.LogProbs(eval)
			if err != nil {
				return fmt.Errorf("behavior: %s: %w", l.Name(), err)
			}
			if steps == nil {
				copy(out, lp)
				return nil
			}
			for i, j := range steps {
				out[j] = lp[i]
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for j, v := range out {
		if !(v <= 0 && v > math.Inf(-1)) {
			return nil, fmt.Errorf("behavior: %s gives the logged action of step %d the log-probability %v", l.Name(), j, v)
		}
	}
	return out, nil
}

// NumFolds returns the number of folds CrossFit makes of d when asked for
// folds (0: DefaultFolds): at most one per episode id, or, for one
// episode, one per step.
func NumFolds(d *dataset.Dataset, folds int) int {
	if folds == 0 {
		folds = DefaultFolds
	}
	if d.NumEpisodes() > 1 {
		return min(folds, d.NumIDs())
	}
	return max(1, min(folds, d.NumSteps()))
}

// Distance is how far fitted behavior log-probabilities are from logged
// ones, over the logged steps.
type Distance struct {
	// MeanAbsLogRatio is (1/n) sum_j |log pi0(a_j|s_j) - log pihat(a_j|s_j)|
	// and MaxAbsLogRatio its largest term, at step MaxStep.
	MeanAbsLogRatio, MaxAbsLogRatio float64
	MaxStep                         int
	// KL is (1/n) sum_j (log pi0(a_j|s_j) - log pihat(a_j|s_j)). As the
	// logged a_j are drawn from pi0(.|s_j), it estimates the mean over
	// the logged states of KL(pi0(.|s) || pihat(.|s)), which is never
	// negative; a clearly negative value means the logged probabilities
	// are not those the actions were drawn from.
	KL float64
}

// Compare returns the distance between logged and fitted behavior
// log-probabilities, one per step. It panics if their lengths differ.
func Compare(logged, fitted []float64) Distance {
	if len(logged) != len(fitted) {
		panic(fmt.Sprintf("behavior: Compare of %d and %d steps", len(logged), len(fitted)))
	}
	var dist Distance
	for j, lb := range logged {
		r := lb - fitted[j]
		dist.KL += r
		a := math.Abs(r)
		dist.MeanAbsLogRatio += a
		if a > dist.MaxAbsLogRatio {
			dist.MaxAbsLogRatio, dist.MaxStep = a, j
		}
	}
	if n := float64(len(logged)); n > 0 {
		dist.KL /= n
		dist.MeanAbsLogRatio /= n
	}
	return dist
}
