package behavior

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/holdout"
)

// Logistic estimates pi0(a|s) for real states and discrete actions by
// multinomial logistic regression on the standardised state:
//
//	pihat(a|s) = exp(z_a) / sum_b exp(z_b),   z_a = theta_a . x + c_a,   x_k = (s_k - mean_k) / sd_k,
//
// with mean_k and sd_k those of the fitted log. theta and c minimise the
// mean negative log-likelihood of the logged actions plus the penalty
// (lambda/2) (|theta|^2 + |c|^2) by L-BFGS (lbfgs); the objective is strictly
// convex, so the minimiser is unique. The intercepts c are penalised too,
// so that an action the fit never saw keeps a finite (small) probability.
//
// lambda is chosen among Lambdas by held-out log-likelihood: fitted on
// 80% of the episodes for every lambda (the largest first, each fit
// starting from the last), scored on the other 20% (with one episode, on
// the last 20% of its steps), and the best refitted on all the data.
type Logistic struct {
	// Lambdas are the penalties tried (nil: 1, 0.1, ..., 1e-5).
	Lambdas []float64
	// Seed seeds the choice of the held-out episodes.
	Seed uint64
}

// Name returns "logistic".
func (Logistic) Name() string { return "logistic" }

// defaultLambdas are Logistic's penalties when Lambdas is nil.
var defaultLambdas = []float64{1, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5}

// heldOutShare is the share of episodes (or of one episode's last steps)
// on which Logistic scores its penalties.
const heldOutShare = 0.2

// Fit chooses the penalty and fits the regression.
func (l Logistic) Fit(d *dataset.Dataset) (Model, error) {
	if d.Discrete() {
		return nil, fmt.Errorf("logistic needs real states (state_0, ...); fit state ids with Counts")
	}
	if err := checkActions(d); err != nil {
		return nil, err
	}
	lambdas := slices.Clone(l.Lambdas)
	if lambdas == nil {
		lambdas = slices.Clone(defaultLambdas)
	}
	for _, lam := range lambdas {
		if !(lam > 0) || math.IsInf(lam, 1) {
			return nil, fmt.Errorf("logistic: penalty %v, want > 0", lam)
		}
	}
	if len(lambdas) == 0 {
		return nil, fmt.Errorf("logistic: no penalties to try")
	}
	slices.Sort(lambdas)
	slices.Reverse(lambdas)
	m := newLogisticModel(d)
	p := m.problem(d)

	var fit, held []int
	if len(lambdas) > 1 {
		h, byEpisode := holdout.Episodes(rand.New(rand.NewPCG(l.Seed, 0x6c6f67)), d.NumEpisodes(), heldOutShare)
		for e := range d.NumEpisodes() {
			lo, hi := d.Span(e)
			cut := hi // steps from cut on are held out
			if !byEpisode {
				cut = hi - int(math.Round(heldOutShare*float64(hi-lo)))
			} else if h[e] {
				cut = lo
			}
			for j := lo; j < hi; j++ {
				if j < cut {
					fit = append(fit, j)
				} else {
					held = append(held, j)
				}
			}
		}
	}
	best, bestLL := lambdas[0], math.Inf(-1)
	theta := make([]float64, len(m.Theta))
	if len(fit) > 0 && len(held) > 0 {
		for _, lam := range lambdas {
			if err := p.minimise(theta, fit, lam); err != nil {
				return nil, err
			}
			if ll := -p.nll(theta, nil, held, 0); ll > bestLL {
				best, bestLL = lam, ll
				copy(m.Theta, theta)
			}
		}
	}
	m.Lambda = best
	if err := p.minimise(m.Theta, nil, best); err != nil {
		return nil, err
	}
	return m, nil
}

// LogisticModel is a fitted multinomial logistic regression.
type LogisticModel struct {
	// K is the number of actions and D the state's dimension.
	K, D int
	// Mean and SD standardise the state (SD 1 for a constant component).
	Mean, SD []float64
	// Theta holds, for every action a, its D weights and its intercept:
	// Theta[a*(D+1) : (a+1)*(D+1)].
	Theta []float64
	// Lambda is the penalty chosen.
	Lambda float64
}

