package ope

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/value"
)

// Needs is what an estimator needs beyond the logged steps, as a set of
// flags.
type Needs uint

const (
	// NeedsDiscreteStates: state ids (the tabular learners and models).
	NeedsDiscreteStates Needs = 1 << iota
	// NeedsRealStates: real state vectors (the kernel and neural
	// learners).
	NeedsRealStates
	// NeedsTargetPolicy: the target's whole action distribution in every
	// state (Options.Target), not only the probability of the logged
	// action.
	NeedsTargetPolicy
	// NeedsSimulator: a simulator to roll the target out in
	// (Options.Sim), as the on-policy oracle does.
	NeedsSimulator
	// NeedsTargetDist: the target's whole action distribution at the
	// logged and next states, from Options.Target, the logs'
	// target_prob_k columns, or Options.TargetContinuous (real actions).
	NeedsTargetDist
	// NeedsBehavior: the behavior's probability of every logged action
	// (dataset.Dataset.HasBehavior), logged or fitted (package behavior):
	// the estimators that weigh by pi/pi0.
	NeedsBehavior
	// NeedsDiscreteActions: action ids (the state-action learners).
	NeedsDiscreteActions
)

// ErrNoBehavior is why an estimator that weighs by pi/pi0 does not apply
// to a log without behavior probabilities; its text is a contract of the
// command line, whose --fit-behavior fits them (package behavior).
var ErrNoBehavior = errors.New("needs behavior probabilities (or --fit-behavior)")

// Unit is what an estimator's Result.Weights weigh.
type Unit string

const (
	// UnitNone: the estimator weighs nothing worth a diagnostic (the
	// naive average's equal weights, a model, an oracle).
	UnitNone Unit = ""
	// UnitEpisode: one weight per episode (trajectory-wise IS).
	UnitEpisode Unit = "episode"
	// UnitStep: one weight per step.
	UnitStep Unit = "step"
)

// Options are what the registry's constructors build estimators from.
// The zero value builds every estimator that needs nothing but the logs.
//
// Options travel whole to the workers of a stream (package stream encodes
// them as JSON, and a test round-trips every field); the fields tagged
// json:"-" are the ones that cannot travel, the target policies and the
// simulator, which the estimators that stream do not read.
type Options struct {
	// Seed seeds the estimators that train (bch-neural, whose networks
	// get seeds derived from it, and mwl, dualdice and mql in their
	// neural forms); it overrides Neural.Seed and Minimax.Seed.
	// (bch-kernel's feature draw has its own fixed seed, Kernel.Seed: its
	// estimate is deterministic.)
	Seed uint64
	// Restarts is the number of networks bch-neural (and dr's neural
	// ratio) averages, ratio.Ensemble's Restarts (0: its default).
	Restarts int
	// Tabular holds bch-tabular's settings, Kernel bch-kernel's, Neural
	// bch-neural's (zero values: the documented defaults).
	Tabular ratio.Tabular
	Kernel  ratio.Kernel
	Neural  ratio.Neural

	// Target is the tabular target policy (model-based needs it).
	Target *policy.Tabular `json:"-"`
	// Sim rolls the target out in its world, for the on-policy oracle
	// (rollout.Simulator, rollout.SimulatorContinuous).
	Sim Simulator `json:"-"`
	// TargetContinuous is the target policy on real actions.
	TargetContinuous policy.Continuous `json:"-"`
	// OracleSeed seeds the oracle's rollouts.
	OracleSeed uint64

	// Estimand is the quantity asked for (empty: Horizon); estimators
	// that can target either follow it, the others state theirs.
	Estimand Estimand
	// ValueModel and RatioModel override the learners the value-based and
	// doubly robust estimators choose from the data: "tabular", "linear"
	// or "neural" for values, "tabular", "kernel", "neural" or
	// "marginal" for ratios. Empty: chosen from the data. "neural" also
	// chooses the neural forms of the minimax learners on real states:
	// RatioModel those of mwl and dualdice, ValueModel that of mql (their
	// kernel forms are the default; the other names leave them as they
	// are).
	ValueModel, RatioModel string
	// ValueDegree, if not 0, fixes the polynomial degree of the linear
	// value model fqe and dr choose from the data on real states
	// (value.Select): the bootstrap's resamples refit the class the whole
	// log chose instead of choosing again, 26 fits fewer each.
	ValueDegree int
	// Minimax holds the settings of the neural forms of mwl, dualdice
	// and mql (its Seed is overridden by Seed).
	Minimax value.MinimaxNeural
	// Folds is the doubly robust estimator's number of cross-fitting
	// folds (0: 2; 1: none).
	Folds int
	// ValueNeural holds the neural value learner's settings (its Seed is
	// overridden by Seed): ValueModel "neural"'s, and the network the
	// value model chosen from the data escalates to (FQE.Network).
	ValueNeural value.Neural
	// ValuePolynomialOnly keeps the value model chosen from the data
	// among the polynomial degrees: no network where none holds q (the
	// paper's experiments, whose figures were drawn so, and whose many
	// cells would each train it).
	ValuePolynomialOnly bool
	// ValueChoices, if not nil, lets fqe, dr and the ratios' value test
	// built from these options share the selection that escalated to
	// the network, so that it trains once per log (ihope estimate sets
	// one per run). It is the run's state, not an option: it does not
	// travel to a stream's workers.
	ValueChoices *ValueChoices `json:"-"`
	// Reservoir is the number of steps of the sample of whole episodes
	// the learners that train (bch-neural, the neural forms of fqe, mwl,
	// dualdice and mql) train on over a stream of shards (package
	// stream; 0: DefaultReservoir), drawn by a hash of Seed and the
	// episode ids.
	Reservoir int
	// RealStates says that the logs have real-valued states, for a
	// stream, which builds its estimators' sums before it sees the data:
	// mwl, dualdice and mql then stream in their kernel form (two
	// passes) instead of their tabular one. The in-memory estimators
	// choose their form from the data and ignore it.
	RealStates bool
	// Samples is the number of actions drawn per state from
	// TargetContinuous where a value model needs E_{a~pi}[q(s, a)]
	// (0: the value learner's default).
	Samples int
}

