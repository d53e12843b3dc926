package policy

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// Continuous is a stochastic policy over real action vectors, seen through
// observations: what sim.Continuous's Observe returns and what a dataset
// logs in Step.Obs.
type Continuous interface {
	// ActionDim is the length of an action vector.
	ActionDim() int
	// LogProb returns log pi(a|obs), a log-density with respect to
	// Lebesgue measure on the action space; -Inf where the density is 0.
	LogProb(obs, action []float64) float64
	// Sample draws an action, newly allocated.
	Sample(rng *rand.Rand, obs []float64) []float64
}

// TruncGaussian is the Pendulum policy of the paper (Section 5,
// "Pendulum"): each action component is an independent Gaussian with mean
// given by a network of the observation and a constant standard deviation,
// truncated to the box [Low_i, High_i]:
//
//	pi(a|s) = prod_i phi(z_i) / (Std (Phi(beta_i) - Phi(alpha_i))),
//	z_i = (a_i - mu_i(s))/Std, alpha_i = (Low_i - mu_i(s))/Std, beta_i = (High_i - mu_i(s))/Std,
//
// with phi and Phi the standard normal density and distribution function.
// The normaliser is exact and computed in log space from Mills' ratio, so
// the log-density stays accurate when mu(s) lies far outside the box (see
// truncnorm.go). The mean may leave the box: the policy then piles its
// mass against the nearer bound.
//
// Fields are exported for JSON (WriteJSON, ReadTruncGaussian); use
// NewTruncGaussian or Validate after filling them by hand.
type TruncGaussian struct {
	Mean *MLP      `json:"mean"`
	Std  float64   `json:"std"`
	Low  []float64 `json:"low"`
	High []float64 `json:"high"`
}

var _ Continuous = (*TruncGaussian)(nil)

// NewTruncGaussian returns the truncated Gaussian policy with the given
// mean network, standard deviation and action box. The network's output
// width must equal len(low) = len(high).
func NewTruncGaussian(mean *MLP, std float64, low, high []float64) (*TruncGaussian, error) {
	p := &TruncGaussian{Mean: mean, Std: std, Low: append([]float64(nil), low...), High: append([]float64(nil), high...)}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// Validate reports whether the policy is well formed: a valid network,
// 0 < Std < Inf, and Low_i < High_i for every output of the network.
func (p *TruncGaussian) Validate() error {
	if p.Mean == nil {
		return fmt.Errorf("policy: truncated Gaussian without a mean network")
	}
	if err := p.Mean.Validate(); err != nil {
		return err
	}
	if !(p.Std > 0) || math.IsInf(p.Std, 1) {
		return fmt.Errorf("policy: truncated Gaussian standard deviation %v, want 0 < std < Inf", p.Std)
	}
	d := p.Mean.Out()
	if len(p.Low) != d || len(p.High) != d {
		return fmt.Errorf("policy: truncated Gaussian with %d outputs but %d lower and %d upper bounds", d, len(p.Low), len(p.High))
	}
	for i := range p.Low {
		if !(p.Low[i] < p.High[i]) {
			return fmt.Errorf("policy: truncated Gaussian action %d has bounds [%v, %v]", i, p.Low[i], p.High[i])
		}
	}
	return nil
}

// ActionDim returns the number of action components.
func (p *TruncGaussian) ActionDim() int { return len(p.Low) }

// ObsDim returns the length of the observations the mean network reads.
func (p *TruncGaussian) ObsDim() int { return p.Mean.In() }

// MeanAction returns mu(obs), the mean of the Gaussian before truncation.
func (p *TruncGaussian) MeanAction(obs []float64) []float64 { return p.Mean.Forward(obs) }

// LogProb returns log pi(a|obs), -Inf if a leaves the box. It panics if
// the lengths of obs or a do not match the policy.
func (p *TruncGaussian) LogProb(obs, a []float64) float64 {
	p.checkAction(a)
	mu := p.Mean.Forward(obs)
	return p.logProbAt(mu, a)
}

func (p *TruncGaussian) logProbAt(mu, a []float64) float64 {
	lp := 0.0
	for i, m := range mu {
		lp += truncLogPDF(a[i], m, p.Std, p.Low[i], p.High[i])
	}
	return lp
}

func (p *TruncGaussian) checkAction(a []float64) {
	if len(a) != len(p.Low) {
		panic(fmt.Sprintf("policy: action of length %d, want %d", len(a), len(p.Low)))
	}
}

// Sample draws an action from pi(.|obs); every component lies in its
// bound. A NaN or infinite mean (a diverged network) gives NaN components.
func (p *TruncGaussian) Sample(rng *rand.Rand, obs []float64) []float64 {
	mu := p.Mean.Forward(obs)
	return p.sampleAt(rng, mu)
}

func (p *TruncGaussian) sampleAt(rng *rand.Rand, mu []float64) []float64 {
	a := make([]float64, len(mu))
	for i, m := range mu {
		s := p.Std
		z := truncStdRand(rng, (p.Low[i]-m)/s, (p.High[i]-m)/s)
		// Rounding in m + s z may step a hair outside the box.
		a[i] = math.Min(math.Max(m+s*z, p.Low[i]), p.High[i])
	}
	return a
}

// AddGradLogProb adds to grad (length Mean.NumParams()) the gradient of
// log pi(a|obs) with respect to the mean network's parameters, and returns
// log pi(a|obs). Per component,
//
//	d log pi / d mu_i = (z_i - (phi(alpha_i) - phi(beta_i))/Z_i) / Std,
//
// back-propagated through the network. This is the score function that
// REINFORCE (package train) follows.
func (p *TruncGaussian) AddGradLogProb(obs, a, grad []float64) float64 {
	p.checkAction(a)
	mu := p.Mean.AddGradOf(obs, grad, func(mu, dmu []float64) {
		for i, m := range mu {
			s := p.Std
			dmu[i] = ((a[i]-m)/s - truncDLogZ(m, s, p.Low[i], p.High[i])) / s
		}
	})
	return p.logProbAt(mu, a)
}

// Clone returns a deep copy.
func (p *TruncGaussian) Clone() *TruncGaussian {
	return &TruncGaussian{Mean: p.Mean.Clone(), Std: p.Std,
		Low: append([]float64(nil), p.Low...), High: append([]float64(nil), p.High...)}
}

// truncGaussianJSON is the file format: a type tag, then the fields.
type truncGaussianJSON struct {
	Type string `json:"type"`
	*TruncGaussian
}

const truncGaussianType = "trunc-gaussian"

// WriteJSON writes the policy as JSON ({"type":"trunc-gaussian","mean":
// {"sizes":[...],"params":[...]},"std":...,"low":[...],"high":[...]}),
// every number in its shortest exact form, so ReadTruncGaussian gives back
// the same policy bit for bit. Infinite bounds cannot be written.
func (p *TruncGaussian) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(truncGaussianJSON{Type: truncGaussianType, TruncGaussian: p}, "", " ")
	if err != nil {
		return fmt.Errorf("policy: write truncated Gaussian: %w", err)
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("policy: write truncated Gaussian: %w", err)
	}
	return nil
}

