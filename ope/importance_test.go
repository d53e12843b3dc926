package ope

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/ring"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// loggedStep returns a logged step with behavior probability pb, target
// probability pt and reward r (state and action 0).
func loggedStep(pb, pt, r float64) dataset.Step {
	return dataset.Step{Reward: r, HasNext: true, LogBehavior: math.Log(pb), LogTarget: math.Log(pt)}
}

// loggedData returns a discrete dataset made of the given step lists. It
// panics if they do not make a valid dataset; tests of invalid data
// corrupt a column of its result.
func loggedData(eps ...[]dataset.Step) *dataset.Dataset {
	var episodes []dataset.Episode
	for i, s := range eps {
		episodes = append(episodes, dataset.Episode{ID: string(rune('a' + i)), Steps: s})
	}
	d, err := dataset.New(1, 1, episodes)
	if err != nil {
		panic(err)
	}
	return d
}

// The hand-made datasets. beta = pt/pb is 2 for (0.25, 0.5), 1/2 for
// (0.5, 0.25) and 1 for (0.5, 0.5).
var (
	// handUnequal has episodes of lengths 2, 3, 1:
	//	ep 1: beta (2, 1/2),  r (1, 0)
	//	ep 2: beta (1/2, 2, 1), r (0, 1, 1)
	//	ep 3: beta (2),       r (1)
	handUnequal = loggedData(
		[]dataset.Step{loggedStep(0.25, 0.5, 1), loggedStep(0.5, 0.25, 0)},
		[]dataset.Step{loggedStep(0.5, 0.25, 0), loggedStep(0.25, 0.5, 1), loggedStep(0.5, 0.5, 1)},
		[]dataset.Step{loggedStep(0.25, 0.5, 1)},
	)
	// handEqual has two episodes of length 2:
	//	ep 1: beta (2, 1/2), r (1, 0)
	//	ep 2: beta (1/2, 2), r (0, 1)
	handEqual = loggedData(
		[]dataset.Step{loggedStep(0.25, 0.5, 1), loggedStep(0.5, 0.25, 0)},
		[]dataset.Step{loggedStep(0.5, 0.25, 0), loggedStep(0.25, 0.5, 1)},
	)
	// handZero has a target probability 0 at ep 1's first step:
	//	ep 1: beta (0, 1), r (1, 1)
	//	ep 2: beta (2, 1), r (0, 1)
	handZero = loggedData(
		[]dataset.Step{loggedStep(0.5, 0, 1), loggedStep(0.5, 0.5, 1)},
		[]dataset.Step{loggedStep(0.5, 1, 0), loggedStep(0.5, 0.5, 1)},
	)
)

func baselines() []Estimator {
	return []Estimator{&Naive{}, &TrajectoryIS{}, &TrajectoryWIS{}, &StepwiseIS{}, &StepwiseWIS{}}
}

func TestNames(t *testing.T) {
	want := []string{"naive", "is-trajectory", "wis-trajectory", "is-stepwise", "wis-stepwise"}
	for i, e := range baselines() {
		if e.Name() != want[i] {
			t.Errorf("estimator %d: name %q, want %q", i, e.Name(), want[i])
		}
	}
}

