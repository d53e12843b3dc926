package benchmark

import (
	"fmt"
	"strconv"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/cobs"
	"github.com/ihope-ope/ihope/sim/gridwalk"
	"github.com/ihope-ope/ihope/sim/ring"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// The logging settings of the worlds: the sources' where they have one
// (doc.go lists them), else chosen here and said so.
const (
	// COBS's configurations: cfgs/base_toy_graph_cfg.json (num_traj 256)
	// and cfgs/base_toy_mc_cfg.json (num_traj 128).
	GraphEpisodes = 256
	ToyMCEpisodes = 128
	// ModelFail and ModelWin have no COBS configuration: the Graph's 256
	// episodes, chosen here.
	ModelEpisodes = 256
	// dice_rl's GridWalk runs (google/scripts/xm_run_neural_dice.py):
	// 100 trajectories of 100 steps.
	GridWalkEpisodes = 100
	// The paper's Taxi as the README's estimand table runs it: n = 200
	// episodes of T = 400 steps, average reward (gamma = 1).
	TaxiEpisodes = 200
	TaxiHorizon  = 400
	// The paper's ring (Appendix B; experiment "ring"): 5 states,
	// behavior P(R) = 0.45, n = 20 episodes; T = 100 steps, the middle of
	// the experiment's horizons, average reward.
	RingEpisodes = 20
	RingHorizon  = 100
	RingStates   = 5
	RingBehavior = 0.45
)

// cobsFamily is the family of target policies of the COBS worlds: COBS's
// five levels (P(first action) = 0.001, 0.2, 0.4, 0.6, 0.8; cobs.Level)
// and the half-levels between them, 0.1 ... 0.9, ten policies in all.
// COBS evaluates one target (level 1) at a time; a family of ten is what
// makes its ranking and regret@5 mean something. Level 4 (0.8) is the
// behavior itself; level 0 is COBS's hardest target (ratios up to 5 per
// step).
var cobsFamily = []float64{cobs.Level(0), 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}

// ringFamily is the ring's family: P(R) = 0.15 ... 0.85, the behavior
// (0.45) and the paper's target (0.55) among them. The ring's exact value
// of P(R) = p is p itself (every R pays 1 and the uniform start is
// stationary).
var ringFamily = []float64{0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85}

// tick formats a probability for an axis: ".2", ".001".
func tick(p float64) string {
	s := strconv.FormatFloat(p, 'g', -1, 64)
	if len(s) > 1 && s[0] == '0' {
		return s[1:]
	}
	return s
}

// stateTargets returns the targets of a fully observed world.
func stateTargets(names, ticks []string, pols []*policy.Tabular) []Target {
	out := make([]Target, len(pols))
	for i, p := range pols {
		out[i] = Target{Name: names[i], Tick: ticks[i], Policy: p, Logged: p}
	}
	return out
}

// family returns the targets of a one-parameter family: prob p gives
// policy(p), named what+"="+p.
func family(what string, probs []float64, policyOf func(float64) *policy.Tabular) []Target {
	names, ticks := make([]string, len(probs)), make([]string, len(probs))
	pols := make([]*policy.Tabular, len(probs))
	for i, p := range probs {
		names[i] = fmt.Sprintf("%s=%g", what, p)
		ticks[i] = tick(p)
		pols[i] = policyOf(p)
	}
	return stateTargets(names, ticks, pols)
}

func graphWorld() (*World, error) {
	g := cobs.NewDefaultGraph()
	return &World{
		Name:     "graph",
		Title:    fmt.Sprintf("COBS Graph (L = %d, slip %g)", cobs.GraphLength, cobs.GraphSlip),
		Source:   "COBS cfgs/base_toy_graph_cfg.json",
		Table:    g,
		Behavior: g.Behavior(),
		Targets:  family("P(A0)", cobsFamily, g.Policy),
		N:        GraphEpisodes, T: cobs.GraphLength, Gamma: cobs.GraphGamma,
	}, nil
}

func toyMCWorld() (*World, error) {
	m := cobs.NewToyMC()
	return &World{
		Name:     "toymc",
		Title:    "COBS ToyMC (toy mountain car, 22 positions)",
		Source:   "COBS cfgs/base_toy_mc_cfg.json",
		Table:    m,
		Behavior: m.Behavior(),
		Targets:  family("P(Right)", cobsFamily, m.Policy),
		N:        ToyMCEpisodes, T: cobs.ToyMCHorizon, Gamma: cobs.ToyMCGamma,
	}, nil
}

// modelFailWorld is COBS's ModelFail with the log it is made for: the
// states 0, 1, 2 are recorded as one observation, so a model fitted on
// the log is wrong however many episodes it sees. The policies are the
// same in those states, so the importance ratios are exact.
func modelFailWorld() (*World, error) {
	g := cobs.NewModelFail()
	w := &World{
		Name:     "modelfail",
		Title:    "COBS ModelFail (3 of 4 states aliased in the log)",
		Source:   "COBS ope/envs/model_fail.py; Thomas and Brunskill (2016); n chosen here",
		Table:    g,
		Behavior: g.Behavior(),
		Targets:  family("P(A0)", cobsFamily, g.Policy),
		N:        ModelEpisodes, T: cobs.ModelFailHorizon, Gamma: cobs.ModelGamma,
		Observe: g.Observe, NumObs: g.NumObservations(),
	}
	for i := range w.Targets {
		o, err := observed(w.Targets[i].Policy, g.Observe, g.NumObservations())
		if err != nil {
			return nil, err
		}
		w.Targets[i].Logged = o
	}
	return w, nil
}

func modelWinWorld() (*World, error) {
	m := cobs.NewModelWin()
	return &World{
		Name:     "modelwin",
		Title:    "COBS ModelWin (3 states, Markov)",
		Source:   "COBS ope/envs/model_win.py; Thomas and Brunskill (2016); n chosen here",
		Table:    m,
		Behavior: m.Behavior(),
		Targets:  family("P(A0)", cobsFamily, m.Policy),
		N:        ModelEpisodes, T: cobs.ModelWinHorizon, Gamma: cobs.ModelGamma,
	}, nil
}

func gridWalkWorld() (*World, error) {
	g, err := gridwalk.New(gridwalk.DefaultLength)
	if err != nil {
		return nil, err
	}
	return &World{
		Name:     "gridwalk",
		Title:    "dice_rl GridWalk (10x10)",
		Source:   "dice_rl google/scripts/xm_run_neural_dice.py (100 x 100 steps, gamma 0.99); targets of xm_run_neural_bayes_dice.py",
		Table:    g,
		Behavior: g.Behavior(),
		Targets:  family("alpha", gridwalk.TargetAlphas, g.Policy),
		N:        GridWalkEpisodes, T: gridwalk.Horizon, Gamma: gridwalk.Gamma,
	}, nil
}

// taxiWorld is the paper's Taxi with its six policies as the family and
// pi18 (the paper's pi+) logging: the family holds the behavior itself
// and policies both better and worse than it.
func taxiWorld() (*World, error) {
	behavior, err := taxi.Policy("pi18")
	if err != nil {
		return nil, err
	}
	names := taxi.PolicyNames()
	pols := make([]*policy.Tabular, len(names))
	for i, n := range names {
		if pols[i], err = taxi.Policy(n); err != nil {
			return nil, err
		}
	}
	ticks := make([]string, len(names))
	for i, n := range names {
		ticks[i] = "π" + n[2:]
	}
	m := taxi.New()
	return &World{
		Name:     "taxi",
		Title:    "Taxi (the paper's, 2000 states), behavior pi18",
		Source:   "the paper's Section 5 (Liu et al. 2018); n, T of the README's estimand table",
		Table:    sampled{sim.NewSampler(m), m},
		Behavior: behavior,
		Targets:  stateTargets(names, ticks, pols),
		N:        TaxiEpisodes, T: TaxiHorizon, Gamma: 1,
	}, nil
}

func ringWorld() (*World, error) {
	m, err := ring.New(RingStates)
	if err != nil {
		return nil, err
	}
	return &World{
		Name:     "ring",
		Title:    fmt.Sprintf("ring of %d states (Appendix B), behavior P(R) = %g", RingStates, RingBehavior),
		Source:   "the paper's Appendix B and experiment ring (n = 20); T chosen here",
		Table:    sampled{sim.NewSampler(m), m},
		Behavior: ring.Policy(RingStates, RingBehavior),
		Targets:  family("P(R)", ringFamily, func(p float64) *policy.Tabular { return ring.Policy(RingStates, p) }),
		N:        RingEpisodes, T: RingHorizon, Gamma: 1,
	}, nil
}

// sampled joins a table and its sampler (worlds that are not sim.Tables).
type sampled struct {
	*sim.Sampler
	mdp.Finite
}

// NumStates and NumActions resolve the ambiguity of the embedded pair.
func (s sampled) NumStates() int  { return s.Finite.NumStates() }
func (s sampled) NumActions() int { return s.Finite.NumActions() }