// ReadTruncGaussian reads a policy written by WriteJSON and validates it.
func ReadTruncGaussian(r io.Reader) (*TruncGaussian, error) {
	v := truncGaussianJSON{TruncGaussian: &TruncGaussian{}}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("policy: read truncated Gaussian: %w", err)
	}
	if v.Type != truncGaussianType {
		return nil, fmt.Errorf("policy: read truncated Gaussian: type %q, want %q", v.Type, truncGaussianType)
	}
	if err := v.Validate(); err != nil {
		return nil, fmt.Errorf("policy: read truncated Gaussian: %w", err)
	}
	return v.TruncGaussian, nil
}

// ContinuousMixture is the policy (1-alpha) A + alpha B: each action is
// drawn from B with probability alpha and from A otherwise, and its
// density is exact,
//
//	log pi(a|s) = log((1-alpha) pi_A(a|s) + alpha pi_B(a|s)),
//
// formed by log-sum-exp so that neither density needs to be representable
// on its own. The paper's Pendulum behavior policies are
// (1-alpha) pi_* + alpha pi_+ (Section 5).
type ContinuousMixture struct {
	alpha float64
	a, b  Continuous
}

var _ Continuous = (*ContinuousMixture)(nil)

// NewContinuousMixture returns (1-alpha) a + alpha b; alpha must lie in
// [0, 1] and both policies must have the same action dimension.
func NewContinuousMixture(alpha float64, a, b Continuous) (*ContinuousMixture, error) {
	if !(alpha >= 0 && alpha <= 1) {
		return nil, fmt.Errorf("policy: mixing ratio %v outside [0, 1]", alpha)
	}
	if a.ActionDim() != b.ActionDim() {
		return nil, fmt.Errorf("policy: mixture of policies with %d and %d action components", a.ActionDim(), b.ActionDim())
	}
	return &ContinuousMixture{alpha: alpha, a: a, b: b}, nil
}

// Alpha returns the weight of the second component.
func (m *ContinuousMixture) Alpha() float64 { return m.alpha }

// ActionDim returns the components' action dimension.
func (m *ContinuousMixture) ActionDim() int { return m.a.ActionDim() }

// LogProb returns log((1-alpha) pi_A(a|obs) + alpha pi_B(a|obs)).
func (m *ContinuousMixture) LogProb(obs, a []float64) float64 {
	switch m.alpha {
	case 0:
		return m.a.LogProb(obs, a)
	case 1:
		return m.b.LogProb(obs, a)
	}
	la := math.Log1p(-m.alpha) + m.a.LogProb(obs, a)
	lb := math.Log(m.alpha) + m.b.LogProb(obs, a)
	hi, lo := la, lb
	if lb > la {
		hi, lo = lb, la
	}
	if math.IsInf(hi, -1) {
		return hi
	}
	return hi + math.Log1p(math.Exp(lo-hi))
}

// Sample draws the component (B with probability alpha), then the action.
func (m *ContinuousMixture) Sample(rng *rand.Rand, obs []float64) []float64 {
	if rng.Float64() < m.alpha {
		return m.b.Sample(rng, obs)
	}
	return m.a.Sample(rng, obs)
}
