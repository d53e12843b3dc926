package ratio

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// tiny is a 2-state, 2-action MDP with dyadic probabilities, so that a
// dataset holding every trajectory with multiplicity p * N is exact:
//
//	d0 = (1/2, 1/2);  P(.|0,0) = (1/2, 1/2), P(.|0,1) = (1/4, 3/4),
//	P(.|1,0) = (1, 0), P(.|1,1) = (1/2, 1/2);  r(s,a) = s + 2a.
type tiny struct{}

var tinyP = [2][2][2]float64{{{0.5, 0.5}, {0.25, 0.75}}, {{1, 0}, {0.5, 0.5}}}

func (tiny) NumStates() int     { return 2 }
func (tiny) NumActions() int    { return 2 }
func (tiny) Initial() []float64 { return []float64{0.5, 0.5} }
func (tiny) Outcomes(s, a int) []mdp.Outcome {
	var out []mdp.Outcome
	for n, p := range tinyP[s][a] {
		if p > 0 {
			out = append(out, mdp.Outcome{Next: n, Prob: p, Reward: float64(s + 2*a)})
		}
	}
	return out
}

// The behavior and the target of the tiny MDP.
var (
	tinyMu = [][]float64{{0.5, 0.5}, {0.25, 0.75}}
	tinyPi = [][]float64{{0.75, 0.25}, {0.5, 0.5}}
)

// expectationEpisodes appends every trajectory of length L of the tiny
// MDP under tinyMu, repeated p * N times (p its probability; N must make
// every p * N an integer), without a final next state.
func expectationEpisodes(t *testing.T, eps []dataset.Episode, L int, N float64) []dataset.Episode {
	t.Helper()
	var walk func(steps []dataset.Step, s int, p float64)
	walk = func(steps []dataset.Step, s int, p float64) {
		for a := range 2 {
			st := dataset.Step{State: s, Action: a, Reward: float64(s + 2*a),
				LogBehavior: math.Log(tinyMu[s][a]), LogTarget: math.Log(tinyPi[s][a])}
			pa := p * tinyMu[s][a]
			if len(steps)+1 == L {
				k := pa * N
				if k != math.Trunc(k) {
					t.Fatalf("multiplicity %v is not an integer", k)
				}
				for range int(k) {
					eps = append(eps, dataset.Episode{ID: fmt.Sprint(len(eps)), Steps: append(append([]dataset.Step(nil), steps...), st)})
				}
				continue
			}
			for next, q := range tinyP[s][a] {
				if q == 0 {
					continue
				}
				st.HasNext, st.NextState = true, next
				walk(append(steps, st), next, pa*q)
			}
		}
	}
	for s, p := range (tiny{}).Initial() {
		walk(nil, s, p)
	}
	return eps
}

// marginals returns d_t for t < T under the policy, from the tiny MDP's
// start distribution.
func marginals(pol [][]float64, T int) [][2]float64 {
	d := make([][2]float64, T)
	d[0] = [2]float64{0.5, 0.5}
	for t := 1; t < T; t++ {
		for s := range 2 {
			for a := range 2 {
				for n := range 2 {
					d[t][n] += d[t-1][s] * pol[s][a] * tinyP[s][a][n]
				}
			}
		}
	}
	return d
}

// misEstimate is the finite-horizon MIS estimate
// (1/n) sum_i g0_i sum_t gamma^t w_t(s_t) beta_t r_t.
func misEstimate(d *dataset.Dataset, gamma float64, w []float64) float64 {
	est := 0.0
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		z, g, sum := 0.0, 1.0, 0.0
		for j := lo; j < hi; j++ {
			z += g
			sum += g * w[j] * math.Exp(d.LogRatio(j)) * d.Reward[j]
			g *= gamma
		}
		est += sum / z
	}
	return est / float64(d.NumEpisodes())
}

