package ope_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/value"
)

// quitMDP is an episodic MDP worked by hand: states A = 0 and B = 1,
// episodes start in A, action 0 goes on and action 1 quits, which ends
// the episode in a terminal state:
//
//	A, go on: reward 1, to B        A, quit: reward 2, terminal
//	B, go on: reward 0, to A        B, quit: reward 3, terminal
//
// The behavior is uniform; the target goes on in A with probability 3/4
// and in B with 1/4. Logs are cut off after T = 3 steps.
var quitMDP = struct {
	next   [2][2]int // -1: terminal
	reward [2][2]float64
	pi0    [2][2]float64
	pi     [2][2]float64
}{
	next:   [2][2]int{{1, -1}, {0, -1}},
	reward: [2][2]float64{{1, 2}, {0, 3}},
	pi0:    [2][2]float64{{0.5, 0.5}, {0.5, 0.5}},
	pi:     [2][2]float64{{0.75, 0.25}, {0.25, 0.75}},
}

// quitPopulation is the population log of quitMDP: every trajectory of
// at most T = 3 steps under the behavior, repeated 8 x its probability
// times (A quit 4 times, A go B quit 2, A go B go A quit 1, A go B go A
// go 1, the last cut off with next state B). With terminal false the
// same episodes are logged as merely cut off (no next state after a
// quit). Steps carry the target's whole distribution if probs.
func quitPopulation(t *testing.T, terminal, probs bool) *dataset.Dataset {
	return quitLog(t, terminal, probs, 0)
}