// valueTarget is the target's action distribution as the value learners
// take it.
func (o Options) valueTarget() value.Target {
	t := value.Target{Samples: o.Samples, Seed: o.Seed}
	if o.Target != nil {
		t.Policy = o.Target
	}
	if o.TargetContinuous != nil {
		t.Continuous = o.TargetContinuous
	}
	return t
}

// valueTest is the value model the density ratios on real states
// (bch-kernel, bch-neural) add to their loss's test functions
// (DensityRatio.ValueTest): fqe's, long-run.
func (o Options) valueTest() *FQE {
	return &FQE{Value: o.longRun().valueLearner(), Target: o.valueTarget(), Estimand: LongRun, SelectSeed: o.Seed, Degree: o.ValueDegree, Network: o.valueNetwork(), Choices: o.ValueChoices}
}

// valueLearner is the value learner Options.ValueModel names for the
// estimand, nil for the data's choice.
func (o Options) valueLearner() value.Learner {
	finite := o.Estimand.OrDefault() == Horizon
	switch o.ValueModel {
	case "tabular":
		return value.Tabular{Finite: finite}
	case "linear":
		return value.Linear{Finite: finite}
	case "neural":
		n := o.ValueNeural
		n.Seed = o.Seed
		return n
	}
	return nil
}

// valueNetwork is the network the value model chosen from the data
// escalates to (FQE.Network): ValueNeural seeded by Seed, nil with
// ValuePolynomialOnly.
func (o Options) valueNetwork() *value.Neural {
	if o.ValuePolynomialOnly {
		return nil
	}
	n := o.ValueNeural
	n.Seed = o.Seed
	return &n
}

// longRun returns o under the long-run estimand: the options of the
// stationary value model that bch-neural's value test and the kernel
// Bellman interval fit, whatever the rows' estimand.
func (o Options) longRun() Options {
	o.Estimand = LongRun
	return o
}

// ratioLearner is the ratio learner Options.RatioModel names, nil for the
// data's choice.
func (o Options) ratioLearner() ratio.Learner {
	switch o.RatioModel {
	case "tabular":
		return o.Tabular
	case "kernel":
		return o.Kernel
	case "neural":
		return o.neuralRatio()
	case "marginal":
		return ratio.Marginal{}
	}
	return nil
}

// minimaxNeural returns the settings of the neural minimax learners, seeded
// by Seed.
func (o Options) minimaxNeural() value.MinimaxNeural {
	n := o.Minimax
	n.Seed = o.Seed
	return n
}