func newLogisticModel(d *dataset.Dataset) *LogisticModel {
	D, K := d.StateDim, d.NumActions
	m := &LogisticModel{K: K, D: D, Mean: make([]float64, D), SD: make([]float64, D), Theta: make([]float64, K*(D+1))}
	n := float64(d.NumSteps())
	for j := range d.NumSteps() {
		floats.Add(m.Mean, d.ObsAt(j))
	}
	floats.Scale(1/n, m.Mean)
	for j := range d.NumSteps() {
		for k, v := range d.ObsAt(j) {
			m.SD[k] += (v - m.Mean[k]) * (v - m.Mean[k])
		}
	}
	for k, v := range m.SD {
		m.SD[k] = math.Sqrt(v / n)
		if !(m.SD[k] > 0) {
			m.SD[k] = 1
		}
	}
	return m
}

// features writes the standardised state of step j of d and a 1 into x.
func (m *LogisticModel) features(d *dataset.Dataset, j int, x []float64) {
	for k, v := range d.ObsAt(j) {
		x[k] = (v - m.Mean[k]) / m.SD[k]
	}
	x[m.D] = 1
}

// logSoftmax writes log pihat(.|x) into z.
func (m *LogisticModel) logSoftmax(theta, x, z []float64) {
	w := m.D + 1
	for a := range z {
		z[a] = floats.Dot(theta[a*w:(a+1)*w], x)
	}
	lse := floats.LogSumExp(z)
	for a := range z {
		z[a] -= lse
	}
}

// LogProbs returns log pihat(a_j|s_j) for every step of d.
func (m *LogisticModel) LogProbs(d *dataset.Dataset) ([]float64, error) {
	if d.Discrete() || d.StateDim != m.D || d.ActionDim > 0 || d.NumActions > m.K {
		return nil, fmt.Errorf("logistic: the log has states of dimension %d and %d actions, the model %d and %d", d.StateDim, d.NumActions, m.D, m.K)
	}
	x, z := make([]float64, m.D+1), make([]float64, m.K)
	out := make([]float64, d.NumSteps())
	for j := range out {
		m.features(d, j, x)
		m.logSoftmax(m.Theta, x, z)
		out[j] = z[d.Action[j]]
	}
	return out, nil
}

// logisticProblem holds a log's standardised features for the fits.
type logisticProblem struct {
	m *LogisticModel
	x []float64 // (D+1) features per step
	a []int32
}

func (m *LogisticModel) problem(d *dataset.Dataset) *logisticProblem {
	w := m.D + 1
	p := &logisticProblem{m: m, x: make([]float64, d.NumSteps()*w), a: d.Action}
	for j := range d.NumSteps() {
		m.features(d, j, p.x[j*w:(j+1)*w])
	}
	return p
}

// nll returns the mean negative log-likelihood of the steps (all if nil)
// plus (lambda/2)|theta|^2, and writes its gradient into grad if not nil.
func (p *logisticProblem) nll(theta, grad []float64, steps []int, lambda float64) float64 {
	m := p.m
	w := m.D + 1
	z := make([]float64, m.K)
	if grad != nil {
		clear(grad)
	}
	n := len(p.a)
	if steps != nil {
		n = len(steps)
	}
	var f float64
	for i := range n {
		j := i
		if steps != nil {
			j = steps[i]
		}
		x := p.x[j*w : (j+1)*w]
		m.logSoftmax(theta, x, z)
		a := int(p.a[j])
		f -= z[a]
		if grad != nil {
			for b, lz := range z {
				g := math.Exp(lz)
				if b == a {
					g--
				}
				floats.AddScaled(grad[b*w:(b+1)*w], g, x)
			}
		}
	}
	f /= float64(n)
	f += lambda / 2 * floats.Dot(theta, theta)
	if grad != nil {
		floats.Scale(1/float64(n), grad)
		floats.AddScaled(grad, lambda, theta)
	}
	return f
}

// minimise fits theta (in place, from its value) on the steps (all if
// nil) with penalty lambda.
func (p *logisticProblem) minimise(theta []float64, steps []int, lambda float64) error {
	fg := func(x, g []float64) float64 { return p.nll(x, g, steps, lambda) }
	if err := lbfgs(fg, theta, 1e-7, 2000); err != nil {
		return fmt.Errorf("logistic (penalty %g): %w", lambda, err)
	}
	return nil
}