func TestHandValues(t *testing.T) {
	cases := []struct {
		name  string
		d     *dataset.Dataset
		gamma float64
		// naive, is-trajectory, wis-trajectory, is-stepwise, wis-stepwise
		want [5]float64
	}{
		// gamma = 1: gamma_t = 1/T_i, so gamma^1 = (1/2, 1/2),
		// gamma^2 = (1/3, 1/3, 1/3), gamma^3 = (1).
		//  V = (1/2, 2/3, 1); w_{0:T} = (1, 1, 2).
		//  naive = (1/2 + 2/3 + 1)/3 = 13/18
		//  is-trajectory = (1/2 + 2/3 + 2)/3 = 19/18
		//  wis-trajectory = (19/6)/(1+1+2) = 19/24
		//  w_{0:t}: ep 1 (2, 1), ep 2 (1/2, 1, 1), ep 3 (2).
		//  is-stepwise = (1/3)[1/2*2 + 1/3*(1+1) + 2] = (1/3)(11/3) = 11/9
		//  wis-stepwise, sum_t c_t (sum gamma w r)/(sum gamma w):
		//  t = 0: c = (1/3)(1/2 + 1/3 + 1) = 11/18, ratio (1 + 0 + 2)/(1 + 1/6 + 2) = 18/19;
		//  t = 1: c = (1/3)(1/2 + 1/3) = 5/18, ratio (0 + 1/3)/(1/2 + 1/3) = 2/5;
		//  t = 2: c = 1/9, ratio 1.
		//  = 11/19 + 1/9 + 1/9 = 137/171
		{"unequal gamma=1", handUnequal, 1, [5]float64{13. / 18, 19. / 18, 19. / 24, 11. / 9, 137. / 171}},
		// gamma = 1/2: gamma^1 = (2/3, 1/3), gamma^2 = (4/7, 2/7, 1/7),
		// gamma^3 = (1).  V = (2/3, 3/7, 1).
		//  naive = (2/3 + 3/7 + 1)/3 = 44/63
		//  is-trajectory = (2/3 + 3/7 + 2)/3 = 65/63
		//  wis-trajectory = (65/21)/4 = 65/84
		//  is-stepwise = (1/3)[2/3*2 + (2/7 + 1/7) + 2] = (1/3)(79/21) = 79/63
		//  wis-stepwise: t = 0: c = (1/3)(2/3 + 4/7 + 1) = 47/63, ratio
		//  (4/3 + 2)/(4/3 + 2/7 + 2) = 35/38; t = 1: c = 13/63, ratio
		//  (2/7)/(1/3 + 2/7) = 6/13; t = 2: c = 1/21, ratio 1.
		//  = 235/342 + 2/21 + 1/21 = 1987/2394
		{"unequal gamma=1/2", handUnequal, 0.5, [5]float64{44. / 63, 65. / 63, 65. / 84, 79. / 63, 1987. / 2394}},
		// Equal lengths, gamma = 1: V = (1/2, 1/2), w_{0:T} = (1, 1).
		//  naive = is-trajectory = wis-trajectory = 1/2
		//  is-stepwise = (1/2)[1/2*2*1 + 1/2*1*1] = 3/4
		//  wis-stepwise (Appendix A verbatim): Z_0 = 2 + 1/2, Z_1 = 2;
		//  = (1/2)(2*1)/(5/2) + (1/2)(1*1)/2 = 2/5 + 1/4 = 13/20
		{"equal gamma=1", handEqual, 1, [5]float64{0.5, 0.5, 0.5, 0.75, 13. / 20}},
		// Equal lengths, gamma = 1/2: gamma_t = (2/3, 1/3).
		//  is-stepwise = (1/2)[2/3*2 + 1/3*1] = 5/6
		//  wis-stepwise = (2/3)(2)/(5/2) + (1/3)(1)/2 = 8/15 + 1/6 = 7/10
		{"equal gamma=1/2", handEqual, 0.5, [5]float64{0.5, 0.5, 0.5, 5. / 6, 7. / 10}},
		// A zero target probability: ep 1 has weight 0 from step 0 on.
		//  naive = (1 + 1/2)/2 = 3/4
		//  is-trajectory = (0 + 2*1/2)/2 = 1/2, wis-trajectory = 1/(0+2) = 1/2
		//  is-stepwise = (1/2)[0 + 1/2*2*1] = 1/2
		//  wis-stepwise: Z_t = 2 at both steps: (1/2)(2*1)/2 = 1/2
		{"zero target prob", handZero, 1, [5]float64{0.75, 0.5, 0.5, 0.5, 0.5}},
	}
	for _, c := range cases {
		for k, e := range baselines() {
			res, err := e.Estimate(c.d, c.gamma)
			if err != nil {
				t.Errorf("%s, %s: %v", c.name, e.Name(), err)
				continue
			}
			if math.Abs(res.Value-c.want[k]) > 1e-12 {
				t.Errorf("%s, %s: %.17g, want %.17g", c.name, e.Name(), res.Value, c.want[k])
			}
		}
	}
}

