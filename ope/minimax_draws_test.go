package ope_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/testsets"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// drawsOf returns one action drawn by draw at every state of d where a
// value model reads the target's actions (what ihope sample
// --target-draws writes and ihope estimate --target-draws reads).
func drawsOf(t testing.TB, d *dataset.Dataset, draw func(obs []float64) []float64) *policy.Draws {
	t.Helper()
	var states, actions [][]float64
	d.TargetStates(func(obs []float64, _, _ int, _ bool) bool {
		states, actions = append(states, obs), append(actions, draw(obs))
		return true
	})
	draws, err := policy.NewDraws(states, actions)
	if err != nil {
		t.Fatal(err)
	}
	return draws
}

// On logs of real actions with the target known only by one action drawn
// at every logged and next state (policy.Draws, --target-draws), mwl and
// mql converge to the long-run truth of the linear-Gaussian problem,
// known in closed form (lineargauss: System.AverageReward for gamma = 1,
// System.Value over 3000 steps from the behavior's stationary law, the
// logs' start law, for gamma = 0.9). q is quadratic in (s, a), within
// mql's joint monomials of degree 4; the ratio d_pi(s, a)/d_D(s, a) is a
// ratio of Gaussians, which mwl's Gaussian bumps of (s, a) approximate.
// Both RMSEs over the seeds must fall from n to 4n episodes (to 16n with
// IHOPE_LONG) and end below 0.03. fqe (LSTD-Q on the same logs and draws)
// is logged beside them. In CI the 1-d problem, 3 seeds of n = 20 and 80
// episodes of 100 steps (about 2 s); with IHOPE_LONG=1 the 1-d and 2-d
// problems, 8 seeds of n = 20, 80, 320, the table docs/pending-drawsmm.md
// quotes.
func TestMinimaxDrawsConverge(t *testing.T) {
	seeds, ns := 3, []int{20, 80}
	problems := []struct {
		name string
		p    *lineargauss.Problem
	}{{"1-d", lineargauss.Problem1D()}}
	names := []string{"mwl", "mql"}
	if testsets.Long() {
		seeds, ns = 8, []int{20, 80, 320}
		problems = append(problems, struct {
			name string
			p    *lineargauss.Problem
		}{"2-d", lineargauss.Problem2D()})
		names = append(names, "fqe")
	}
	for _, pr := range problems {
		p := pr.p
		for _, gamma := range []float64{0.9, 1} {
			truth, err := p.System.AverageReward(p.Target)
			if gamma < 1 {
				truth, err = p.System.Value(p.Target, gamma, 3000)
			}
			if err != nil {
				t.Fatal(err)
			}
			rmse, mae := map[string][]float64{}, map[string][]float64{}
			for _, n := range ns {
				se, ae := map[string]float64{}, map[string]float64{}
				for seed := range seeds {
					d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(uint64(seed)+1, uint64(n))), p.System, p.Behavior, p.Target, n, 100)
					if err != nil {
						t.Fatal(err)
					}
					rng := rand.New(rand.NewPCG(uint64(seed), 99))
					draws := drawsOf(t, d, func(obs []float64) []float64 { return p.Target.Sample(rng, obs) })
					ests, err := ope.New(names, ope.Options{Estimand: ope.LongRun, TargetContinuous: draws, Samples: 1})
					if err != nil {
						t.Fatal(err)
					}
					for _, e := range ests {
						res, err := e.Estimate(d, gamma)
						if err != nil {
							t.Fatalf("%s %s gamma %g n %d: %v", pr.name, e.Name(), gamma, n, err)
						}
						if res.Estimand != ope.LongRun {
							t.Errorf("%s: estimand %q", e.Name(), res.Estimand)
						}
						err2 := (res.Value - truth) * (res.Value - truth)
						se[e.Name()] += err2 / float64(seeds)
						ae[e.Name()] += math.Sqrt(err2) / float64(seeds)
					}
				}
				for _, name := range names {
					rmse[name] = append(rmse[name], math.Sqrt(se[name]))
					mae[name] = append(mae[name], ae[name])
				}
			}
			var b strings.Builder
			for _, name := range names {
				fmt.Fprintf(&b, "\n  %-4s RMSE", name)
				for _, r := range rmse[name] {
					fmt.Fprintf(&b, " %7.4f", r)
				}
				b.WriteString("   mean |error|")
				for _, r := range mae[name] {
					fmt.Fprintf(&b, " %7.4f", r)
				}
			}
			t.Logf("%s, gamma %g (truth %.6f), %d seeds, n = %v episodes of 100 steps:%s", pr.name, gamma, truth, seeds, ns, b.String())
			for _, name := range []string{"mwl", "mql"} {
				r := rmse[name]
				for i := 1; i < len(r); i++ {
					if !(r[i] < r[i-1]) {
						t.Errorf("%s gamma %g: %s RMSE %.4f at n = %d, %.4f at n = %d: want a fall", pr.name, gamma, name, r[i-1], ns[i-1], r[i], ns[i])
					}
				}
				if last := r[len(r)-1]; !(last < 0.03) {
					t.Errorf("%s gamma %g: %s RMSE %.4f at n = %d, want below 0.03", pr.name, gamma, name, last, ns[len(ns)-1])
				}
			}
		}
	}
}

