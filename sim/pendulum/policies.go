package pendulum

import (
	"bytes"
	_ "embed"
	"fmt"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/policy"
)

// DefaultStd is the standard deviation of the shipped policies' Gaussian
// (before truncation to [-2, 2]).
const DefaultStd = 0.5

// DefaultHidden is the hidden width of the shipped policies' mean network.
const DefaultHidden = 32

// NewPolicy returns an untrained truncated Gaussian policy for Pendulum:
// mean = a 3 -> hidden -> 1 tanh network with Glorot-uniform weights drawn
// from rng, standard deviation std, actions truncated to [-2, 2].
func NewPolicy(rng *rand.Rand, hidden int, std float64) (*policy.TruncGaussian, error) {
	m, err := policy.NewMLP(rng, 3, hidden, 1)
	if err != nil {
		return nil, err
	}
	return policy.NewTruncGaussian(m, std, low, high)
}

//go:generate go run ../../internal/pendulumgen -out .

var (
	//go:embed target.json
	targetJSON []byte
	//go:embed plus.json
	plusJSON []byte
)

// DefaultTarget returns pi_*, the paper's target policy: the final policy
// of the REINFORCE run of internal/pendulumgen. Each call returns a new
// copy.
func DefaultTarget() *policy.TruncGaussian { return mustRead("target.json", targetJSON) }

// DefaultPlus returns pi_+, an earlier snapshot of the same run, before
// convergence. Each call returns a new copy.
func DefaultPlus() *policy.TruncGaussian { return mustRead("plus.json", plusJSON) }

// Behavior returns the paper's behavior policy (1-alpha) pi_* + alpha pi_+
// built from the shipped policies; alpha = 0 is the target itself.
func Behavior(alpha float64) (*policy.ContinuousMixture, error) {
	return policy.NewContinuousMixture(alpha, DefaultTarget(), DefaultPlus())
}

func mustRead(name string, b []byte) *policy.TruncGaussian {
	p, err := policy.ReadTruncGaussian(bytes.NewReader(b))
	if err != nil {
		// The files are generated and tested with the package; a
		// failure here is a build mistake, not a user error.
		panic(fmt.Sprintf("pendulum: embedded %s: %v", name, err))
	}
	return p
}