// neuralRatio is bch-neural's learner: the mean of Restarts networks
// trained with the settings of Neural and seeds derived from Seed.
func (o Options) neuralRatio() ratio.Learner {
	return ratio.Ensemble{Learner: o.Neural, Restarts: o.Restarts, Seed: o.Seed}
}

// ValueModels and RatioModels are the names Options.ValueModel and
// Options.RatioModel accept.
var (
	ValueModels = []string{"tabular", "linear", "neural"}
	RatioModels = []string{"tabular", "kernel", "neural", "marginal"}
)

// Entry describes one estimator of the registry.
type Entry struct {
	// Name is the estimator's name (Estimator.Name), a contract of the
	// command line and of every output.
	Name string
	// Label is a legend entry readable without the paper.
	Label string
	// Needs is what it needs beyond the logged steps.
	Needs Needs
	// Unit is what its weights weigh, for the diagnostics.
	Unit Unit
	// Slow marks estimators whose refit on every bootstrap resample costs
	// seconds on large logs (a network's training, a kernel fit with its
	// cross-validated ridge); callers give them fewer resamples.
	Slow bool
	// SlowOnRealStates marks estimators that are Slow on real-valued
	// states only (dr, whose ratio there is a kernel fit; fqe, whose
	// linear value model there has up to hundreds of features: 0.9 s a
	// refit of degree 6 on 150,000 Pendulum steps, 186 s for 200
	// resamples; on discrete states their refits take milliseconds).
	// Use SlowOn.
	SlowOnRealStates bool
	// Markov marks the estimators that assume the logged states are
	// Markov (a value function or a model of the dynamics, a ratio of
	// state distributions); the importance-sampling family and naive do
	// not (MarkovTest says when a log's states are not).
	Markov bool
	// Targets is the estimand the estimator always targets (Horizon for
	// naive, the importance-sampling family and mis; LongRun for the
	// density ratios and the minimax learners), "" for those that follow
	// Options.Estimand (model-based, fqe, dr). Use Estimand.
	Targets Estimand
	// Reads says what kind of number it gives, for the comparisons of
	// rows (compare.go): the target's value weighed from the logs (the
	// zero value), the behavior's own value (naive), a value model's
	// (fqe), a value model's corrected by a ratio (dr), or a q fitted by
	// a minimax loss (mql).
	Reads Reading
	// New builds the estimator from options.
	New func(o Options) Estimator
	// Bound, if not nil, builds the confidence bound that goes with the
	// estimator's rows (ihope estimate --bounds), on the estimand its
	// Bounder states: HCOPE with the trajectory-wise IS rows (both weigh
	// whole episodes), the kernel Bellman interval with the tabular value
	// models' (model-based, fqe).
	Bound func(o Options, s BoundSettings) Bounder
}

// hcopeBound and kernelBellmanBound are the registry's Entry.Bound.
func hcopeBound(_ Options, s BoundSettings) Bounder {
	return HCOPE{RewardLow: s.RewardLow, RewardHigh: s.RewardHigh, Alpha: s.Alpha, Seed: s.Seed}
}

func kernelBellmanBound(o Options, s BoundSettings) Bounder {
	lin, _ := o.longRun().valueLearner().(value.Linear) // the interval is on the long-run value
	return KernelBellman{RewardLow: s.RewardLow, RewardHigh: s.RewardHigh, Alpha: s.Alpha, Calibration: s.Calibration,
		Seed: s.Seed, Target: o.Target, Linear: lin, ValueTarget: o.valueTarget()}
}

// Estimand returns the estimand e's estimates target under o: its fixed
// one, or the one o asks for. A row whose estimator failed carries it
// too, so that every row of an output says what it is about.
func (e Entry) Estimand(o Options) Estimand {
	if e.Targets != "" {
		return e.Targets
	}
	return o.Estimand.OrDefault()
}

// SlowOn reports whether e's refit is slow on d (Slow, or
// SlowOnRealStates and d's states are real-valued).
func (e Entry) SlowOn(d *dataset.Dataset) bool {
	return e.Slow || e.SlowOnRealStates && !d.Discrete()
}

