package ope_test

import (
	"errors"
	"github.com/ihope-ope/ihope/value"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/ring"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// registryNames is the registry's order, the order of ihope's tables.
var registryNames = []string{"naive", "is-trajectory", "wis-trajectory", "is-stepwise", "wis-stepwise", "model-based", "fqe", "mis", "bch-tabular", "bch-kernel", "bch-neural", "dr", "mwl", "mql", "dualdice", "on-policy"}

// ringWorld returns 8 episodes of 12 steps on the 5-state ring (behavior
// P(R) = 0.6, target 0.3), with the options that let every discrete
// estimator run on them.
func ringWorld(t testing.TB) (*dataset.Dataset, ope.Options) {
	t.Helper()
	m, err := ring.New(5)
	if err != nil {
		t.Fatal(err)
	}
	sampler, target := sim.NewSampler(m), ring.Policy(5, 0.3)
	d, err := rollout.Sample(rand.New(rand.NewPCG(21, 0)), sampler, ring.Policy(5, 0.6), target, 8, 12)
	if err != nil {
		t.Fatal(err)
	}
	return d, ope.Options{Target: target, Sim: rollout.Simulator{Env: sampler, Target: target}, OracleSeed: 3}
}

// gaussWorld returns 4 episodes of 30 steps of the 1-D linear-Gaussian
// problem, with the options that let every real-state estimator run on
// them (bch-neural trained briefly).
func gaussWorld(t testing.TB) (*dataset.Dataset, ope.Options) {
	t.Helper()
	p := lineargauss.Problem1D()
	d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(22, 0)), p.System, p.Behavior, p.Target, 4, 30)
	if err != nil {
		t.Fatal(err)
	}
	return d, ope.Options{Sim: rollout.SimulatorContinuous{Env: p.System, Target: p.Target}, TargetContinuous: p.Target, OracleSeed: 3,
		Seed: 5, Neural: ratio.Neural{MaxIter: 20}}
}

func TestRegistryNames(t *testing.T) {
	if got := ope.Names(); !slices.Equal(got, registryNames) {
		t.Errorf("Names() = %q, want %q", got, registryNames)
	}
	reg := ope.Registry()
	if len(reg) != len(registryNames) {
		t.Fatalf("Registry() has %d entries, want %d", len(reg), len(registryNames))
	}
	for i, e := range reg {
		if e.Name != registryNames[i] {
			t.Errorf("entry %d: %q, want %q", i, e.Name, registryNames[i])
		}
		if e.Label == "" || e.New == nil {
			t.Errorf("%s: label %q, New set %v", e.Name, e.Label, e.New != nil)
		}
		got, ok := ope.Lookup(e.Name)
		if !ok || got.Name != e.Name {
			t.Errorf("Lookup(%q) = %q, %v", e.Name, got.Name, ok)
		}
	}
	// Registry returns a copy.
	reg[0].Name = "changed"
	if ope.Registry()[0].Name != "naive" || ope.Names()[0] != "naive" {
		t.Error("changing Registry()'s slice changed the registry")
	}
	if _, ok := ope.Lookup("bch"); ok {
		t.Error(`Lookup("bch") found an entry`)
	}
}

// Every entry builds, from the zero options and from full ones, an
// estimator whose Name is the entry's.
func TestRegistryNew(t *testing.T) {
	_, discreteOpts := ringWorld(t)
	_, realOpts := gaussWorld(t)
	for _, o := range []ope.Options{{}, discreteOpts, realOpts} {
		for _, e := range ope.Registry() {
			est := e.New(o)
			if est == nil {
				t.Errorf("%s: New returned nil", e.Name)
				continue
			}
			if est.Name() != e.Name {
				t.Errorf("entry %s builds an estimator named %q", e.Name, est.Name())
			}
		}
	}
	// ope.New keeps the order given and passes the settings on; Seed
	// overrides Neural.Seed (bch-neural's ensemble derives its networks'
	// seeds from it).
	o := ope.Options{Seed: 7, Neural: ratio.Neural{Seed: 99, MaxIter: 5}, Restarts: 3, Tabular: ratio.Tabular{Ridge: 0.5}}
	ests, err := ope.New([]string{"bch-neural", "naive", "bch-tabular"}, o)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ests {
		names = append(names, e.Name())
	}
	if want := []string{"bch-neural", "naive", "bch-tabular"}; !slices.Equal(names, want) {
		t.Errorf("New built %q, want %q", names, want)
	}
	if e, ok := ests[0].(ope.DensityRatio).Learner.(ratio.Ensemble); !ok || e.Seed != 7 || e.Restarts != 3 {
		t.Errorf("bch-neural's learner: %+v", ests[0])
	} else if n, ok := e.Learner.(ratio.Neural); !ok || n.MaxIter != 5 {
		t.Errorf("bch-neural's network: %+v", e.Learner)
	}
	if l, ok := ests[2].(ope.DensityRatio).Learner.(ratio.Tabular); !ok || l.Ridge != 0.5 {
		t.Errorf("bch-tabular's learner: %+v", ests[2])
	}
	if ests, err := ope.New(nil, ope.Options{}); err != nil || len(ests) != 0 {
		t.Errorf("New(nil) = %v, %v", ests, err)
	}
}

