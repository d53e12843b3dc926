package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/ihope-ope/ihope/env"
	"github.com/ihope-ope/ihope/env/ring"
	"github.com/ihope-ope/ihope/env/taxi"
	"github.com/ihope-ope/ihope/policy"
)

// worldFlags choose a built-in tabular world and its two policies; demo
// and sample share them.
type worldFlags struct {
	Env      string  `name:"env" enum:"taxi,ring,pendulum" default:"taxi" help:"World: taxi (the paper's infinite-horizon Taxi, 2000 states), ring (Appendix B) or, for sample only, pendulum (real states; target pi*, behavior (1-alpha)*pi* + alpha*pi+)."`
	Target   string  `name:"policy" aliases:"target" default:"pi19" help:"Taxi target policy: one of the paper's pi14..pi19 or a CSV file (state,p0..p5)."`
	Behavior string  `default:"pi18" help:"Taxi policy mixed into the behavior policy (pi14..pi19 or a CSV file)."`
	Alpha    float64 `default:"1" help:"Mixing ratio: behavior = (1-alpha)*target + alpha*behavior policy (the paper's Section 5)."`
	Rho      float64 `default:"0.3" help:"Ring: the behavior picks R with probability rho, the target with 1-rho."`
	States   int     `default:"5" help:"Ring: number of states (odd)."`
}

// world is a tabular environment with a target and a behavior policy.
type world struct {
	name     string
	table    env.Tabular
	sim      env.Discrete
	target   *policy.Tabular
	behavior *policy.Tabular
	desc     string
}

func (f *worldFlags) build() (*world, error) {
	if !(f.Alpha >= 0 && f.Alpha <= 1) {
		return nil, usagef("--alpha %v is outside [0, 1]", f.Alpha)
	}
	w := &world{name: f.Env}
	var base *policy.Tabular
	switch f.Env {
	case "taxi":
		m := taxi.New()
		w.table = m
		var err error
		if w.target, err = loadTaxiPolicy(f.Target); err != nil {
			return nil, err
		}
		if base, err = loadTaxiPolicy(f.Behavior); err != nil {
			return nil, err
		}
		w.desc = fmt.Sprintf("taxi, target %s, behavior (1-alpha)*%s + alpha*%s with alpha = %g", f.Target, f.Target, f.Behavior, f.Alpha)
	case "ring":
		m, err := ring.New(f.States)
		if err != nil {
			return nil, usagef("--states: %v", err)
		}
		if !(f.Rho > 0 && f.Rho < 1) {
			return nil, usagef("--rho %v is outside (0, 1)", f.Rho)
		}
		w.table = m
		w.target = ring.Policy(f.States, 1-f.Rho)
		base = ring.Policy(f.States, f.Rho)
		w.desc = fmt.Sprintf("ring of %d states, target picks R with %g, behavior (1-alpha)*target + alpha*(R with %g) with alpha = %g", f.States, 1-f.Rho, f.Rho, f.Alpha)
	case "pendulum":
		return nil, usagef("--env pendulum has no exact truth to compare with: use it with ihope sample, then ihope estimate")
	default:
		return nil, usagef("unknown --env %q", f.Env)
	}
	var err error
	if w.behavior, err = policy.Mixture(f.Alpha, w.target, base); err != nil {
		return nil, err
	}
	w.sim = env.NewSampler(w.table)
	return w, nil
}

// loadTaxiPolicy returns an embedded paper policy by name or reads a CSV.
func loadTaxiPolicy(name string) (*policy.Tabular, error) {
	for _, n := range taxi.PolicyNames() {
		if n == name {
			return taxi.Policy(name)
		}
	}
	if !strings.HasSuffix(name, ".csv") {
		return nil, usagef("unknown policy %q: use one of %s or a .csv file", name, strings.Join(taxi.PolicyNames(), ", "))
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := policy.ReadCSV(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if p.NumStates() != taxi.NumStates || p.NumActions() != taxi.NumActions {
		return nil, fmt.Errorf("%s: policy is %dx%d, taxi needs %dx%d", name, p.NumStates(), p.NumActions(), taxi.NumStates, taxi.NumActions)
	}
	return p, nil
}