func TestHandWeights(t *testing.T) {
	cases := []struct {
		name  string
		e     Estimator
		d     *dataset.Dataset
		gamma float64
		want  []float64
	}{
		// Per-episode weights w_{0:T} = (1, 1, 2), normalised.
		{"traj IS", &TrajectoryIS{}, handUnequal, 1, []float64{0.25, 0.25, 0.5}},
		{"traj WIS", &TrajectoryWIS{}, handUnequal, 1, []float64{0.25, 0.25, 0.5}},
		// ep 2 has weight 0.
		{"traj WIS zero", &TrajectoryWIS{}, handZero, 1, []float64{0, 1}},
		{"naive", &Naive{}, handUnequal, 1, []float64{1. / 3, 1. / 3, 1. / 3}},
		// gamma_t w_{0:t}: ep 1 (1/2*2, 1/2*1), ep 2 (1/2*1/2, 1/2*1),
		// total 9/4.
		{"step IS", &StepwiseIS{}, handEqual, 1, []float64{4. / 9, 2. / 9, 1. / 9, 2. / 9}},
		// gamma_t w_{0:t} / Z_t: t = 0: (1/2)(2, 1/2)/(5/2) = (2/5, 1/10);
		// t = 1: (1/2)(1, 1)/2 = (1/4, 1/4).
		{"step WIS", &StepwiseWIS{}, handEqual, 1, []float64{0.4, 0.25, 0.1, 0.25}},
	}
	for _, c := range cases {
		res, err := c.e.Estimate(c.d, c.gamma)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if len(res.Weights) != len(c.want) {
			t.Errorf("%s: %d weights, want %d", c.name, len(res.Weights), len(c.want))
			continue
		}
		for i := range c.want {
			if math.Abs(res.Weights[i]-c.want[i]) > 1e-12 {
				t.Errorf("%s: weight %d = %v, want %v", c.name, i, res.Weights[i], c.want[i])
			}
		}
	}
}

func TestErrors(t *testing.T) {
	// Every episode has a zero-probability target action at step 1.
	allZero := loggedData(
		[]dataset.Step{loggedStep(0.5, 0.5, 1), loggedStep(0.5, 0, 1)},
		[]dataset.Step{loggedStep(0.5, 1, 0), loggedStep(0.5, 0, 1)},
	)
	// The invalid datasets cannot be built (dataset.New validates): their
	// columns are corrupted after building.
	// A second, sound episode keeps importance sampling's need for
	// several episodes out of the way.
	sound := []dataset.Step{loggedStep(0.5, 0.5, 1)}
	badBehavior := loggedData([]dataset.Step{{LogTarget: math.Log(0.5)}}, sound)
	badBehavior.LogBehavior[0] = math.Inf(-1)
	bothZero := loggedData([]dataset.Step{{}}, sound)
	bothZero.LogBehavior[0], bothZero.LogTarget[0] = math.Inf(-1), math.Inf(-1)
	nanReward := loggedData([]dataset.Step{loggedStep(0.5, 0.5, 0)}, sound)
	nanReward.Reward[0] = math.NaN()
	oneEpisode := loggedData([]dataset.Step{loggedStep(0.5, 0.5, 1), loggedStep(0.5, 0.25, 0)})
	// An episode "b" with no steps after an episode "a" of one step.
	emptyEpisode := &dataset.Dataset{NumStates: 1, NumActions: 1,
		IDs: []string{"a", "b"}, Start: []int{0, 1, 1},
		State: []int32{0}, Action: []int32{0}, Reward: []float64{1},
		LogBehavior: []float64{math.Log(0.5)}, LogTarget: []float64{math.Log(0.5)},
		HasFinal: []bool{true, false}, FinalState: []int32{0, -1}}
	cases := []struct {
		name    string
		d       *dataset.Dataset
		gamma   float64
		wantErr [5]bool // naive, is-t, wis-t, is-s, wis-s
		errText string  // in every error
	}{
		{"all weights zero", allZero, 1, [5]bool{false, false, true, false, true}, "weight 0"},
		{"behavior prob 0", badBehavior, 1, [5]bool{false, true, true, true, true}, "log-ratio"},
		{"both probs 0", bothZero, 1, [5]bool{false, true, true, true, true}, "log-ratio"},
		{"NaN reward", nanReward, 1, [5]bool{true, true, true, true, true}, "reward"},
		{"empty episode", emptyEpisode, 1, [5]bool{true, true, true, true, true}, "no steps"},
		{"one episode", oneEpisode, 1, [5]bool{false, true, true, true, true}, "several episodes"},
		{"no episodes", &dataset.Dataset{}, 1, [5]bool{true, true, true, true, true}, "no episodes"},
		{"gamma 0", handEqual, 0, [5]bool{true, true, true, true, true}, "discount"},
		{"gamma 1.5", handEqual, 1.5, [5]bool{true, true, true, true, true}, "discount"},
	}
	for _, c := range cases {
		for k, e := range baselines() {
			res, err := e.Estimate(c.d, c.gamma)
			if (err != nil) != c.wantErr[k] {
				t.Errorf("%s, %s: error %v, want error %v", c.name, e.Name(), err, c.wantErr[k])
				continue
			}
			if err != nil {
				if !strings.Contains(err.Error(), c.errText) || !strings.Contains(err.Error(), e.Name()) {
					t.Errorf("%s, %s: error %q lacks %q or the estimator's name", c.name, e.Name(), err, c.errText)
				}
				continue
			}
			if math.IsNaN(res.Value) || math.IsInf(res.Value, 0) {
				t.Errorf("%s, %s: value %v", c.name, e.Name(), res.Value)
			}
		}
	}
	// On allZero, is-stepwise keeps the step-0 terms:
	// (1/2)[1/2*1*1 + 1/2*2*0] = 1/4.
	if res, err := (&StepwiseIS{}).Estimate(allZero, 1); err != nil || math.Abs(res.Value-0.25) > 1e-15 {
		t.Errorf("is-stepwise on allZero: %v, %v; want 0.25", res.Value, err)
	}
	// Plain IS when every weight is 0 from step 0 on: estimate 0, weights
	// all 0.
	zeroFromStart := loggedData(
		[]dataset.Step{loggedStep(0.5, 0, 1), loggedStep(0.5, 0.5, 1)},
		[]dataset.Step{loggedStep(0.5, 0, 0), loggedStep(0.5, 1, 1)},
	)
	for _, e := range []Estimator{&TrajectoryIS{}, &StepwiseIS{}} {
		res, err := e.Estimate(zeroFromStart, 1)
		if err != nil || res.Value != 0 {
			t.Errorf("%s on all-zero weights: %v, %v; want 0", e.Name(), res.Value, err)
		}
		for i, w := range res.Weights {
			if w != 0 {
				t.Errorf("%s on all-zero weights: weight %d = %v", e.Name(), i, w)
			}
		}
	}
}