// On a log of real states and discrete actions, a deterministic target
// given by its actions drawn at every logged and next state (one-component
// draws holding the action's index) gives mwl and mql the estimates the
// target_prob_k columns of the same target give, to 1e-9: the draws are
// read at the states where the learners read the target's distribution
// (the next state, the episode's final state, the start state), and their
// frequencies are its one-hot rows (value.TargetProbsFromDraws). A draw
// read at the wrong state (the logged instead of the next one, say)
// changes the estimates by far more: the target switches action as the
// state crosses +-0.5, which the noise (sd 0.5) makes it do often.
func TestMinimaxDrawsDiscreteAgree(t *testing.T) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	act := func(s float64) int { // steer towards 0
		switch {
		case s > 0.5:
			return 0
		case s < -0.5:
			return 2
		}
		return 1
	}
	d, err := sys.Sample(rand.New(rand.NewPCG(3, 1)), behavior, target, 30, 60)
	if err != nil {
		t.Fatal(err)
	}
	// The target's columns: the one-hot rows of act.
	cols := d.Clone()
	nA := d.NumActions
	clear(cols.TargetProbs)
	clear(cols.FinalTargetProbs)
	for j := range d.NumSteps() {
		cols.TargetProbs[j*nA+act(d.ObsAt(j)[0])] = 1
	}
	for e := range d.NumEpisodes() {
		if cols.HasFinalTarget[e] {
			cols.FinalTargetProbs[e*nA+act(d.FinalObs[e])] = 1
		}
	}
	drawn := d.Clone()
	drawn.TargetProbs, drawn.FinalTargetProbs, drawn.HasFinalTarget = nil, nil, nil
	draws := drawsOf(t, d, func(obs []float64) []float64 { return []float64{float64(act(obs[0]))} })
	for _, gamma := range []float64{0.9, 1} {
		for _, name := range []string{"mwl", "mql"} {
			want, err := mustEstimate(t, name, cols, ope.Options{Estimand: ope.LongRun}, gamma)
			if err != nil {
				t.Fatal(err)
			}
			for _, samples := range []int{0, 1} {
				got, err := mustEstimate(t, name, drawn, ope.Options{Estimand: ope.LongRun, TargetContinuous: draws, Samples: samples}, gamma)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(got-want) > 1e-9 {
					t.Errorf("%s gamma %g samples %d: %.12f from the draws, %.12f from the columns", name, gamma, samples, got, want)
				}
			}
			// The target's own softmax columns give another value: the
			// comparison above can fail.
			other, err := mustEstimate(t, name, d, ope.Options{Estimand: ope.LongRun}, gamma)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(other-want) < 1e-3 {
				t.Errorf("%s gamma %g: the softmax target's %.6f and the deterministic one's %.6f barely differ", name, gamma, other, want)
			}
		}
	}
	// A draw that is not an action's index is an error naming the state.
	bad := drawsOf(t, d, func(obs []float64) []float64 { return []float64{0.5} })
	if _, err := mustEstimate(t, "mql", drawn, ope.Options{Estimand: ope.LongRun, TargetContinuous: bad}, 0.9); err == nil ||
		!strings.Contains(err.Error(), `episode "0" step 0`) || !strings.Contains(err.Error(), "want an index in 0..2") {
		t.Errorf("draws of action 0.5: error %v", err)
	}
}

// mustEstimate runs the named estimator on d.
func mustEstimate(t *testing.T, name string, d *dataset.Dataset, o ope.Options, gamma float64) (float64, error) {
	t.Helper()
	ests, err := ope.New([]string{name}, o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ests[0].Estimate(d, gamma)
	return res.Value, err
}