func TestRegistryNewUnknown(t *testing.T) {
	ests, err := ope.New([]string{"naive", "bch-unknown"}, ope.Options{})
	if err == nil {
		t.Fatalf("New with an unknown name built %d estimators", len(ests))
	}
	msg := err.Error()
	if !strings.Contains(msg, `"bch-unknown"`) {
		t.Errorf("error %q does not name the unknown estimator", msg)
	}
	if want := strings.Join(registryNames, ", "); !strings.Contains(msg, want) {
		t.Errorf("error %q does not list the names %q", msg, want)
	}
}

func TestRegistryApplies(t *testing.T) {
	dd, full := ringWorld(t)
	rd, fullReal := gaussWorld(t)
	target := ope.Options{Target: full.Target}
	simOnly := ope.Options{Sim: rollout.Simulator{Env: full.Sim.(rollout.Simulator).Env}} // no target
	cases := []struct {
		name string
		d    *dataset.Dataset
		o    ope.Options
		want string // "" for none
	}{
		{"bch-tabular", dd, ope.Options{}, ""},
		{"bch-tabular", rd, fullReal, "bch-tabular needs a discrete state column"},
		{"bch-neural", rd, ope.Options{}, ""},
		{"bch-neural", dd, full, "bch-neural needs real-valued state columns"},
		{"model-based", dd, target, ""},
		{"model-based", dd, ope.Options{}, "model-based needs the target's whole action distribution"},
		{"model-based", rd, fullReal, "model-based needs a discrete state column"},
		{"on-policy", dd, full, ""},
		{"on-policy", rd, fullReal, ""},
		{"on-policy", dd, ope.Options{}, "on-policy needs a simulator"},
		{"on-policy", dd, target, "on-policy needs a simulator"},
		{"on-policy", dd, simOnly, "on-policy needs a simulator"},
		{"on-policy", rd, ope.Options{Sim: rollout.SimulatorContinuous{Env: fullReal.Sim.(rollout.SimulatorContinuous).Env}}, "on-policy needs a simulator"},
		{"naive", rd, ope.Options{}, ""},
		{"mwl", dd, target, ""},
		{"mwl", dd, ope.Options{}, "mwl needs the target's whole action distribution"},
		// mwl and mql run on real actions with the target's draws
		// (TargetContinuous); dualdice does not.
		{"mql", rd, fullReal, ""},
		{"mwl", rd, fullReal, ""},
		{"mql", rd, ope.Options{}, "mql needs the target's action distribution at every next state"},
		{"dualdice", rd, fullReal, "dualdice needs discrete actions"},
		{"wis-stepwise", dd, ope.Options{}, ""},
	}
	for _, c := range cases {
		e, ok := ope.Lookup(c.name)
		if !ok {
			t.Fatalf("no entry %q", c.name)
		}
		err := e.Applies(c.d, c.o)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s on %s states: %v", c.name, kind(c.d), err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s on %s states: error %v, want one starting %q", c.name, kind(c.d), err, c.want)
		}
	}

	logOnly := []string{"naive", "is-trajectory", "wis-trajectory", "is-stepwise", "wis-stepwise"}
	for _, c := range []struct {
		name string
		d    *dataset.Dataset
		o    ope.Options
		want []string
	}{
		{"discrete, logs only", dd, ope.Options{}, append(slices.Clone(logOnly), "mis", "bch-tabular")},
		{"discrete, target", dd, target, append(slices.Clone(logOnly), "model-based", "fqe", "mis", "bch-tabular", "dr", "mwl", "mql", "dualdice")},
		{"discrete, everything", dd, full, append(slices.Clone(logOnly), "model-based", "fqe", "mis", "bch-tabular", "dr", "mwl", "mql", "dualdice", "on-policy")},
		// mis, like the IS family, gives its horizon value with a note
		// under the long run (the CLI's rows say so).
		{"discrete, long-run", dd, ope.Options{Target: target.Target, Estimand: ope.LongRun}, append(slices.Clone(logOnly), "model-based", "fqe", "mis", "bch-tabular", "dr", "mwl", "mql", "dualdice")},
		{"real, logs only", rd, ope.Options{}, append(slices.Clone(logOnly), "bch-kernel", "bch-neural")},
		{"real, everything", rd, fullReal, append(slices.Clone(logOnly), "fqe", "bch-kernel", "bch-neural", "dr", "mwl", "mql", "on-policy")},
	} {
		if got := ope.Applicable(c.d, c.o); !slices.Equal(got, c.want) {
			t.Errorf("%s: Applicable = %q, want %q", c.name, got, c.want)
		}
	}
}