// ringLogs samples n episodes of T steps on the 5-state ring with
// behavior P(R) = pb and target P(R) = pt.
func ringLogs(t testing.TB, seed uint64, pb, pt float64, n, T int) *dataset.Dataset {
	t.Helper()
	m, err := ring.New(5)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	d, err := rollout.Sample(rng, sim.NewSampler(m), ring.Policy(5, pb), ring.Policy(5, pt), n, T)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestTargetEqualsBehavior(t *testing.T) {
	d := ringLogs(t, 1, 0.6, 0.6, 30, 20)
	for _, gamma := range []float64{1, 0.9, 0.5} {
		naive, err := (&Naive{}).Estimate(d, gamma)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range baselines()[1:] {
			res, err := e.Estimate(d, gamma)
			if err != nil {
				t.Fatalf("gamma %v, %s: %v", gamma, e.Name(), err)
			}
			if math.Abs(res.Value-naive.Value) > 1e-12 {
				t.Errorf("gamma %v, %s = %.17g, naive = %.17g", gamma, e.Name(), res.Value, naive.Value)
			}
			// Equal weights: Kish ESS = number of units.
			units := d.NumEpisodes()
			if strings.HasSuffix(e.Name(), "stepwise") && gamma == 1 {
				units = d.NumSteps()
			}
			if strings.HasSuffix(e.Name(), "trajectory") || gamma == 1 {
				if ess := KishESS(res.Weights); math.Abs(ess-float64(units)) > 1e-9 {
					t.Errorf("gamma %v, %s: ESS %v, want %d", gamma, e.Name(), ess, units)
				}
			}
		}
	}
}

// longEpisode returns one episode of T steps with log-ratio lr at every
// step and reward 1 at the last step only.
func longEpisode(T int, lr float64) []dataset.Step {
	steps := make([]dataset.Step, T)
	for t := range steps {
		steps[t] = dataset.Step{HasNext: true, LogBehavior: math.Log(0.5), LogTarget: math.Log(0.5) + lr}
	}
	steps[T-1].Reward = 1
	return steps
}

func TestLongHorizon(t *testing.T) {
	const T = 10000
	// Sampled ring logs with P(R) 0.9 under the behavior and 0.1 under the
	// target: per-step ratios 1/9 and 9, log w_{0:T} near -17,600. Every
	// estimate must be finite; the WIS ones lie between the smallest and
	// largest normalised episode reward, the IS ones are tiny but >= 0.
	d := ringLogs(t, 2, 0.9, 0.1, 5, T)
	for _, gamma := range []float64{1, 0.99} {
		for _, e := range baselines() {
			res, err := e.Estimate(d, gamma)
			if err != nil {
				t.Fatalf("gamma %v, %s: %v", gamma, e.Name(), err)
			}
			if math.IsNaN(res.Value) || math.IsInf(res.Value, 0) || res.Value < 0 || res.Value > 1 {
				t.Errorf("gamma %v, %s: value %v outside [0, 1]", gamma, e.Name(), res.Value)
			}
			for i, w := range res.Weights {
				if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
					t.Fatalf("gamma %v, %s: weight %d = %v", gamma, e.Name(), i, w)
				}
			}
			if ess := KishESS(res.Weights); !(ess >= 1) {
				t.Errorf("gamma %v, %s: ESS %v < 1", gamma, e.Name(), ess)
			}
		}
	}

	// One episode with log w = 712 (exp overflows) and reward 1 at its
	// last step, gamma = 1: V = 1e-4, so both IS estimates are
	// exp(712) * 1e-4 ~ 1.65e305, finite only if formed in log space; both
	// WIS estimates are V = 1e-4.
	// (Two copies of the episode: importance sampling needs several, and
	// identical episodes leave every estimate as it is for one.)
	big := loggedData(longEpisode(T, 712.0/T), longEpisode(T, 712.0/T))
	want := math.Exp(712 - math.Log(T))
	for _, c := range []struct {
		e    Estimator
		want float64
	}{{&TrajectoryIS{}, want}, {&StepwiseIS{}, want}, {&TrajectoryWIS{}, 1e-4}, {&StepwiseWIS{}, 1e-4}} {
		res, err := c.e.Estimate(big, 1)
		if err != nil {
			t.Errorf("log w = 712, %s: %v", c.e.Name(), err)
			continue
		}
		if !scalar.EqualWithinRel(res.Value, c.want, 1e-9) {
			t.Errorf("log w = 712, %s = %v, want %v", c.e.Name(), res.Value, c.want)
		}
	}
	// log w = 800: exp(800) * 1e-4 is beyond float64; plain IS must say so.
	huge := loggedData(longEpisode(T, 800.0/T), longEpisode(T, 800.0/T))
	for _, e := range []Estimator{&TrajectoryIS{}, &StepwiseIS{}} {
		if res, err := e.Estimate(huge, 1); err == nil || !strings.Contains(err.Error(), "overflows") {
			t.Errorf("log w = 800, %s: %v, %v; want an overflow error", e.Name(), res.Value, err)
		}
	}
	// gamma = 1/2, T = 2000, log-ratio 1/2 per step, reward at the last
	// step: gamma_1999 = 2^-2000 / (2 (1 - 2^-2000)) underflows and
	// w_{0:1999} = e^1000 overflows, but their product e^(1000 - 2000 ln 2)
	// ~ 1e-168 is what step-wise IS must return.
	under := loggedData(longEpisode(2000, 0.5), longEpisode(2000, 0.5))
	res, err := (&StepwiseIS{}).Estimate(under, 0.5)
	want = math.Exp(1000 - 2000*math.Ln2)
	if err != nil || !scalar.EqualWithinRel(res.Value, want, 1e-9) {
		t.Errorf("underflowing discount, is-stepwise = %v, %v; want %v", res.Value, err, want)
	}
}

