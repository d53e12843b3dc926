package value

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/ihope-ope/ihope/dataset"
)

// LinearModel is a fitted LSTD-Q model: q(s, a) = phi(s, a)^T theta, with
// the feature map of the data it was fitted on (see Linear).
type LinearModel struct {
	// Theta holds the coefficients of a stationary model, nil for a
	// finite-horizon one.
	Theta []float64
	// Thetas[h-1] holds the coefficients of q^h, h = 1..H, for a
	// finite-horizon model (nil otherwise); H is the longest episode of
	// the data it was fitted on.
	Thetas [][]float64
	// Gamma is the discount and Lambda the absolute ridge of the fit;
	// LambdaBackup that of the backward regressions (Finite).
	Gamma, Lambda, LambdaBackup float64
	// Transitions is the number of transitions fitted; Skipped the
	// number left out because the target's distribution at their next
	// state was unknown (discrete actions).
	Transitions, Skipped int
	// ExactBackups is the number of exact backups of a Finite model
	// before its tail (see Linear's Backups), 0 when every horizon is
	// exact.
	ExactBackups int

	rho     float64
	finite  bool
	f       *linFeatures
	target  realTarget
	workers int

	// Finite-horizon recursion, to extend Thetas for longer logs, and its
	// tail beyond the exact backups (backups 0: none).
	chol      *mat.Cholesky
	c         *mat.Dense
	b         []float64
	backups   int
	tailTheta []float64
	tailRho   float64
	meanFeat  []float64
	one       []float64
	gram      *mat.Dense // Phi^T Phi/n, the metric of chooseBackups

	warnings []string
}

// NumFeatures returns the number of features p.
func (m *LinearModel) NumFeatures() int { return m.f.p }

// Rho returns the average reward of a differential model (gamma = 1,
// stationary), NaN for the others.
func (m *LinearModel) Rho() float64 { return m.rho }

// Warnings returns what the fit has to say about itself in plain words: an
// action never logged (its q is fixed by the ridge alone), transitions
// left out.
func (m *LinearModel) Warnings() []string { return slices.Clone(m.warnings) }

// Values returns q, v and next for every step of d (see Model). v(s) is
// sum_a pi(a|s) q(s, a) with pi from d's TargetProbs for discrete actions,
// and for real actions the Monte Carlo mean of q(s, a_k) over the
// Target.Samples actions drawn at s as in the fit (the same draws at the
// same state, so next[j] = v[j+1] where s'_j = s_(j+1)). next[j] is NaN
// where the next state, or for discrete actions the target's
// distribution there, is unknown; for a finite-horizon model it is 0
// after an episode's last step.
func (m *LinearModel) Values(d *dataset.Dataset) (q, v, next []float64, err error) {
	if d == nil {
		return nil, nil, nil, errors.New("value: linear: no data")
	}
	if err := m.target.compatible("linear", d, len(m.f.state.mean)); err != nil {
		return nil, nil, nil, err
	}
	n := d.NumSteps()
	q, v, next = make([]float64, n), make([]float64, n), make([]float64, n)
	thetas := m.Thetas
	if m.finite {
		thetas = m.extend(slices.Clone(m.Thetas), d.MaxLen())
	}
	// theta returns the coefficients for h steps left (stationary: h is
	// ignored); h = 0 is the zero function.
	theta := func(h int) []float64 {
		if !m.finite {
			return m.Theta
		}
		if h == 0 {
			return nil
		}
		return thetas[h-1]
	}
	parts := stepHalves(n)
	var errs [2]error
	run(m.workers, func(w int) {
		errs[w] = m.values(d, parts[w][0], parts[w][1], theta, q, v, next)
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, nil, err
		}
	}
	return q, v, next, nil
}

// values fills q, v and next for the steps [lo, hi).
func (m *LinearModel) values(d *dataset.Dataset, lo, hi int, theta func(h int) []float64, q, v, next []float64) error {
	if lo >= hi {
		return nil
	}
	f := m.f
	sc := f.newScratch(m.target)
	// Backwards, so that v[j+1] is known when next[j] is wanted.
	e := episodeOfStep(d, hi-1)
	for j := hi - 1; j >= lo; j-- {
		for j < d.Start[e] {
			e--
		}
		if err := checkRealStep("linear", d, e, j); err != nil {
			return err
		}
		h := d.Start[e+1] - j // steps left
		th := theta(h)
		blk := f.stateAction(sc.x, sc, d, j)
		q[j] = dot(sc.x, th[blk*f.P:blk*f.P+f.P])
		var probs []float64
		if f.numActions > 0 {
			probs = d.TargetProbsAt(j)
			if err := checkTargetRow("linear", d, e, j, probs, "logged"); err != nil {
				return err
			}
		}
		f.expected(sc, d.ObsAt(j), probs)
		v[j] = dot(sc.psi, th)

		// next[j]: v^(h-1)(s'_j).
		thn := theta(h - 1)
		if m.finite && thn == nil {
			next[j] = 0
			continue
		}
		obs, ok := d.NextObs(e, j)
		if ok && f.numActions > 0 {
			probs, ok = d.NextTargetProbs(e, j)
			if ok {
				if err := checkTargetRow("linear", d, e, j, probs, "next"); err != nil {
					return err
				}
			}
		}
		if !ok {
			next[j] = math.NaN()
			continue
		}
		if !allFinite(obs) {
			return fmt.Errorf("value: linear: episode %q step %d: next state %v is not finite", d.IDs[e], j-d.Start[e], obs)
		}
		if f.numActions == 0 && j+1 < hi && j+1 < d.Start[e+1] && sameBits(obs, d.ObsAt(j+1)) {
			// The state of the next step: the same draws would give
			// the same value.
			next[j] = v[j+1]
			continue
		}
		f.expected(sc, obs, probs)
		next[j] = dot(sc.psi, thn)
	}
	return nil
}

// sameBits reports whether two vectors are equal bit for bit.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i, v := range a {
		if math.Float64bits(v) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func dot(x, y []float64) float64 {
	s := 0.0
	for i, v := range x {
		s += v * y[i]
	}
	return s
}
