package sumo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"testing"

	"github.com/ihope-ope/ihope/internal/proctest"
	"github.com/ihope-ope/ihope/sim/traci"
	"gonum.org/v1/gonum/stat"
)

// requireSumo skips the test when SUMO is not installed.
func requireSumo(t testing.TB) {
	t.Helper()
	if _, err := traci.LookPath(""); err != nil {
		t.Skip(err.Error()) // "sumo not found: apt-get install -y sumo"
	}
	if _, err := exec.LookPath("netconvert"); err != nil {
		t.Skip("netconvert not found: apt-get install -y sumo")
	}
}

// buildNet builds a network in a fresh directory and, at cleanup, checks
// that no SUMO run on it is left.
func buildNet(t testing.TB, cfg Config) *Network {
	t.Helper()
	requireSumo(t)
	dir := t.TempDir()
	t.Cleanup(func() { proctest.NoneLeft(t, dir) })
	n, err := Build(context.Background(), dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Starts real SUMO, runs 100 steps through every phase change, reads the
// detectors, and closes.
func TestSimIntegration(t *testing.T) {
	n := buildNet(t, Config{})
	s, err := n.Start(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Kill) // reaps SUMO even if the test fails below
	if got := s.Time(); got != 300 {
		t.Errorf("time after warm-up %v, want 300", got)
	}
	// The warm-up held each green 30 s: 0, 1, 2, 3, 0, 1, 2, 3, 0, 1.
	if s.Green(0) != 1 {
		t.Errorf("green after warm-up %d, want 1", s.Green(0))
	}
	busy := 0
	for k := range 100 {
		a := (k / 2) % NumPhases // hold each phase 2 steps: changes and stays
		if k%7 == 3 {
			a = (a + 2) % NumPhases
		}
		r, err := s.Step(a)
		if err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
		// Step checks, through the subscription to each light's phase,
		// that the light shows green a after the step.
		if s.Green(0) != a {
			t.Fatalf("step %d: green %d, want %d", k, s.Green(0), a)
		}
		obs := s.Obs()
		if len(obs) != 8 {
			t.Fatalf("state of length %d", len(obs))
		}
		sum := 0.0
		for i, v := range obs {
			// A 180 m detector holds at most 24 cars of 7.5 m (25 if
			// two are partly on it): 50 on the two straight lanes, 25
			// on the left one.
			limit := 50.0
			if i%2 == 1 {
				limit = 25
			}
			if v < 0 || v > limit || v != math.Trunc(v) {
				t.Fatalf("step %d: count %d is %v", k, i, v)
			}
			sum += v
		}
		if r != -sum {
			t.Fatalf("step %d: reward %v, want -(sum of counts) = %v", k, r, -sum)
		}
		if sum > 0 {
			busy++
		}
	}
	if busy < 50 {
		t.Errorf("vehicles on the detectors in only %d of 100 steps", busy)
	}
	if got := s.Time(); got != 900 {
		t.Errorf("time %v, want 300 + 100 x 6 = 900", got)
	}
	if _, err := s.Step(4); err == nil {
		t.Error("action 4 accepted on one light")
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestSimGrid2x2(t *testing.T) {
	n := buildNet(t, Config{Grid: 2, Warmup: 60})
	if n.NumLights() != 4 || n.NumActions() != 256 || n.ObsDim() != 32 {
		t.Fatalf("2x2: %d lights, %d actions, %d counts", n.NumLights(), n.NumActions(), n.ObsDim())
	}
	s, err := n.Start(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Kill)
	rng := rand.New(rand.NewPCG(5, 6))
	for k := range 20 {
		a := rng.IntN(256)
		if _, err := s.Step(a); err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
		for l := range 4 {
			if got, want := s.Green(l), (a>>(2*l))&3; got != want {
				t.Fatalf("step %d: light %d green %d, want %d", k, l, got, want)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}

func TestSample(t *testing.T) {
	n := buildNet(t, Config{Warmup: 60})
	behavior, err := Behavior(2, 1)
	if err != nil {
		t.Fatal(err)
	}
	target := Target(1)
	const episodes, T = 3, 15
	d, err := n.Sample(context.Background(), rand.New(rand.NewPCG(8, 9)), behavior, target, episodes, T, 2)
	if err != nil {
		t.Fatal(err)
	}
	if d.NumEpisodes() != episodes || d.NumSteps() != episodes*T || d.StateDim != 8 || d.NumActions != 4 || d.NumStates != 0 {
		t.Fatalf("dataset: %d episodes, %d steps, dim %d, %d actions, %d states", d.NumEpisodes(), d.NumSteps(), d.StateDim, d.NumActions, d.NumStates)
	}
	for i, ep := range d.Episodes() {
		if ep.ID != strconv.Itoa(i) {
			t.Errorf("episode %d has id %q", i, ep.ID)
		}
		for t0, st := range ep.Steps {
			if st.State != -1 || st.NextState != -1 || !st.HasNext || len(st.Obs) != 8 || len(st.NextObs) != 8 || st.ActionVec != nil {
				t.Fatalf("episode %d step %d: %+v", i, t0, st)
			}
			if lb := behavior.LogProb(st.Obs, st.Action); lb != st.LogBehavior {
				t.Errorf("episode %d step %d: log behavior %v, policy says %v", i, t0, st.LogBehavior, lb)
			}
			if lt := target.LogProb(st.Obs, st.Action); math.Abs(lt-st.LogTarget) > 1e-15 {
				t.Errorf("episode %d step %d: log target %v, policy says %v", i, t0, st.LogTarget, lt)
			}
			if got := -stat.Mean(st.NextObs, nil) * 8; math.Abs(got-st.Reward) > 1e-12 {
				t.Errorf("episode %d step %d: reward %v, -(sum of next counts) %v", i, t0, st.Reward, got)
			}
			if t0+1 < T && fmt.Sprint(ep.Steps[t0+1].Obs) != fmt.Sprint(st.NextObs) {
				t.Errorf("episode %d step %d: next state %v, following state %v", i, t0, st.NextObs, ep.Steps[t0+1].Obs)
			}
		}
	}
	// The same seed gives the same dataset with one worker.
	d1, err := n.Sample(context.Background(), rand.New(rand.NewPCG(8, 9)), behavior, target, episodes, T, 1)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(d1.Episodes()) != fmt.Sprint(d.Episodes()) {
		t.Error("same seed, different datasets with 1 and 2 workers")
	}
	if _, err := n.Sample(context.Background(), rand.New(rand.NewPCG(8, 9)), Uniform(2), target, 1, 1, 1); err == nil {
		t.Error("a policy for 2 lights sampled a 1-light network")
	}

	// Longer and more episodes from the same seed start with the same
	// steps: the experiment's datasets are prefixes of one log.
	long, err := n.SampleLengths(context.Background(), rand.New(rand.NewPCG(8, 9)), behavior, target, []int{2 * T, T, T + 3, 4}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := long.NumSteps(); got != 4*T+7 {
		t.Errorf("SampleLengths logged %d steps, want %d", got, 4*T+7)
	}
	if fmt.Sprint(long.Head(episodes, T).Episodes()) != fmt.Sprint(d.Episodes()) {
		t.Error("the first 3 episodes of SampleLengths, cut to 15 steps, differ from Sample's")
	}
	rs, err := n.Rewards(context.Background(), rand.New(rand.NewPCG(8, 9)), behavior, 2, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := n.RewardsLengths(context.Background(), rand.New(rand.NewPCG(8, 9)), behavior, []int{9, 5, 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rl) != 3 || len(rl[0]) != 9 || fmt.Sprint(rl[0][:5], rl[1]) != fmt.Sprint(rs[0], rs[1]) {
		t.Errorf("RewardsLengths %v does not start with Rewards %v", rl, rs)
	}
	for i := range 2 {
		for k, st := range d.Episode(i).Steps[:5] {
			if rs[i][k] != st.Reward {
				t.Errorf("episode %d step %d: Rewards %v, Sample %v (same seeds, same policy)", i, k, rs[i][k], st.Reward)
			}
		}
	}
	if _, err := n.SampleLengths(context.Background(), rand.New(rand.NewPCG(8, 9)), behavior, target, []int{3, 0}, 1); err == nil {
		t.Error("SampleLengths accepted an episode of 0 steps")
	}
}

// The trained target policy queues clearly fewer vehicles than the
// uniform policy, on the same traffic (same SUMO seeds).
func TestTargetBeatsUniform(t *testing.T) {
	n := buildNet(t, Config{})
	const episodes, T = 4, 150
	mean := func(p Policy) (float64, float64) {
		r, err := n.AverageReward(context.Background(), rand.New(rand.NewPCG(11, 12)), p, episodes, T, 2)
		if err != nil {
			t.Fatal(err)
		}
		m, sd := stat.MeanStdDev(r, nil)
		return m, sd / math.Sqrt(episodes)
	}
	uni, uniSE := mean(Uniform(1))
	tgt, tgtSE := mean(Target(1))
	t.Logf("average reward over %d x %d steps: uniform %.3f ± %.3f, target %.3f ± %.3f", episodes, T, uni, uniSE, tgt, tgtSE)
	if tgt-uni < 5 {
		t.Errorf("target %.3f is not clearly better than uniform %.3f", tgt, uni)
	}
}