// chain3 is a 3-state, 2-action MDP with stochastic transitions and
// rewards that depend on the state and the action.
type chain3 struct{}

func (chain3) NumStates() int     { return 3 }
func (chain3) NumActions() int    { return 2 }
func (chain3) Initial() []float64 { return []float64{0.5, 0.3, 0.2} }
func (chain3) Outcomes(s, a int) []mdp.Outcome {
	r := float64(s) + 2*float64(a) // r(s, a)
	if a == 0 {
		return []mdp.Outcome{{Next: s, Prob: 0.6, Reward: r}, {Next: (s + 1) % 3, Prob: 0.4, Reward: r}}
	}
	return []mdp.Outcome{{Next: (s + 2) % 3, Prob: 0.9, Reward: r}, {Next: 0, Prob: 0.1, Reward: r}}
}

func tabularPolicy(t testing.TB, rows [][]float64) *policy.Tabular {
	t.Helper()
	p, err := policy.NewTabular(rows)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestUnbiased checks that the mean of the plain IS estimates over many
// datasets matches the exact value within four standard errors, on an MDP
// whose rewards depend on the state, for two discounts.
func TestUnbiased(t *testing.T) {
	behavior := tabularPolicy(t, [][]float64{{0.7, 0.3}, {0.4, 0.6}, {0.5, 0.5}})
	target := tabularPolicy(t, [][]float64{{0.2, 0.8}, {0.9, 0.1}, {0.3, 0.7}})
	const (
		K = 8000 // datasets
		n = 10   // episodes per dataset
		T = 4
	)
	sampler := sim.NewSampler(chain3{})
	for _, gamma := range []float64{1, 0.7} {
		truth := mdp.Value(chain3{}, target, nil, T, gamma)
		naiveTruth := mdp.Value(chain3{}, behavior, nil, T, gamma)
		rng := rand.New(rand.NewPCG(3, 0))
		ests := []Estimator{&TrajectoryIS{}, &StepwiseIS{}}
		sum := make([]float64, len(ests))
		sum2 := make([]float64, len(ests))
		for range K {
			d, err := rollout.Sample(rng, sampler, behavior, target, n, T)
			if err != nil {
				t.Fatal(err)
			}
			for j, e := range ests {
				res, err := e.Estimate(d, gamma)
				if err != nil {
					t.Fatal(err)
				}
				sum[j] += res.Value
				sum2[j] += res.Value * res.Value
			}
		}
		for j, e := range ests {
			mean := sum[j] / K
			se := math.Sqrt((sum2[j]/K - mean*mean) / (K - 1))
			if math.Abs(mean-truth) > 4*se {
				t.Errorf("gamma %v, %s: mean %v, exact %v, standard error %v", gamma, e.Name(), mean, truth, se)
			}
			// The check has power: the behavior's own value is far away.
			if math.Abs(naiveTruth-truth) < 10*se {
				t.Errorf("gamma %v: behavior value %v too close to target value %v for the check to mean anything (se %v)",
					gamma, naiveTruth, truth, se)
			}
		}
	}
}

// benchData is the paper's default Taxi log: 200 episodes of 400 steps
// (80,000 steps) under the behavior pi18, target pi19. It is sampled once.
func benchData(b *testing.B) (*dataset.Dataset, *policy.Tabular) {
	b.Helper()
	benchOnce.Do(func() {
		behavior, err := taxi.Policy(taxi.DefaultBehavior)
		if err != nil {
			benchErr = err
			return
		}
		if benchTarget, benchErr = taxi.Policy(taxi.DefaultTarget); benchErr != nil {
			return
		}
		rng := rand.New(rand.NewPCG(4, 0))
		benchD, benchErr = rollout.Sample(rng, sim.NewSampler(taxi.New()), behavior, benchTarget, 200, 400)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchD, benchTarget
}

var (
	benchOnce   sync.Once
	benchD      *dataset.Dataset
	benchTarget *policy.Tabular
	benchErr    error
)

func benchEstimator(b *testing.B, e Estimator) {
	d, _ := benchData(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Estimate(d, 0.99); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNaive(b *testing.B)         { benchEstimator(b, &Naive{}) }
func BenchmarkTrajectoryIS(b *testing.B)  { benchEstimator(b, &TrajectoryIS{}) }
func BenchmarkTrajectoryWIS(b *testing.B) { benchEstimator(b, &TrajectoryWIS{}) }
func BenchmarkStepwiseIS(b *testing.B)    { benchEstimator(b, &StepwiseIS{}) }
func BenchmarkStepwiseWIS(b *testing.B)   { benchEstimator(b, &StepwiseWIS{}) }