// registry lists every estimator in the order of ihope's tables.
var registry = []Entry{
	{Name: "naive", Targets: Horizon, Label: "naive (mean logged reward)", Reads: ReadsBehavior,
		New: func(Options) Estimator { return &Naive{} }},
	{Name: "is-trajectory", Targets: Horizon, Label: "trajectory-wise IS", Needs: NeedsBehavior, Unit: UnitEpisode,
		New: func(Options) Estimator { return &TrajectoryIS{} }, Bound: hcopeBound},
	{Name: "wis-trajectory", Targets: Horizon, Label: "trajectory-wise WIS", Needs: NeedsBehavior, Unit: UnitEpisode,
		New: func(Options) Estimator { return &TrajectoryWIS{} }, Bound: hcopeBound},
	{Name: "is-stepwise", Targets: Horizon, Label: "step-wise IS", Needs: NeedsBehavior, Unit: UnitStep,
		New: func(Options) Estimator { return &StepwiseIS{} }},
	{Name: "wis-stepwise", Targets: Horizon, Label: "step-wise WIS", Needs: NeedsBehavior, Unit: UnitStep,
		New: func(Options) Estimator { return &StepwiseWIS{} }},
	{Name: "model-based", Markov: true, Label: "model-based (fitted MDP)", Needs: NeedsDiscreteStates | NeedsTargetPolicy, Reads: ReadsValueModel,
		New: func(o Options) Estimator { return &ModelBased{Target: o.Target, Estimand: o.Estimand} }, Bound: kernelBellmanBound},
	{Name: "fqe", Markov: true, Label: "fitted Q evaluation", SlowOnRealStates: true, Needs: NeedsTargetDist, Reads: ReadsValueModel,
		New: func(o Options) Estimator {
			return FQE{Value: o.valueLearner(), Target: o.valueTarget(), Estimand: o.Estimand, Reservoir: o.Reservoir, SampleSeed: o.Seed, SelectSeed: o.Seed, Degree: o.ValueDegree, Network: o.valueNetwork(), Choices: o.ValueChoices}
		}, Bound: kernelBellmanBound},
	{Name: "mis", Markov: true, Targets: Horizon, Label: "marginalized IS (time-indexed ratios)", Needs: NeedsDiscreteStates | NeedsBehavior, Unit: UnitStep,
		New: func(o Options) Estimator { return MIS{} }},
	{Name: "bch-tabular", Markov: true, Targets: LongRun, Label: "density ratio, tabular (paper)", Needs: NeedsDiscreteStates | NeedsBehavior, Unit: UnitStep,
		New: func(o Options) Estimator { return DensityRatio{Learner: o.Tabular} }},
	{Name: "bch-kernel", Markov: true, Targets: LongRun, Label: "density ratio, kernel (closed form)", Needs: NeedsRealStates | NeedsBehavior, Unit: UnitStep, Slow: true,
		New: func(o Options) Estimator { return DensityRatio{Learner: o.Kernel, ValueTest: o.valueTest()} }},
	{Name: "bch-neural", Markov: true, Targets: LongRun, Label: "density ratio, neural (paper)", Needs: NeedsRealStates | NeedsBehavior, Unit: UnitStep, Slow: true,
		New: func(o Options) Estimator {
			return DensityRatio{Learner: o.neuralRatio(), Reservoir: o.Reservoir, SampleSeed: o.Seed, ValueTest: o.valueTest()}
		}},
	{Name: "dr", Markov: true, Label: "doubly robust (ratio + value model)", SlowOnRealStates: true, Needs: NeedsTargetDist | NeedsBehavior, Reads: ReadsCorrectedModel,
		New: func(o Options) Estimator {
			return DR{Ratio: o.ratioLearner(), Kernel: o.Kernel, Value: o.valueLearner(), Target: o.valueTarget(),
				Estimand: o.Estimand, Folds: o.Folds, SelectSeed: o.Seed, Degree: o.ValueDegree, Network: o.valueNetwork(), Choices: o.ValueChoices}
		}},
	{Name: "mwl", Markov: true, Targets: LongRun, Label: "minimax weight learning (state-action ratio)", SlowOnRealStates: true, Needs: NeedsTargetDist, Unit: UnitStep,
		New: func(o Options) Estimator {
			return PairRatio{Learner: ratio.MWL{Neural: o.RatioModel == "neural", Network: o.minimaxNeural()},
				Target: o.valueTarget(), Normalise: true, Reservoir: o.Reservoir, SampleSeed: o.Seed, RealStates: o.RealStates}
		}},
	{Name: "mql", Markov: true, Targets: LongRun, Label: "minimax Q-learning", SlowOnRealStates: true, Needs: NeedsTargetDist, Reads: ReadsMinimaxModel,
		New: func(o Options) Estimator {
			return MinimaxQ{Value: value.MQL{Neural: o.ValueModel == "neural", Network: o.minimaxNeural()}, Target: o.valueTarget(),
				Reservoir: o.Reservoir, SampleSeed: o.Seed, RealStates: o.RealStates}
		}},
	{Name: "dualdice", Markov: true, Targets: LongRun, Label: "DualDICE (GenDICE's normalisation at gamma = 1)", SlowOnRealStates: true, Needs: NeedsTargetDist | NeedsDiscreteActions, Unit: UnitStep,
		New: func(o Options) Estimator {
			return PairRatio{Learner: ratio.DualDICE{Neural: o.RatioModel == "neural", Network: o.minimaxNeural()}, Target: o.valueTarget(),
				Reservoir: o.Reservoir, SampleSeed: o.Seed, RealStates: o.RealStates}
		}},
	{Name: "on-policy", Targets: Horizon, Label: "on-policy oracle (target rollouts)", Needs: NeedsSimulator,
		New: func(o Options) Estimator {
			return &OnPolicy{Sim: o.Sim, Seed: o.OracleSeed}
		}},
}