// TestMarginalExpectation fits the marginal ratios on expectation
// datasets of the tiny MDP, where every empirical frequency is the exact
// probability: w_t must be the exact d^pi_t / d^pi0_t, and the MIS
// estimate the exact value.
func TestMarginalExpectation(t *testing.T) {
	cases := []struct {
		lengths []int     // one expectation set per length
		N       []float64 // its multiplier
	}{
		{[]int{3}, []float64{2048}},
		{[]int{4}, []float64{32768}},
		// Unequal lengths: the 2-step set ends early and leaves the
		// last step to the 3-step set alone.
		{[]int{3, 2}, []float64{2048, 256}},
	}
	want := [2][][2]float64{marginals(tinyMu, 4), marginals(tinyPi, 4)}
	for i, c := range cases {
		var eps []dataset.Episode
		for k, L := range c.lengths {
			eps = expectationEpisodes(t, eps, L, c.N[k])
		}
		d, err := dataset.New(2, 2, eps)
		if err != nil {
			t.Fatal(err)
		}
		for _, gamma := range []float64{1, 0.9} {
			model, err := Marginal{}.Fit(d, gamma)
			if err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
			m := model.(*MarginalModel)
			if m.Horizon() != c.lengths[0] {
				t.Errorf("case %d: horizon %d, want %d", i, m.Horizon(), c.lengths[0])
			}
			for tt := range m.Horizon() {
				for s := range 2 {
					w := want[1][tt][s] / want[0][tt][s]
					if got := m.Ratio(tt, s); math.Abs(got-w) > 1e-12 {
						t.Errorf("case %d: w_%d(%d) = %.17g, want %.17g", i, tt, s, got, w)
					}
				}
			}
			if len(c.lengths) > 1 {
				continue // the value of a mixture of horizons is not one mdp.Value
			}
			w, err := m.StepRatios(d)
			if err != nil {
				t.Fatal(err)
			}
			got, exactV := misEstimate(d, gamma, w), mdp.Value(tiny{}, tabular(t, tinyPi), nil, c.lengths[0], gamma)
			if math.Abs(got-exactV) > 1e-12 {
				t.Errorf("case %d, gamma %v: MIS estimate %.17g, exact %.17g", i, gamma, got, exactV)
			}
		}
	}
}