func kind(d *dataset.Dataset) string {
	if d.Discrete() {
		return "discrete"
	}
	return "real"
}

// Every estimator that applies runs, its weights have one entry per unit
// of its entry (none for UnitNone estimators but the naive average, whose
// equal episode weights are not worth a diagnostic), and its Result.Model
// is what the estimator fitted.
func TestRegistryRunsWhereItApplies(t *testing.T) {
	for _, world := range []func(testing.TB) (*dataset.Dataset, ope.Options){ringWorld, gaussWorld} {
		d, o := world(t)
		for _, e := range ope.Registry() {
			if e.Applies(d, o) != nil {
				continue
			}
			res, err := e.New(o).Estimate(d, 1)
			if err != nil {
				t.Errorf("%s on %s states: %v", e.Name, kind(d), err)
				continue
			}
			want := map[ope.Unit]int{ope.UnitEpisode: d.NumEpisodes(), ope.UnitStep: d.NumSteps()}[e.Unit]
			if e.Unit == ope.UnitNone && res.Weights != nil && e.Name != "naive" {
				t.Errorf("%s: %d weights for unit none", e.Name, len(res.Weights))
			}
			if e.Unit != ope.UnitNone && len(res.Weights) != want {
				t.Errorf("%s on %s states: %d weights, want one per %s (%d)", e.Name, kind(d), len(res.Weights), e.Unit, want)
			}
			switch e.Name {
			case "model-based":
				if m, ok := res.Model.(*ope.SolvedCountModel); !ok || m.CountModel == nil || m.Target == nil {
					t.Errorf("model-based: Result.Model is %T", res.Model)
				}
			case "bch-tabular":
				if _, ok := res.Model.(*ratio.TabularModel); !ok {
					t.Errorf("bch-tabular: Result.Model is %T", res.Model)
				}
			case "bch-neural":
				// The interquartile mean keeps the middle half of the networks.
				if m, ok := res.Model.(*ratio.EnsembleModel); !ok || len(m.Members()) != ratio.DefaultRestarts-2*(ratio.DefaultRestarts/4) {
					t.Errorf("bch-neural: Result.Model is %T", res.Model)
				} else if _, ok := m.Members()[0].(*ratio.NeuralModel); !ok {
					t.Errorf("bch-neural: a member is %T", m.Members()[0])
				}
				if len(res.Restarts) != ratio.DefaultRestarts {
					t.Errorf("bch-neural: restarts %v", res.Restarts)
				}
			case "mwl", "dualdice":
				_, tab := res.Model.(*ratio.PairTabularModel)
				_, krn := res.Model.(*ratio.PairKernelModel)
				if d.Discrete() && !tab || !d.Discrete() && !krn {
					t.Errorf("%s on %s states: Result.Model is %T", e.Name, kind(d), res.Model)
				}
				if res.Estimand != ope.LongRun {
					t.Errorf("%s: estimand %q", e.Name, res.Estimand)
				}
			}
		}
	}
	// The naive average weighs its episodes equally.
	d, _ := ringWorld(t)
	res, err := (&ope.Naive{}).Estimate(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := slices.Repeat([]float64{1. / 8}, 8); !slices.Equal(res.Weights, want) {
		t.Errorf("naive weights %v, want %v", res.Weights, want)
	}
}

// Without behavior probabilities the estimators that weigh by pi/pi0
// (NeedsBehavior) are left out, with ErrNoBehavior as the reason, and
// refuse the log if run anyway; the others apply and give the same
// estimates as on the log with them.
func TestRegistryWithoutBehavior(t *testing.T) {
	for _, world := range []func(testing.TB) (*dataset.Dataset, ope.Options){ringWorld, gaussWorld} {
		d, o := world(t)
		o.Neural.MaxIter, o.ValueNeural.MaxIter = 2, 2
		none := d.Clone()
		none.LogBehavior = nil
		var want []string
		for _, e := range ope.Registry() {
			if e.Applies(d, o) != nil {
				continue
			}
			needs := e.Needs&ope.NeedsBehavior != 0
			if !needs {
				want = append(want, e.Name)
			}
			err := e.Applies(none, o)
			if needs != (err != nil) || needs && (!errors.Is(err, ope.ErrNoBehavior) || err.Error() != "needs behavior probabilities (or --fit-behavior)") {
				t.Errorf("%s on %s states without behavior: Applies = %v", e.Name, kind(d), err)
			}
			got, err := e.New(o).Estimate(none, 1)
			if needs {
				if !errors.Is(err, ope.ErrNoBehavior) {
					t.Errorf("%s on %s states without behavior: error %v", e.Name, kind(d), err)
				}
				continue
			}
			with, err2 := e.New(o).Estimate(d, 1)
			if err != nil || err2 != nil || got.Value != with.Value {
				t.Errorf("%s on %s states: %v (%v) without behavior, %v (%v) with", e.Name, kind(d), got.Value, err, with.Value, err2)
			}
		}
		if got := ope.Applicable(none, o); !slices.Equal(got, want) {
			t.Errorf("%s states without behavior: Applicable = %q, want %q", kind(d), got, want)
		}
	}
}

// Every entry's Estimand is the estimand its estimates carry: fixed for
// most, the one asked for by model-based, fqe and dr.
func TestRegistryEstimand(t *testing.T) {
	dd, discreteOpts := ringWorld(t)
	rd, realOpts := gaussWorld(t)
	ran := map[string]int{}
	for _, w := range []struct {
		d *dataset.Dataset
		o ope.Options
	}{{dd, discreteOpts}, {rd, realOpts}} {
		for _, est := range []ope.Estimand{ope.Horizon, ope.LongRun} {
			o := w.o
			o.Estimand = est
			for _, e := range ope.Registry() {
				if e.Applies(w.d, o) != nil {
					continue
				}
				r, err := e.New(o).Estimate(w.d, 0.9)
				if err != nil {
					t.Errorf("%s, %s: %v", e.Name, est, err)
					continue
				}
				if want := e.Estimand(o); r.Estimand != want {
					t.Errorf("%s asked for %s: result targets %q, Entry.Estimand says %q", e.Name, est, r.Estimand, want)
				}
				ran[e.Name]++
			}
		}
	}
	for _, name := range ope.Names() {
		if ran[name] < 2 {
			t.Errorf("%s ran %d times, want both estimands on one world at least", name, ran[name])
		}
	}
}

// ope.New's fqe, dr and the ratios' value test escalate to a network
// seeded by Options.Seed where no polynomial degree holds q (FQE.Network)
// and share the run's ValueChoices; Options.ValuePolynomialOnly keeps
// them polynomial.
func TestNewValueNetwork(t *testing.T) {
	for _, only := range []bool{false, true} {
		choices := &ope.ValueChoices{}
		es, err := ope.New([]string{"fqe", "dr", "bch-kernel"}, ope.Options{Seed: 7, ValuePolynomialOnly: only, ValueChoices: choices})
		if err != nil {
			t.Fatal(err)
		}
		if es[0].(ope.FQE).Choices != choices || es[1].(ope.DR).Choices != choices || es[2].(ope.DensityRatio).ValueTest.Choices != choices {
			t.Error("fqe, dr and the value test do not share the run's ValueChoices")
		}
		nets := []*value.Neural{es[0].(ope.FQE).Network, es[1].(ope.DR).Network, es[2].(ope.DensityRatio).ValueTest.Network}
		for i, n := range nets {
			switch {
			case only && n != nil:
				t.Errorf("%s: a network with ValuePolynomialOnly", es[i].Name())
			case !only && (n == nil || n.Seed != 7):
				t.Errorf("%s: network %+v, want one seeded 7", es[i].Name(), n)
			}
		}
	}
}