// quitLog is quitPopulation, with pad > 0 in COBS's form instead: no
// terminal column, the terminal state an explicit state 2 in which the
// episodes that quit are padded to pad steps (action 0, reward 0, both
// policies' probability 1).
func quitLog(t *testing.T, terminal, probs bool, pad int) *dataset.Dataset {
	t.Helper()
	const T, scale = 3, 8
	var eps []dataset.Episode
	var walk func(steps []dataset.Step, s int, p float64)
	add := func(steps []dataset.Step, p float64) {
		if last := &steps[len(steps)-1]; pad > 0 && !last.HasNext {
			last.HasNext, last.NextState = true, 2
			z := dataset.Step{State: 2, HasNext: true, NextState: 2}
			if probs {
				last.NextTargetProbs = []float64{1, 0}
				z.TargetProbs, z.NextTargetProbs = last.NextTargetProbs, last.NextTargetProbs
			}
			for len(steps) < pad {
				steps = append(steps, z)
			}
		}
		for range int(math.Round(p * scale)) {
			eps = append(eps, dataset.Episode{ID: fmt.Sprint(len(eps)), Steps: append([]dataset.Step(nil), steps...)})
		}
	}
	walk = func(steps []dataset.Step, s int, p float64) {
		if len(steps) == T {
			add(steps, p)
			return
		}
		for a := range 2 {
			next := quitMDP.next[s][a]
			st := dataset.Step{State: s, Action: a, Reward: quitMDP.reward[s][a],
				LogBehavior: math.Log(quitMDP.pi0[s][a]), LogTarget: math.Log(quitMDP.pi[s][a])}
			if probs {
				st.TargetProbs = quitMDP.pi[s][:]
			}
			q := p * quitMDP.pi0[s][a]
			if next < 0 {
				st.Terminal = terminal
				add(append(steps, st), q)
				continue
			}
			st.HasNext, st.NextState = true, next
			if probs {
				st.NextTargetProbs = quitMDP.pi[next][:]
			}
			walk(append(steps, st), next, q)
		}
	}
	walk(nil, 0, 1)
	nS := 2
	if pad > 0 {
		nS = 3
	}
	d, err := dataset.New(nS, 2, eps)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// quitTable is quitMDP as a table with its terminal state explicit: state
// 2 absorbs with reward 0 (sim.Episodic), and quitTarget its target, which
// takes action 0 there.
func quitTable(t *testing.T) (*sim.Table, *policy.Tabular) {
	t.Helper()
	out := make([][][]mdp.Outcome, 3)
	for s := range 2 {
		out[s] = make([][]mdp.Outcome, 2)
		for a := range 2 {
			next := quitMDP.next[s][a]
			if next < 0 {
				next = 2
			}
			out[s][a] = []mdp.Outcome{{Next: next, Prob: 1, Reward: quitMDP.reward[s][a]}}
		}
	}
	out[2] = [][]mdp.Outcome{{{Next: 2, Prob: 1}}, {{Next: 2, Prob: 1}}}
	m, err := sim.NewTable(out, []float64{1, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	pi, err := policy.NewTabular([][]float64{quitMDP.pi[0][:], quitMDP.pi[1][:], {1, 0}})
	if err != nil {
		t.Fatal(err)
	}
	return m, pi
}

// The hand values of quitMDP's target. Over the horizon T = 3 its
// trajectories are A quit (1/4, rewards 2), A go B quit (9/16; 1, 3),
// A go B go A quit (3/64; 1, 0, 2) and A go B go A go (9/64; 1, 0, 1):
//
//	gamma = 1:   E[sum_t r_t] = 2/4 + 4 (9/16) + 3 (3/64) + 2 (9/64) = 203/64,
//	             normalised by T = 3:                              203/192;
//	gamma = 1/2: E[sum_t gamma^t r_t] = 551/256, normalised by 7/4: 551/448.
//
// Long run, gamma = 1/2: V_A = 1/4 (2) + 3/4 (1 + V_B/2) and
// V_B = 3/4 (3) + 1/4 (V_A/2) give V_A = 134/61 and (1 - gamma) V_A = 67/61.
const (
	quitHorizon1    = 203.0 / 192
	quitHorizonHalf = 551.0 / 448
	quitLongRunHalf = 67.0 / 61
	// The same episodes cut off instead: the IS family then normalises
	// each episode over its own length (Horizon's gamma^i_t), so a quit
	// after one step counts as a horizon of one step: at gamma = 1,
	// 2/4 + 2 (9/16) + 1 (3/64) + (2/3)(9/64) = 113/64.
	quitCutOff1 = 113.0 / 64
)

// Terminal handling: on quitMDP's population log every estimator that
// applies returns the hand value of its estimand, exactly; exact's value
// on the table with the absorbing state made explicit agrees; and the same
// episodes with terminal dropped (cut off) give other values, the
// trajectory-wise IS family the documented 113/64.
func TestTerminalByHand(t *testing.T) {
	m, piZ := quitTable(t)
	if err := sim.CheckAbsorbing(m, func(s int) bool { return s == 2 }); err != nil {
		t.Fatal(err)
	}
	pi, err := policy.NewTabular([][]float64{quitMDP.pi[0][:], quitMDP.pi[1][:]})
	if err != nil {
		t.Fatal(err)
	}
	exactOf := func(est ope.Estimand, gamma float64) float64 {
		if est == ope.Horizon {
			return mdp.Value(m, piZ, m.Initial(), 3, gamma)
		}
		v, err := mdp.LongRun(m, piZ, gamma)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	horizonEsts := []string{"naive", "is-trajectory", "wis-trajectory", "is-stepwise", "wis-stepwise",
		"model-based", "fqe", "mis", "dr"}
	longRunEsts := []string{"model-based", "fqe", "dr", "mwl", "mql", "dualdice"}
	cases := []struct {
		est   ope.Estimand
		gamma float64
		hand  float64
		names []string
	}{
		{ope.Horizon, 1, quitHorizon1, horizonEsts},
		{ope.Horizon, 0.5, quitHorizonHalf, horizonEsts},
		{ope.LongRun, 0.5, quitLongRunHalf, longRunEsts},
	}
	for _, probs := range []bool{false, true} {
		d := quitPopulation(t, true, probs)
		if d.NumEpisodes() != 8 || d.NumTerminal() != 7 {
			t.Fatalf("population log: %d episodes, %d terminal; want 8, 7", d.NumEpisodes(), d.NumTerminal())
		}
		cut := quitPopulation(t, false, probs)
		for _, c := range cases {
			if got := exactOf(c.est, c.gamma); math.Abs(got-c.hand) > 1e-12 {
				t.Errorf("exact %s gamma %g: %.15g, hand %.15g", c.est, c.gamma, got, c.hand)
			}
			opts := ope.Options{Estimand: c.est}
			if !probs {
				opts.Target = pi // the target from a policy, else from the logs' columns
			}
			for _, name := range c.names {
				if name == "model-based" && probs {
					continue // needs Options.Target
				}
				e, _ := ope.Lookup(name)
				if err := e.Applies(d, opts); err != nil {
					t.Errorf("%s does not apply: %v", name, err)
					continue
				}
				est, _ := ope.New([]string{name}, opts)
				want := c.hand
				if name == "naive" {
					want = naiveQuit(c.gamma)
				}
				res, err := est[0].Estimate(d, c.gamma)
				if err != nil {
					t.Errorf("probs %v, %s gamma %g, %s: %v", probs, c.est, c.gamma, name, err)
					continue
				}
				if math.Abs(res.Value-want) > 1e-9 {
					t.Errorf("probs %v, %s gamma %g, %s: %.12g, hand value %.12g", probs, c.est, c.gamma, name, res.Value, want)
				}
				if res.Weights != nil && len(res.Weights) != d.NumSteps() && len(res.Weights) != d.NumEpisodes() {
					t.Errorf("%s: %d weights for %d steps", name, len(res.Weights), d.NumSteps())
				}
				// Cut off instead: another value.
				resCut, err := est[0].Estimate(cut, c.gamma)
				t.Logf("probs %v, %s gamma %g, %s: %.6g, cut off %.6g (%v)", probs, c.est, c.gamma, name, res.Value, resCut.Value, err)
				if err != nil {
					continue // refusing the cut log is a different result too
				}
				if math.Abs(resCut.Value-want) < 1e-3 {
					t.Errorf("probs %v, %s gamma %g, %s: cut off %.6g, the terminal log's value", probs, c.est, c.gamma, name, resCut.Value)
				}
				if c.est == ope.Horizon && c.gamma == 1 && (name == "is-trajectory" || name == "wis-trajectory") &&
					math.Abs(resCut.Value-quitCutOff1) > 1e-9 {
					t.Errorf("%s cut off: %.12g, want 113/64 = %.12g", name, resCut.Value, quitCutOff1)
				}
			}
		}
	}
}

// bch-tabular reads a log as draws from the behavior's stationary
// (discounted) visitation, which a log of 3-step episodes is not, with or
// without terminal states (on the expectation log of tinyMDP, T = 3, it
// gives 0.8595 against the exact 0.8464). On quitMDP's population log it
// gives 1.0920 against 67/61 = 1.09836: a terminal episode's last padded
// step stands for the absorbing state's whole discounted tail
// (Dataset.Tail), in the estimate and in the ratio's normalisation; what
// is left is the 3-step episodes cut off. COBS's form of the same log, z an explicit state in
// which the episodes are padded to T + 1 = 4 steps with nothing saying
// the chain stays there, gives 1.14788, which the terminal log gave too
// before the tail was counted.
func TestTerminalBCHAsCOBS(t *testing.T) {
	const withTail, cobsForm = 1.09196032889, 1.1478769798
	for _, probs := range []bool{false, true} {
		d := quitPopulation(t, true, probs)
		cobs := quitLog(t, false, probs, 4)
		est, _ := ope.New([]string{"bch-tabular"}, ope.Options{})
		got, err := est[0].Estimate(d, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		want, err := est[0].Estimate(cobs, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Value-withTail) > 1e-9 || math.Abs(want.Value-cobsForm) > 1e-9 {
			t.Errorf("bch-tabular: %.12g on the terminal log (want %.12g), %.12g in COBS's form (want %.12g); hand value %.6g",
				got.Value, withTail, want.Value, cobsForm, quitLongRunHalf)
		}
	}
}

// Every episode terminal, after one or two steps: from A action 0 pays 1
// and ends, action 1 pays 0 and leads to B; from B action 0 pays 2,
// action 1 pays -1, both end. Behavior uniform, target 1/4, 3/4 in A and
// 3/4, 1/4 in B; gamma = 0.9: V(B) = 1.25, V(A) = 1/4 + 3/4 0.9 1.25, the
// long-run value (1 - gamma) V(A) = 0.109375. On the population log
// bch-tabular gives it exactly once z's tail weighs in its normalisation
// too (0.2301 with the tail in the estimate only, 0.7677 with neither).
func TestTerminalTwoSteps(t *testing.T) {
	const gamma = 0.9
	step := func(s, a int, r float64, next int, pi float64) dataset.Step {
		st := dataset.Step{State: s, Action: a, Reward: r, LogBehavior: math.Log(0.5), LogTarget: math.Log(pi),
			TargetProbs: map[int][]float64{0: {0.25, 0.75}, 1: {0.75, 0.25}}[s]}
		if next < 0 {
			st.Terminal = true
		} else {
			st.HasNext, st.NextState = true, next
			st.NextTargetProbs = []float64{0.75, 0.25}
		}
		return st
	}
	var eps []dataset.Episode
	add := func(n int, steps ...dataset.Step) {
		for range n {
			eps = append(eps, dataset.Episode{ID: fmt.Sprint(len(eps)), Steps: steps})
		}
	}
	add(2, step(0, 0, 1, -1, 0.25))
	add(1, step(0, 1, 0, 1, 0.75), step(1, 0, 2, -1, 0.75))
	add(1, step(0, 1, 0, 1, 0.75), step(1, 1, -1, -1, 0.25))
	d, err := dataset.New(2, 2, eps)
	if err != nil {
		t.Fatal(err)
	}
	checkLongRun(t, d, gamma, (1-gamma)*(0.25+0.75*gamma*1.25), "bch-tabular", "mwl", "fqe")
}

// checkLongRun checks that each estimator names gives truth, the long-run
// value of d at gamma, to 1e-9.
func checkLongRun(t *testing.T, d *dataset.Dataset, gamma, truth float64, names ...string) {
	t.Helper()
	for _, name := range names {
		est, err := ope.New([]string{name}, ope.Options{Estimand: ope.LongRun})
		if err != nil {
			t.Fatal(err)
		}
		res, err := est[0].Estimate(d, gamma)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if math.Abs(res.Value-truth) > 1e-9 {
			t.Errorf("%s: %.12g, want %.12g", name, res.Value, truth)
		}
	}
}

// Every episode one terminal step (one state, action 0 pays 2 and action
// 1 pays -1, both ending the episode; uniform behavior, target 3/4, 1/4):
// the discounted visitation is the start state at weight 1 - gamma and z
// at gamma, so the long-run value is (1 - gamma)(3/4 2 - 1/4) = 0.125 at
// gamma = 0.9. bch-tabular, dr and the state-action ratios give it
// exactly on the population log; bch-tabular gave 0.658 (1.25/1.9) when
// z's padded step weighed gamma^1 only.
func TestTerminalOneStep(t *testing.T) {
	const gamma = 0.9
	var eps []dataset.Episode
	for k := range 8 {
		a := k / 2 % 2 // both actions in each of dr's folds (episode i in fold i mod 2)
		{
			eps = append(eps, dataset.Episode{ID: fmt.Sprint(len(eps)), Steps: []dataset.Step{{
				State: 0, Action: a, Reward: []float64{2, -1}[a], Terminal: true,
				LogBehavior: math.Log(0.5), LogTarget: math.Log([]float64{0.75, 0.25}[a]),
				TargetProbs: []float64{0.75, 0.25}}}})
		}
	}
	d, err := dataset.New(1, 2, eps)
	if err != nil {
		t.Fatal(err)
	}
	checkLongRun(t, d, gamma, (1-gamma)*(0.75*2-0.25), "bch-tabular", "dr", "mwl", "fqe")
}

// naiveQuit is the behavior's own horizon value, what naive estimates:
// under the uniform behavior the trajectories are A quit (1/2; 2),
// A go B quit (1/4; 1, 3), A go B go A quit (1/8; 1, 0, 2) and A go B go
// A go (1/8; 1, 0, 1), normalised by sum_{t<3} gamma^t.
func naiveQuit(gamma float64) float64 {
	g2 := gamma * gamma
	return (0.5*2 + 0.25*(1+3*gamma) + 0.125*(1+2*g2) + 0.125*(1+g2)) / (1 + gamma + g2)
}

// The long-run average reward (gamma = 1) of an absorbing chain is 0 for
// every policy: the estimators of the long run refuse it on a log with
// terminal episodes, with ErrAbsorbingAverage, and the default estimand
// of such a log is the horizon value even for one episode.
func TestTerminalLongRunAverageRefused(t *testing.T) {
	d := quitPopulation(t, true, true)
	for _, name := range []string{"fqe", "bch-tabular", "dr", "mwl", "mql", "dualdice"} {
		est, _ := ope.New([]string{name}, ope.Options{Estimand: ope.LongRun})
		_, err := est[0].Estimate(d, 1)
		if !errors.Is(err, ope.ErrAbsorbingAverage) {
			t.Errorf("%s: error %v, want ErrAbsorbingAverage", name, err)
		}
	}
	last := d.NumEpisodes() - 1
	if !d.IsTerminal(last) {
		t.Fatalf("episode %d of the population log is not terminal", last)
	}
	if got := ope.DefaultEstimand(d.Subset([]int{last})); got != ope.Horizon {
		t.Errorf("default estimand of one terminal episode: %s, want horizon", got)
	}
	// One terminal episode is not a continuing log: the IS family's
	// refusal says so and names what estimates it.
	wis, _ := ope.New([]string{"wis-stepwise"}, ope.Options{})
	if _, err := wis[0].Estimate(d.Subset([]int{last}), 1); err == nil || !strings.Contains(err.Error(), "ends in a terminal state: use fqe") {
		t.Errorf("wis-stepwise on one terminal episode: %v", err)
	}
}

// quitRealStates is quitMDP's terminal population log with its states as
// one-hot vectors.
func quitRealStates(t *testing.T) *dataset.Dataset {
	t.Helper()
	d := quitPopulation(t, true, true)
	var eps []dataset.Episode
	for e := range d.NumEpisodes() {
		ep := d.Episode(e)
		for k := range ep.Steps {
			s := &ep.Steps[k]
			s.Obs = []float64{float64(1 - s.State), float64(s.State)}
			if s.HasNext {
				s.NextObs = []float64{float64(1 - s.NextState), float64(s.NextState)}
			}
			s.State, s.NextState = -1, -1
		}
		eps = append(eps, ep)
	}
	r, err := dataset.New(0, 2, eps)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The real-state learners see the absorbing state through its indicator
// (dataset.Dataset.Absorbing): quitMDP's population log with the states
// as one-hot vectors gives the hand values again, to 1e-5 (the linear
// and kernel fits' small ridge penalties; linear fqe's features see the
// indicator) and to 1e-3 for mql's kernel fit.
func TestTerminalRealStates(t *testing.T) {
	r := quitRealStates(t)
	for _, c := range []struct {
		est   ope.Estimand
		gamma float64
		hand  float64
		tol   map[string]float64
	}{
		{ope.Horizon, 1, quitHorizon1, map[string]float64{"wis-stepwise": 1e-9, "fqe": 1e-5, "dr": 1e-5}},
		{ope.LongRun, 0.5, quitLongRunHalf, map[string]float64{"fqe": 1e-5, "dr": 1e-5, "mwl": 1e-5, "dualdice": 1e-5, "mql": 1e-3}},
	} {
		for name, tol := range c.tol {
			est, err := ope.New([]string{name}, ope.Options{Estimand: c.est})
			if err != nil {
				t.Fatal(err)
			}
			res, err := est[0].Estimate(r, c.gamma)
			if err != nil {
				t.Errorf("%s %s: %v", c.est, name, err)
				continue
			}
			if math.Abs(res.Value-c.hand) > tol {
				t.Errorf("%s gamma %g, %s on real states: %.9g, hand value %.9g", c.est, c.gamma, name, res.Value, c.hand)
			}
		}
	}
}

// Every registered estimator that runs on quitMDP's log is checked above
// (bch-tabular against COBS's form), so an estimator added later is too;
// and the bootstrap's resamples of every one of them, fast paths included,
// are Estimate on the rebuilt resampled logs.
func TestTerminalCoverage(t *testing.T) {
	d := quitPopulation(t, true, true)
	pi, err := policy.NewTabular([][]float64{quitMDP.pi[0][:], quitMDP.pi[1][:]})
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{"naive": true, "is-trajectory": true, "wis-trajectory": true, "is-stepwise": true,
		"wis-stepwise": true, "model-based": true, "fqe": true, "mis": true, "dr": true, "mwl": true, "mql": true,
		"dualdice": true, "bch-tabular": true}
	var ests []ope.Estimator
	for _, est := range []ope.Estimand{ope.Horizon, ope.LongRun} {
		opts := ope.Options{Target: pi, Estimand: est}
		for _, e := range ope.Registry() {
			if e.Applies(d, opts) != nil {
				continue
			}
			if !checked[e.Name] {
				t.Errorf("%s applies to an episodic log but TestTerminalByHand does not check it", e.Name)
			}
			ests = append(ests, e.New(opts))
		}
	}
	bootstrapMatchesRefits(t, "quit", d, 0.5, ests, false)
}

// bch-neural's value test reads fqe's value on the padded log its ratio
// is fitted on (the absorbing state's indicator included): on quitMDP's
// terminal log with one-hot states the row names the value model it was
// tested against and gives the hand value to 0.01.
func TestTerminalNeuralValueTest(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a network")
	}
	r := quitRealStates(t)
	est, err := ope.New([]string{"bch-neural"}, ope.Options{Estimand: ope.LongRun, Restarts: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := est[0].Estimate(r, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if res.Learner != "neural/linear" {
		t.Errorf("learner %q, want neural/linear: the value test did not run on the padded log", res.Learner)
	}
	if math.Abs(res.Value-quitLongRunHalf) > 0.01 {
		t.Errorf("bch-neural %.4f, hand value %.4f", res.Value, quitLongRunHalf)
	}
}

// The same on real actions, with a target given as a policy over action
// vectors (the experiments' form): fqe draws the target's actions at the
// padded log's states through the absorbing wrapper. Before it did,
// the policy's network read a state one component too long and panicked.
func TestTerminalNeuralValueTestRealActions(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a network")
	}
	rng := rand.New(rand.NewPCG(4, 2))
	net := func(seed uint64) *policy.TruncGaussian {
		m, err := policy.NewMLP(rand.New(rand.NewPCG(seed, 0)), 1, 4, 1)
		if err != nil {
			t.Fatal(err)
		}
		p, err := policy.NewTruncGaussian(m, 0.5, []float64{-2}, []float64{2})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	target, behavior := net(1), net(2)
	var b dataset.Builder
	b.Init(0, 0, 1, 1)
	for e := range 30 {
		x := rng.NormFloat64()
		for k := range 20 {
			u := behavior.Sample(rng, []float64{x})
			next := 0.8*x + 0.3*u[0] + 0.2*rng.NormFloat64()
			end := math.Abs(next) > 1.5 || k == 19
			b.Add(dataset.Step{Obs: []float64{x}, ActionVec: u, Reward: -x * x, HasNext: true, NextObs: []float64{next},
				LogBehavior: behavior.LogProb([]float64{x}, u), LogTarget: target.LogProb([]float64{x}, u),
				Terminal: math.Abs(next) > 1.5})
			if end {
				break
			}
			x = next
		}
		b.EndEpisode(fmt.Sprint(e))
	}
	d, err := b.Dataset()
	if err != nil {
		t.Fatal(err)
	}
	if d.NumTerminal() == 0 {
		t.Fatal("no terminal episode")
	}
	res, err := ope.DensityRatio{Learner: ratio.Ensemble{Learner: ratio.Neural{}, Restarts: 1, Seed: 1},
		ValueTest: &ope.FQE{Target: value.Target{Continuous: target, Seed: 1}}}.Estimate(d, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if res.Learner != "neural/linear" {
		t.Errorf("learner %q, want neural/linear", res.Learner)
	}
}