// Registry returns every estimator's entry, in the order of ihope's
// tables. The slice is a copy.
func Registry() []Entry { return append([]Entry(nil), registry...) }

// Names returns every estimator's name, in registry order.
func Names() []string {
	out := make([]string, len(registry))
	for i, e := range registry {
		out[i] = e.Name
	}
	return out
}

// Lookup returns the entry of the named estimator.
func Lookup(name string) (Entry, bool) {
	for _, e := range registry {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// New builds the named estimators from options, in the order given; an
// unknown name is an error that lists the known ones.
func New(names []string, o Options) ([]Estimator, error) {
	out := make([]Estimator, len(names))
	for i, name := range names {
		e, ok := Lookup(name)
		if !ok {
			return nil, fmt.Errorf("unknown estimator %q: choose from %s", name, strings.Join(Names(), ", "))
		}
		out[i] = e.New(o)
	}
	return out, nil
}

// Applies returns nil if the estimator can run on d with options o, and
// otherwise why not, in plain words.
func (e Entry) Applies(d *dataset.Dataset, o Options) error {
	switch {
	case e.Needs&NeedsDiscreteStates != 0 && !d.Discrete():
		return fmt.Errorf("%s needs a discrete state column", e.Name)
	case e.Needs&NeedsRealStates != 0 && d.Discrete():
		return fmt.Errorf("%s needs real-valued state columns state_0, state_1, ...", e.Name)
	case e.Needs&NeedsTargetPolicy != 0 && o.Target == nil:
		return fmt.Errorf("%s needs the target's whole action distribution (a tabular target policy)", e.Name)
	case e.Needs&NeedsSimulator != 0 && (o.Sim == nil || o.Sim.Check() != nil):
		return fmt.Errorf("%s needs a simulator of the world and the target policy", e.Name)
	case e.Needs&NeedsTargetDist != 0 && d.ActionDim > 0 && o.TargetContinuous == nil:
		return fmt.Errorf("%s needs the target's action distribution at every next state, which logs of real-valued actions do not carry: give actions drawn from the target at the logged states (ihope estimate --target-draws; Options.TargetContinuous)", e.Name)
	case e.Needs&NeedsTargetDist != 0 && d.ActionDim == 0 && o.Target == nil && !d.HasTargetProbs():
		return fmt.Errorf("%s needs the target's whole action distribution: target_prob_0, target_prob_1, ... columns or a target policy file", e.Name)
	case e.Needs&NeedsDiscreteActions != 0 && d.ActionDim > 0:
		return fmt.Errorf("%s needs discrete actions (the target's whole distribution at every next state)", e.Name)
	case e.Needs&NeedsBehavior != 0 && !d.HasBehavior(): // last: the only reason it does not run
		return ErrNoBehavior
	}
	return nil
}

// LogsOnly reports whether the estimator can run on logs: it needs no
// simulator (what else it needs, Applies checks on the logs at hand).
func (e Entry) LogsOnly() bool { return e.Needs&NeedsSimulator == 0 }

// Applicable returns the names of the registered estimators that apply to
// d with options o, in registry order.
func Applicable(d *dataset.Dataset, o Options) []string {
	var out []string
	for _, e := range registry {
		if e.Applies(d, o) == nil {
			out = append(out, e.Name)
		}
	}
	return out
}