func tabular(t testing.TB, rows [][]float64) *policy.Tabular {
	t.Helper()
	p, err := policy.NewTabular(rows)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMarginalTaxi: on sampled Taxi data (pi18 logs, pi19 target,
// T = 400, gamma = 1), the MIS estimate approaches mdp.Value as n grows;
// its root-mean-squared error over 8 seeds falls about as 1/sqrt(n).
func TestMarginalTaxi(t *testing.T) {
	if testing.Short() {
		t.Skip("samples 3.4 million steps")
	}
	m := taxi.New()
	target, behavior := taxiPolicies(t)
	const T, gamma, seeds = 400, 1.0, 8
	truth := mdp.Value(m, target, nil, T, gamma)
	ns := []int{50, 200, 800}
	rmse := make([]float64, len(ns))
	for k, n := range ns {
		for seed := range uint64(seeds) {
			d := sample(t, 100+seed, m, behavior, target, n, T)
			model, err := Marginal{}.Fit(d, gamma)
			if err != nil {
				t.Fatal(err)
			}
			w, err := model.StepRatios(d)
			if err != nil {
				t.Fatal(err)
			}
			e := misEstimate(d, gamma, w) - truth
			rmse[k] += e * e / seeds
		}
		rmse[k] = math.Sqrt(rmse[k])
		t.Logf("n = %d: RMSE %.4f (truth %.6f)", n, rmse[k], truth)
	}
	for k := 1; k < len(ns); k++ {
		if !(rmse[k] < 0.75*rmse[k-1]) {
			t.Errorf("n = %d: RMSE %.4f, not below 0.75 x %.4f (n = %d)", ns[k], rmse[k], rmse[k-1], ns[k-1])
		}
	}
	if rmse[len(ns)-1] > 0.02 {
		t.Errorf("n = 800: RMSE %.4f, want <= 0.02", rmse[len(ns)-1])
	}
}

// TestMarginalCrossUse reads the ratios on other data: steps beyond the
// fitted horizon and states never logged at their step get 0.
func TestMarginalCrossUse(t *testing.T) {
	st := func(s, a, next int) dataset.Step { return step(s, a, next, 0.5, 0.25) } // beta = 2
	d := mustNew(t, 3, 2, []dataset.Episode{
		{ID: "a", Steps: []dataset.Step{st(0, 0, 1), st(1, 0, 0)}},
		{ID: "b", Steps: []dataset.Step{st(1, 1, 1), st(1, 1, 0)}},
	})
	model, err := Marginal{}.Fit(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	// w_0 = 1 on {0, 1}; d^pi_1(1) = d^pi_0(0) * 2 + d^pi_0(1) * 2 = 2,
	// d^pi0_1(1) = 1: w_1(1) = 2.
	other := mustNew(t, 3, 2, []dataset.Episode{
		{ID: "c", Steps: []dataset.Step{st(2, 0, 1), st(1, 0, 0), st(0, 0, 0)}},
		{ID: "d", Steps: []dataset.Step{st(1, 0, 0), st(0, 0, 1)}},
	})
	w, err := model.StepRatios(other)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 2, 0, 1, 0}
	for j := range want {
		if w[j] != want[j] {
			t.Errorf("step %d: w = %v, want %v", j, w[j], want[j])
		}
	}
}

func TestMarginalErrors(t *testing.T) {
	good := mustNew(t, 2, 2, []dataset.Episode{{ID: "a", Steps: []dataset.Step{step(0, 0, 1, 0.5, 0.5)}}})
	badBehavior := mustNew(t, 2, 2, []dataset.Episode{{ID: "a", Steps: []dataset.Step{step(0, 0, 1, 0.5, 0.5), step(1, 0, 0, 0.5, 0.5)}}})
	badBehavior.LogBehavior[1] = math.Inf(-1)
	vec := &dataset.Dataset{StateDim: 1, IDs: []string{"x"}, Start: []int{0, 1}, Obs: []float64{0},
		Action: []int32{0}, NumActions: 1, Reward: []float64{0}, LogBehavior: []float64{0}, LogTarget: []float64{0},
		HasFinal: []bool{false}, FinalObs: []float64{0}}
	cases := []struct {
		d     *dataset.Dataset
		gamma float64
		want  string
	}{
		{good, 0, "discount"},
		{good, 1.01, "discount"},
		{vec, 1, "discrete states"},
		{badBehavior, 1, `episode "a" step 1`},
	}
	for i, c := range cases {
		if _, err := (Marginal{}).Fit(c.d, c.gamma); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: error %v, want one containing %q", i, err, c.want)
		}
	}
	// A target that never takes the logged action is fine: beta = 0.
	zero := mustNew(t, 2, 2, []dataset.Episode{{ID: "a", Steps: []dataset.Step{step(0, 0, 1, 0, 0.5), step(1, 0, 0, 0.5, 0.5)}}})
	m, err := Marginal{}.Fit(zero, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w := m.(*MarginalModel).Ratio(1, 1); w != 0 {
		t.Errorf("w_1(1) = %v after a step the target never takes, want 0", w)
	}
}

// marginalReference is the recursion of Marginal written as plainly as
// possible: a full H x nS table and every per-state array cleared at every
// step. TestMarginalForms holds both forms of MarginalModel to it, bit for
// bit.
func marginalReference(d *dataset.Dataset, mult []int) [][]float64 {
	nE, nS, H := d.NumEpisodes(), d.NumStates, d.MaxLen()
	weight := func(e int) float64 {
		if mult == nil {
			return 1
		}
		return float64(mult[e])
	}
	w := make([][]float64, H)
	for t := range w {
		w[t] = make([]float64, nS)
	}
	dpi, next, cnt := make([]float64, nS), make([]float64, nS), make([]float64, nS)
	total := 0.0
	for e := range nE {
		cnt[d.State[d.Start[e]]] += weight(e)
		total += weight(e)
	}
	for s, c := range cnt {
		if c > 0 {
			dpi[s], w[0][s] = c/total, 1
		}
	}
	for t := 0; t+1 < H; t++ {
		var alive []int // continuing to t+1
		for e := range nE {
			if d.Len(e) > t+1 {
				alive = append(alive, e)
			}
		}
		clear(cnt)
		for _, e := range alive {
			cnt[d.State[d.Start[e]+t]] += weight(e)
		}
		clear(next)
		for _, e := range alive {
			if weight(e) == 0 {
				continue
			}
			j := d.Start[e] + t
			s := d.State[j]
			next[d.State[j+1]] += weight(e) * dpi[s] * math.Exp(d.LogTarget[j]-d.LogBehavior[j]) / cnt[s]
		}
		clear(cnt)
		alive1 := 0.0
		for _, e := range alive {
			cnt[d.State[d.Start[e]+t+1]] += weight(e)
			alive1 += weight(e)
		}
		for s, c := range cnt {
			if c > 0 {
				w[t+1][s] = next[s] / (c / alive1)
			}
		}
		dpi, next = next, dpi
	}
	return w
}

// TestMarginalForms: the dense and the sparse form of MarginalModel give
// the reference recursion's ratios exactly, at every (t, s) and at every
// step of the fitted log and of another, on Taxi logs with episodes of
// unequal lengths, with and without bootstrap multiplicities (zeros
// included).
func TestMarginalForms(t *testing.T) {
	target, behavior := taxiPolicies(t)
	full := sample(t, 3, taxi.New(), behavior, target, 30, 60)
	// Cut the episodes to lengths 60, 59, ..., 31 (longest first, so the
	// horizon is 60 whatever the order), keeping the next states.
	var eps []dataset.Episode
	for e, ep := range full.Episodes() {
		ep.Steps = ep.Steps[:60-e]
		eps = append(eps, ep)
	}
	d := mustNew(t, full.NumStates, full.NumActions, eps)
	other := sample(t, 4, taxi.New(), behavior, target, 5, 70) // longer than the horizon
	mult := make([]int, d.NumEpisodes())
	for e := range mult {
		mult[e] = (e * 7) % 4 // 0, 3, 2, 1, ...
	}
	for _, mu := range [][]int{nil, mult} {
		ref := marginalReference(d, mu)
		weight := func(e int) float64 {
			if mu == nil {
				return 1
			}
			return float64(mu[e])
		}
		for _, sparse := range []bool{false, true} {
			m := fitMarginal(d, weight, sparse, loggedPairs(d))
			if (m.w == nil) != sparse || m.Horizon() != 60 {
				t.Fatalf("sparse %v: dense table %v, horizon %d", sparse, m.w != nil, m.Horizon())
			}
			for tt := -1; tt <= 60; tt++ {
				for s := -1; s <= d.NumStates; s++ {
					want := 0.0
					if tt >= 0 && tt < 60 && s >= 0 && s < d.NumStates {
						want = ref[tt][s]
					}
					if got := m.Ratio(tt, s); got != want {
						t.Fatalf("mult %v, sparse %v: w_%d(%d) = %v, want %v", mu != nil, sparse, tt, s, got, want)
					}
				}
			}
			for _, dd := range []*dataset.Dataset{d, other} {
				w, err := m.StepRatios(dd)
				if err != nil {
					t.Fatal(err)
				}
				for e := range dd.NumEpisodes() {
					lo, hi := dd.Span(e)
					for j := lo; j < hi; j++ {
						want := 0.0
						if s := int(dd.State[j]); j-lo < 60 && s < d.NumStates {
							want = ref[j-lo][s]
						}
						if w[j] != want {
							t.Fatalf("mult %v, sparse %v: step %d of episode %d: %v, want %v", mu != nil, sparse, j-lo, e, w[j], want)
						}
					}
				}
			}
		}
	}
	// loggedPairs counts the distinct (t, s), and FitMult takes the
	// smaller form: sparse for this log, dense for 2 states.
	pairs := map[[2]int]bool{}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			pairs[[2]int{j - lo, int(d.State[j])}] = true
		}
	}
	if got := loggedPairs(d); got != len(pairs) {
		t.Errorf("loggedPairs %d, want %d", got, len(pairs))
	}
	small := mustNew(t, 2, 2, expectationEpisodes(t, nil, 3, 2048))
	for _, c := range []struct {
		d      *dataset.Dataset
		sparse bool
	}{{d, true}, {small, false}} {
		m, err := Marginal{}.FitMult(c.d, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if (m.w == nil) != c.sparse {
			t.Errorf("%d states, %d steps: sparse %v, want %v", c.d.NumStates, c.d.NumSteps(), m.w == nil, c.sparse)
		}
	}
}
