package cli

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/evaluate"
)

// banditRow is one logged decision of a contextual bandit.
type banditRow struct {
	x      []float64 // the context: one id, or a vector
	a      int
	r      float64
	pb     float64   // the behavior's probability of a
	target []float64 // the target's distribution over the actions
}

// writeBandit writes rows in Open Bandit Pipeline's shape: x_0, ...
// (or a context id x_0 read as state), action, reward, pscore and the
// target's distribution as target_prob_k; no episode and no t column.
func writeBandit(t *testing.T, rows []banditRow) string {
	t.Helper()
	var b strings.Builder
	for k := range rows[0].x {
		fmt.Fprintf(&b, "x_%d,", k)
	}
	b.WriteString("action,reward,pscore")
	for k := range rows[0].target {
		fmt.Fprintf(&b, ",target_prob_%d", k)
	}
	b.WriteString("\n")
	for _, r := range rows {
		for _, v := range r.x {
			fmt.Fprintf(&b, "%v,", v)
		}
		fmt.Fprintf(&b, "%d,%v,%v", r.a, r.r, r.pb)
		for _, p := range r.target {
			fmt.Fprintf(&b, ",%v", p)
		}
		b.WriteString("\n")
	}
	path := filepath.Join(t.TempDir(), "obp.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ipw returns IPW and SNIPW computed from the rows, independently of
// ihope's estimators: mean w r and sum w r / sum w, w = pi/pi0.
func ipw(rows []banditRow) (ipw, snipw float64) {
	var num, den float64
	for _, r := range rows {
		w := r.target[r.a] / r.pb
		num += w * r.r
		den += w
	}
	return num / float64(len(rows)), num / den
}

// byEstimator returns the estimates by estimator, failing on a row
// without one.
func byEstimator(t *testing.T, rep *evaluate.Report) map[string]float64 {
	t.Helper()
	m := map[string]float64{}
	for _, r := range rep.Estimates {
		if r.Estimate == nil {
			t.Fatalf("%s: no estimate: %s", r.Estimator, r.Error)
		}
		m[r.Estimator] = *r.Estimate
	}
	return m
}

// ihope estimate --bandit on a contextual bandit with known truth: the
// default set is IPW, SNIPW, DM and DR (is-trajectory, wis-trajectory,
// fqe, dr) and nothing of the long run; IPW and SNIPW equal their
// formulas computed here; DM and DR equal the exact value where the
// value model can be exact.
func TestEstimateBandit(t *testing.T) {
	// Discrete contexts 0, 1, 2, each logged equally often (so the
	// logged contexts have the true, uniform, distribution), both
	// actions at each, rewards a function of (context, action): the
	// tabular value model is exact, so DM is the true value and DR's
	// correction is 0 (each fold of the cross-fitting sees every pair).
	reward := [3][2]float64{{1, 0}, {0.25, 2}, {3, 1}}
	target := [3][]float64{{0.9, 0.1}, {0.2, 0.8}, {0.5, 0.5}}
	behavior := [3][2]float64{{0.5, 0.5}, {0.75, 0.25}, {0.4, 0.6}}
	var discrete []banditRow
	for s := range 3 {
		for a := range 2 {
			for range 2 { // ids 2i and 2i+1: one in each of the 2 folds
				discrete = append(discrete, banditRow{x: []float64{float64(s)}, a: a, r: reward[s][a], pb: behavior[s][a], target: target[s]})
			}
		}
	}
	truth := 0.0
	for s := range 3 {
		for a := range 2 {
			truth += target[s][a] * reward[s][a] / 3
		}
	}

	// Real contexts (x_0, x_1): rewards linear in the context for each
	// action, which the linear value model (quadratic features) holds,
	// so DM and DR equal the target's value over the logged contexts,
	// up to the model's relative ridge.
	var real []banditRow
	realTruth := 0.0
	rng := rand.New(rand.NewPCG(1, 2))
	for range 40 {
		x := []float64{rng.Float64(), rng.Float64()}
		pi := []float64{0.3, 0.7}
		r := func(a int) float64 { return []float64{1 + x[0] - 2*x[1], 0.5 + 3*x[1]}[a] }
		a := rng.IntN(2)
		real = append(real, banditRow{x: x, a: a, r: r(a), pb: 0.5, target: pi})
		realTruth += (pi[0]*r(0) + pi[1]*r(1)) / 40
	}

	for _, tc := range []struct {
		name  string
		rows  []banditRow
		flags []string
		truth float64
		tol   float64
	}{
		{"discrete contexts", discrete, []string{"--column", "state=x_0"}, truth, 1e-12},
		{"real contexts", real, []string{"--column", "state_=x_"}, realTruth, 1e-4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeBandit(t, tc.rows)
			args := append([]string{"--data", path, "--bandit", "--column", "behavior_prob=pscore"}, tc.flags...)
			rep := estimateJSON(t, append([]string{"--bootstrap", "0"}, args...)...)
			got := byEstimator(t, rep)
			var names []string
			for _, r := range rep.Estimates {
				names = append(names, r.Estimator)
			}
			if !slices.Equal(names, []string{"is-trajectory", "wis-trajectory", "fqe", "dr"}) {
				t.Errorf("estimators %q, want %q", names, []string{"is-trajectory", "wis-trajectory", "fqe", "dr"})
			}
			if len(rep.Warnings) > 0 {
				t.Errorf("warnings %q", rep.Warnings)
			}
			if rep.Data.Estimand != "horizon" || rep.Data.Episodes != len(tc.rows) || rep.Data.Terminal != len(tc.rows) {
				t.Errorf("estimand %s, %d episodes, %d terminal; want horizon, %d, %d", rep.Data.Estimand, rep.Data.Episodes, rep.Data.Terminal, len(tc.rows), len(tc.rows))
			}
			wantIPW, wantSN := ipw(tc.rows)
			for _, c := range []struct {
				name      string
				want, tol float64
			}{
				{"is-trajectory", wantIPW, 1e-12}, {"wis-trajectory", wantSN, 1e-12},
				{"fqe", tc.truth, tc.tol}, {"dr", tc.truth, tc.tol},
			} {
				if math.Abs(got[c.name]-c.want) > c.tol {
					t.Errorf("%s = %.15g, want %.15g (within %g)", c.name, got[c.name], c.want, c.tol)
				}
			}
		})
	}
}

// Other tools' exports (dataset/logio/testdata/shapes) are read by ihope
// estimate with the flags their error proposes.
func TestEstimateShapes(t *testing.T) {
	dir := filepath.Join("..", "..", "dataset", "logio", "testdata", "shapes")
	for _, tc := range []struct {
		file  string
		flags []string
	}{
		{"d3rlpy.csv", d3rlpyFlags},
		{"obp.csv", []string{"--bandit", "--column", "state_=x_", "--column", "behavior_prob=pscore"}},
		{"scope_rl.csv", []string{"--column", "terminal=done", "--column", "truncated=terminal", "--column", "behavior_prob=pscore",
			"--column", "target_prob_@A=pi_A_", "--column", "target_prob_@B=pi_B_"}},
		{"rllib.csv", []string{"--column", "episode=eps_id", "--column", "state_=obs_", "--column", "action=actions",
			"--column", "reward=rewards", "--column", "terminal=terminateds", "--column", "truncated=truncateds",
			"--column", "behavior_prob=action_prob"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			args := append([]string{"estimate", "--data", filepath.Join(dir, tc.file), "--bootstrap", "0", "--estimators", "wis-trajectory"}, tc.flags...)
			if _, errOut, code := run(t, args...); code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
		})
	}
}

var d3rlpyFlags = []string{"--column", "state_=observations_", "--column", "action=actions", "--column", "reward=rewards",
	"--column", "terminal=terminals", "--column", "truncated=timeouts", "--column", "behavior_prob=pscore"}

// Episodes that end without a next state, as d3rlpy writes every cut-off
// one: a note in the summary line where they are at most a tenth of the
// steps (episodes of 10 steps), a warning beyond (episodes of 9).
func TestOpenEndingsNote(t *testing.T) {
	for _, tc := range []struct {
		length int
		warn   bool
	}{{10, false}, {9, true}} {
		var b strings.Builder
		b.WriteString("observations_0,actions,rewards,terminals,timeouts,pscore,target_prob\n")
		for e := range 4 {
			for i := range tc.length {
				fmt.Fprintf(&b, "%d,%d,1,0,%d,0.5,0.5\n", i, e%2, map[bool]int{true: 1, false: 0}[i == tc.length-1])
			}
		}
		path := filepath.Join(t.TempDir(), "d3.csv")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := run(t, append([]string{"estimate", "--data", path, "--bootstrap", "0", "--estimators", "wis-trajectory"}, d3rlpyFlags...)...)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		warned := strings.Contains(out, "4 episodes end without next_state:")
		noted := strings.Contains(out, "; 4 without a final next_state (their last steps count for the rewards, not as transitions)")
		if warned != tc.warn || noted == tc.warn {
			t.Errorf("episodes of %d steps: warned %v, noted %v; want a warning %v\n%s", tc.length, warned, noted, tc.warn, out)
		}
	}
}
