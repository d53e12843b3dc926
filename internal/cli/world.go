package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/ring"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// worldFlags choose a built-in tabular world and its two policies; demo
// and sample share them.
type worldFlags struct {
	Env      string   `name:"env" enum:"taxi,ring,pendulum" default:"taxi" help:"World: taxi (the paper's infinite-horizon Taxi, 2000 states), ring (Appendix B) or, for sample only, pendulum (real states; target pi*, behavior (1-mix)*pi* + mix*pi+)."`
	Target   string   `name:"policy" aliases:"target" default:"pi19" help:"Taxi target policy: one of the paper's pi14..pi19 or a CSV file (state,p0..p5)."`
	Behavior string   `default:"pi18" help:"Taxi policy mixed into the behavior policy (pi14..pi19 or a CSV file)."`
	Mix      *float64 `placeholder:"M" help:"Mixing ratio of the behavior policy: behavior = (1-mix)*target + mix*behavior policy (the paper's Section 5 calls it alpha). Default 1."`
	OldMix   *float64 `name:"alpha" hidden:"" help:"The old name of --mix (estimate's --alpha is the intervals' level)."`
	Rho      float64  `default:"0.3" help:"Ring: the behavior picks R with probability rho, the target with 1-rho."`
	States   int      `default:"5" help:"Ring: number of states (odd)."`
}

// mix returns the behavior's mixing ratio: --mix, or the old --alpha with
// a warning on stderr, or 1. --alpha was demo's and sample's name for it
// and estimate's for the intervals' level; a flag name now has one
// meaning in every verb, the level's.
func (f *worldFlags) mix(stderr io.Writer) (float64, error) {
	switch {
	case f.OldMix != nil && f.Mix != nil:
		return 0, usagef("--alpha is the old name of --mix: give --mix only")
	case f.OldMix != nil:
		fmt.Fprintln(stderr, "ihope: warning: --alpha is now --mix here (the behavior's mixing ratio); --alpha will go, and in estimate it is the intervals' level")
		f.Mix = f.OldMix
	case f.Mix == nil:
		one := 1.0
		f.Mix = &one
	}
	if m := *f.Mix; !(m >= 0 && m <= 1) {
		return 0, usagef("--mix %v is outside [0, 1]", m)
	}
	return *f.Mix, nil
}

// world is a tabular environment with a target and a behavior policy.
type world struct {
	name     string
	table    mdp.Finite
	sim      sim.Discrete
	target   *policy.Tabular
	behavior *policy.Tabular
	desc     string
}

func (f *worldFlags) build(stderr io.Writer) (*world, error) {
	mix, err := f.mix(stderr)
	if err != nil {
		return nil, err
	}
	w := &world{name: f.Env}
	var base *policy.Tabular
	switch f.Env {
	case "taxi":
		m := taxi.New()
		w.table = m
		if w.target, err = loadTaxiPolicy(f.Target); err != nil {
			return nil, err
		}
		if base, err = loadTaxiPolicy(f.Behavior); err != nil {
			return nil, err
		}
		w.desc = fmt.Sprintf("taxi, target %s, behavior (1-mix)*%s + mix*%s with mix = %g", f.Target, f.Target, f.Behavior, mix)
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
		w.desc = fmt.Sprintf("ring of %d states, target picks R with %g, behavior (1-mix)*target + mix*(R with %g) with mix = %g", f.States, 1-f.Rho, f.Rho, mix)
	case "pendulum":
		return nil, usagef("--env pendulum has no exact truth to compare with: use it with ihope sample, then ihope estimate")
	default:
		return nil, usagef("unknown --env %q", f.Env)
	}
	if w.behavior, err = policy.Mixture(mix, w.target, base); err != nil {
		return nil, err
	}
	w.sim = sim.NewSampler(w.table)
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
