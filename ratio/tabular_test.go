package ratio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/ring"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// population returns the Counts of infinitely many transitions logged by
// pi0 in m (see Counts): the edges weigh d_pi0(s) pi0(a|s) P(s'|s,a) (times
// gamma if gamma < 1), the dummy transitions (1-gamma) d_0, and the
// normalisation is d_pi0. With them the loss vanishes exactly at the true
// ratio (Theorems 1 and 3), so the solver must return it.
func population(t *testing.T, m mdp.Finite, pi, pi0 policy.Discrete, gamma float64) *Counts {
	t.Helper()
	d0, err := mdp.Visitation(m, pi0, gamma)
	if err != nil {
		t.Fatal(err)
	}
	c := &Counts{NumStates: m.NumStates(), Norm: d0}
	scale := 1.0
	if gamma < 1 {
		scale = gamma
		c.Restart = make([]float64, m.NumStates())
		for s, p := range m.Initial() {
			c.Restart[s] = (1 - gamma) * p
		}
	}
	for s, ds := range d0 {
		if ds == 0 {
			continue
		}
		for a := 0; a < m.NumActions(); a++ {
			for _, o := range m.Outcomes(s, a) {
				c.Edges = append(c.Edges, Edge{
					From: s, To: o.Next,
					Weight:      scale * ds * pi0.Prob(s, a) * o.Prob,
					RatioWeight: scale * ds * pi.Prob(s, a) * o.Prob,
				})
			}
		}
	}
	return c
}

func taxiPolicies(t testing.TB) (target, behavior *policy.Tabular) {
	t.Helper()
	pi, err := taxi.Policy(taxi.DefaultTarget)
	if err != nil {
		t.Fatal(err)
	}
	pi0, err := taxi.Policy(taxi.DefaultBehavior)
	if err != nil {
		t.Fatal(err)
	}
	return pi, pi0
}

func sample(t testing.TB, seed uint64, m mdp.Finite, behavior, target policy.Discrete, n, T int) *dataset.Dataset {
	t.Helper()
	d, err := rollout.Sample(rand.New(rand.NewPCG(seed, 0)), sim.NewSampler(m), behavior, target, n, T)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// mustNew builds a dataset from episodes in row form (dataset.New).
func mustNew(t testing.TB, numStates, numActions int, episodes []dataset.Episode) *dataset.Dataset {
	t.Helper()
	d, err := dataset.New(numStates, numActions, episodes)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// fitTabular fits w with l and returns the model as a *TabularModel.
func fitTabular(l Tabular, d *dataset.Dataset, gamma float64) (*TabularModel, error) {
	m, err := l.Fit(d, gamma)
	if err != nil {
		return nil, err
	}
	return m.(*TabularModel), nil
}

// appendEpisodes appends the episodes of src to d column by column
// (discrete states and actions).
func appendEpisodes(d, src *dataset.Dataset) {
	n := d.NumSteps()
	d.IDs = append(d.IDs, src.IDs...)
	for _, s := range src.Start[1:] {
		d.Start = append(d.Start, n+s)
	}
	d.State = append(d.State, src.State...)
	d.Action = append(d.Action, src.Action...)
	d.Reward = append(d.Reward, src.Reward...)
	d.LogBehavior = append(d.LogBehavior, src.LogBehavior...)
	d.LogTarget = append(d.LogTarget, src.LogTarget...)
	d.HasFinal = append(d.HasFinal, src.HasFinal...)
	d.FinalState = append(d.FinalState, src.FinalState...)
}

func maxAbsDiff(a, b []float64) float64 {
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// step is a discrete step with the given log-probabilities.
func step(s, a, next int, pTarget, pBehavior float64) dataset.Step {
	return dataset.Step{State: s, Action: a, HasNext: true, NextState: next,
		LogTarget: math.Log(pTarget), LogBehavior: math.Log(pBehavior)}
}

func TestAggregate(t *testing.T) {
	// Two episodes on 3 states. Episode "a": 0 -> 1 (beta 2) -> 1 (beta
	// 1/2) -> 2 (beta 1, next state unknown). Episode "b": 1 -> 0 (beta 3).
	//
	// Step 1 of "a" logs the next state 1, but step 2 is in state 2. A
	// columnar dataset holds such a step only at a block end of a
	// moving-block resample, where the logged next state is kept
	// (Dataset.Blocks), so "a" is built as the blocks {0, 1} and {3} of an
	// episode whose step 2 (1 -> 2) is dropped.
	a := mustNew(t, 3, 2, []dataset.Episode{{ID: "a", Steps: []dataset.Step{
		step(0, 0, 1, 0.8, 0.4),
		step(1, 1, 1, 0.25, 0.5),
		step(1, 0, 2, 0.5, 0.5), // dropped
		{State: 2, Action: 0, LogTarget: math.Log(0.5), LogBehavior: math.Log(0.5)},
	}}})
	d := a.Blocks([]int{0, 3}, []int{2, 1})
	appendEpisodes(d, mustNew(t, 3, 2, []dataset.Episode{{ID: "b", Steps: []dataset.Step{step(1, 0, 0, 0.9, 0.3)}}}))
	// And an episode "empty" without steps, which New refuses and
	// Aggregate skips.
	d.IDs = append(d.IDs, "empty")
	d.Start = append(d.Start, d.NumSteps())
	d.HasFinal = append(d.HasFinal, false)
	d.FinalState = append(d.FinalState, -1)
	if next, ok := d.NextState(0, 1); d.NumEpisodes() != 3 || d.State[2] != 2 || next != 1 || !ok {
		t.Fatalf("test data: %d episodes, states %v, next state of step 1: %d (%v)", d.NumEpisodes(), d.State, next, ok)
	}
	for i, tc := range []struct {
		gamma   float64
		edges   []Edge
		restart []float64
		norm    []float64
	}{
		{
			gamma: 1,
			edges: []Edge{
				{From: 0, To: 1, Weight: 1, RatioWeight: 2},
				{From: 1, To: 1, Weight: 1, RatioWeight: 0.5},
				{From: 1, To: 0, Weight: 1, RatioWeight: 3},
			},
			norm: []float64{1, 2, 1},
		},
		{
			// Step t weighs gamma^(t+1), the dummy transitions 1, the
			// normalisation gamma^t.
			gamma: 0.5,
			edges: []Edge{
				{From: 0, To: 1, Weight: 0.5, RatioWeight: 1},
				{From: 1, To: 1, Weight: 0.25, RatioWeight: 0.125},
				{From: 1, To: 0, Weight: 0.5, RatioWeight: 1.5},
			},
			restart: []float64{1, 1, 0},
			norm:    []float64{1, 1.5, 0.25},
		},
	} {
		c, err := Aggregate(d, tc.gamma)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if c.NumStates != 3 || len(c.Edges) != len(tc.edges) {
			t.Fatalf("case %d: %d states, edges %v, want 3 and %v", i, c.NumStates, c.Edges, tc.edges)
		}
		for k, e := range c.Edges {
			w := tc.edges[k]
			if e.From != w.From || e.To != w.To || !scalar.EqualWithinAbs(e.Weight, w.Weight, 1e-15) || !scalar.EqualWithinAbs(e.RatioWeight, w.RatioWeight, 1e-15) {
				t.Errorf("case %d: edge %d = %+v, want %+v", i, k, e, w)
			}
		}
		if fmt.Sprint(c.Restart) != fmt.Sprint(tc.restart) || (c.Restart == nil) != (tc.restart == nil) {
			t.Errorf("case %d: restart %v, want %v", i, c.Restart, tc.restart)
		}
		if fmt.Sprint(c.Norm) != fmt.Sprint(tc.norm) {
			t.Errorf("case %d: norm %v, want %v", i, c.Norm, tc.norm)
		}
	}
}

// TestSolveSmall checks solutions that can be worked out by hand.
func TestSolveSmall(t *testing.T) {
	for i, tc := range []struct {
		c    Counts
		w    []float64
		loss float64
	}{
		{
			// 0 -> 1 with beta 2, 1 -> 0 with beta 1/2: the balance
			// 2 w0 = w1 and (w0 + w1)/2 = 1 give w = (2/3, 4/3), loss 0.
			// State 2 never occurs and gets 0.
			c: Counts{NumStates: 3,
				Edges: []Edge{{From: 0, To: 1, Weight: 1, RatioWeight: 2}, {From: 1, To: 0, Weight: 1, RatioWeight: 0.5}},
				Norm:  []float64{1, 1, 0}},
			w: []float64{2.0 / 3, 4.0 / 3, 0},
		},
		{
			// The same chain with repeated edges in any order.
			c: Counts{NumStates: 3,
				Edges: []Edge{{From: 1, To: 0, Weight: 0.5, RatioWeight: 0.25}, {From: 0, To: 1, Weight: 1, RatioWeight: 2}, {From: 1, To: 0, Weight: 0.5, RatioWeight: 0.25}},
				Norm:  []float64{3, 3, 0}},
			w: []float64{2.0 / 3, 4.0 / 3, 0},
		},
		{
			// One state with a self-loop of ratio 1/2 and a restart of
			// weight 1 (a discounted problem), total weight 2: A = (0.5 -
			// 2)/2 = -3/4 and b = -1/2. The normalisation alone fixes
			// w = 1, and the loss is (-3/4 + 1/2)^2 = 1/16.
			c: Counts{NumStates: 1,
				Edges:   []Edge{{From: 0, To: 0, Weight: 1, RatioWeight: 0.5}},
				Restart: []float64{1},
				Norm:    []float64{1}},
			w:    []float64{1},
			loss: 1.0 / 16,
		},
		{
			// 0 -> 1 (beta 1) and 1 -> 1 (beta 2), total weight 2. Column 0
			// is (0, 1/2) (nothing enters state 0); column 1 is
			// (0, 2/2 - 2/2) = 0, so state 1 is not an unknown (w = 0),
			// w0 = 1/c0 = 2 and the loss is (1/2 * 2)^2 = 1.
			c: Counts{NumStates: 2,
				Edges: []Edge{{From: 0, To: 1, Weight: 1, RatioWeight: 1}, {From: 1, To: 1, Weight: 1, RatioWeight: 2}},
				Norm:  []float64{1, 1}},
			w:    []float64{2, 0},
			loss: 1,
		},
	} {
		m, err := Tabular{}.Solve(&tc.c)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if d := maxAbsDiff(m.W, tc.w); d > 1e-12 {
			t.Errorf("case %d: w = %v, want %v", i, m.W, tc.w)
		}
		if !scalar.EqualWithinAbs(m.Loss, tc.loss, 1e-14) {
			t.Errorf("case %d: loss %v, want %v", i, m.Loss, tc.loss)
		}
	}
}

// TestPopulationRing: on the ring every policy that picks R with the same
// probability in every state has the uniform stationary (and, from the
// uniform start, discounted) distribution, so w = 1.
func TestPopulationRing(t *testing.T) {
	for i, tc := range []struct {
		n        int
		pR, pR0  float64
		gamma    float64
		wantIter int // at most
	}{
		{5, 0.7, 0.3, 1, 10},
		{5, 0.7, 0.3, 0.9, 10},
		{11, 0.9, 0.2, 1, 30},
		{11, 0.1, 0.6, 0.5, 30},
	} {
		m, err := ring.New(tc.n)
		if err != nil {
			t.Fatal(err)
		}
		c := population(t, m, ring.Policy(tc.n, tc.pR), ring.Policy(tc.n, tc.pR0), tc.gamma)
		mod, err := Tabular{}.Solve(c)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		for s, w := range mod.W {
			if math.Abs(w-1) > 1e-9 {
				t.Errorf("case %d: w(%d) = %v, want 1", i, s, w)
			}
		}
		if mod.Loss > 1e-20 || mod.Negative != 0 || mod.Unknowns != tc.n || mod.Iterations > tc.wantIter {
			t.Errorf("case %d: loss %v, %d negative, %d unknowns, %d iterations", i, mod.Loss, mod.Negative, mod.Unknowns, mod.Iterations)
		}
	}
}

// taxiVisitation returns mdp.Visitation of pi (target) and pi0
// (behavior) on Taxi, cached: each is a dense LU of the 2000 states.
func taxiVisitation(t *testing.T, gamma float64) (dPi, dPi0 []float64) {
	t.Helper()
	visitMu.Lock()
	defer visitMu.Unlock()
	if v, ok := visitCache[gamma]; ok {
		return v[0], v[1]
	}
	m := taxi.New()
	pi, pi0 := taxiPolicies(t)
	dPi, err := mdp.Visitation(m, pi, gamma)
	if err != nil {
		t.Fatal(err)
	}
	dPi0, err = mdp.Visitation(m, pi0, gamma)
	if err != nil {
		t.Fatal(err)
	}
	visitCache[gamma] = [2][]float64{dPi, dPi0}
	return dPi, dPi0
}

var (
	visitMu    sync.Mutex
	visitCache = map[float64][2][]float64{}
)

// TestPopulationTaxi: with population weights the solver returns the true
// ratio d_pi/d_pi0 on Taxi (pi19 target, pi18 behavior), as mdp.Ratio
// defines it.
func TestPopulationTaxi(t *testing.T) {
	m := taxi.New()
	pi, pi0 := taxiPolicies(t)
	for _, gamma := range []float64{1, 0.99} {
		dPi, dPi0 := taxiVisitation(t, gamma)
		want := make([]float64, len(dPi)) // mdp.Ratio, from the cached visitations
		for s := range want {
			if dPi0[s] > 0 {
				want[s] = dPi[s] / dPi0[s]
			}
		}
		c := population(t, m, pi, pi0, gamma)
		mod, err := Tabular{}.Solve(c)
		if err != nil {
			t.Fatalf("gamma %v: %v", gamma, err)
		}
		diff := maxAbsDiff(mod.W, want)
		t.Logf("gamma %v: %d unknowns, %d iterations, max |w - w*| = %.2g, max w* = %.3g, loss %.2g",
			gamma, mod.Unknowns, mod.Iterations, diff, maxOf(want), mod.Loss)
		if diff > 1e-9 {
			t.Errorf("gamma %v: max |w - mdp.Ratio| = %v, want <= 1e-9", gamma, diff)
		}
		if mod.Negative != 0 || mod.Loss > 1e-24 {
			t.Errorf("gamma %v: %d negative entries, loss %v", gamma, mod.Negative, mod.Loss)
		}
		if tv := TV(mod.W, dPi0, dPi); tv > 1e-10 {
			t.Errorf("gamma %v: TV %v, want ~0", gamma, tv)
		}
	}
}

// TestSampledTaxi: on logged Taxi data (T = 400 steps, pi18 logging, pi19
// target) the estimate w d_pi0 approaches d_pi in total variation as the
// number of episodes grows. The episodes are nested (the first 50 of the
// 200, the first 200 of the 800).
func TestSampledTaxi(t *testing.T) {
	m := taxi.New()
	pi, pi0 := taxiPolicies(t)
	d := sample(t, 1, m, pi0, pi, 800, 400)
	for _, gamma := range []float64{1, 0.99} {
		dPi, dPi0 := taxiVisitation(t, gamma)
		prev := math.Inf(1)
		for _, n := range []int{50, 200, 800} {
			idx := make([]int, n)
			for i := range idx {
				idx[i] = i
			}
			mod, err := fitTabular(Tabular{}, d.Subset(idx), gamma)
			if err != nil {
				t.Fatalf("gamma %v n %d: %v", gamma, n, err)
			}
			tv := TV(mod.W, dPi0, dPi)
			t.Logf("gamma %v n %d: TV %.4f, %d unknowns, %d iterations, %d negative, loss %.3g",
				gamma, n, tv, mod.Unknowns, mod.Iterations, mod.Negative, mod.Loss)
			if !(tv < prev) {
				t.Errorf("gamma %v n %d: TV %v, not below %v", gamma, n, tv, prev)
			}
			prev = tv
		}
		if prev > 0.01 {
			t.Errorf("gamma %v: TV %v at n = 800, want < 0.01", gamma, prev)
		}
	}
}

// TestSampledRing: on the ring the true ratio is 1 (see
// TestPopulationRing); with logged data max |w - 1| shrinks as the number
// of episodes grows.
func TestSampledRing(t *testing.T) {
	const n, T = 5, 50
	m, err := ring.New(n)
	if err != nil {
		t.Fatal(err)
	}
	d := sample(t, 2, m, ring.Policy(n, 0.3), ring.Policy(n, 0.7), 1000, T)
	for _, gamma := range []float64{1, 0.9} {
		prev := math.Inf(1)
		for _, k := range []int{10, 100, 1000} {
			idx := make([]int, k)
			for i := range idx {
				idx[i] = i
			}
			mod, err := fitTabular(Tabular{}, d.Subset(idx), gamma)
			if err != nil {
				t.Fatalf("gamma %v, %d episodes: %v", gamma, k, err)
			}
			dev := 0.0
			for _, w := range mod.W {
				dev = math.Max(dev, math.Abs(w-1))
			}
			t.Logf("gamma %v, %d episodes: max |w - 1| = %.4f", gamma, k, dev)
			if !(dev < prev) {
				t.Errorf("gamma %v, %d episodes: max |w - 1| = %v, not below %v", gamma, k, dev, prev)
			}
			prev = dev
		}
		if prev > 0.05 {
			t.Errorf("gamma %v: max |w - 1| = %v with 1000 episodes, want < 0.05", gamma, prev)
		}
	}
}

func maxOf(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	return m
}

// denseSolve is the reference solve, independent of system: it forms A and
// b densely from c (rows and columns by state id), drops the all-zero
// columns and the states held at zero (fixed, may be nil), and solves the
// KKT system of min ||A w - b||^2 + lambda ||w||^2 s.t. c^T w = 1,
//
//	[ A^T A + lambda I   c ] [ w  ]   [ A^T b ]
//	[ c^T                0 ] [ mu ] = [ 1     ],
//
// by LU with partial pivoting (gonum mat), after a symmetric Jacobi
// scaling. lambda is ridge times the mean of diag(A^T A) over the kept
// columns, as in Tabular. It returns w by state and the multipliers
// g(s) - mu c(s) of every column (g the half-gradient), which the
// optimality of a non-negative solution needs to be >= 0 where w = 0.
func denseSolve(t *testing.T, c *Counts, ridge float64, fixed []bool) (w, nu []float64) {
	t.Helper()
	nS := c.NumStates
	total, normSum := 0.0, 0.0
	A := mat.NewDense(nS, nS, nil)
	b := make([]float64, nS)
	for _, e := range c.Edges {
		total += e.Weight
		A.Set(e.To, e.From, A.At(e.To, e.From)+e.RatioWeight)
		A.Set(e.To, e.To, A.At(e.To, e.To)-e.Weight)
	}
	for s := 0; s < nS; s++ {
		normSum += c.Norm[s]
		if c.Restart != nil {
			total += c.Restart[s]
			A.Set(s, s, A.At(s, s)-c.Restart[s])
			b[s] = -c.Restart[s]
		}
	}
	A.Scale(1/total, A)
	for s := range b {
		b[s] /= total
	}
	var keep []int
	for s := 0; s < nS; s++ {
		if mat.Norm(A.ColView(s), 2) > 0 && (fixed == nil || !fixed[s]) {
			keep = append(keep, s)
		}
	}
	k := len(keep)
	Ak := mat.NewDense(nS, k, nil)
	for j, s := range keep {
		for i := 0; i < nS; i++ {
			Ak.Set(i, j, A.At(i, s))
		}
	}
	var AtA mat.SymDense
	AtA.SymOuterK(1, Ak.T())
	lambda := 0.0
	for j := 0; j < k; j++ {
		lambda += AtA.At(j, j)
	}
	lambda *= ridge / float64(k)
	scale := make([]float64, k+1) // Jacobi scaling of the KKT matrix
	for j := 0; j < k; j++ {
		scale[j] = 1 / math.Sqrt(AtA.At(j, j)+lambda)
	}
	scale[k] = 1
	K := mat.NewDense(k+1, k+1, nil)
	rhs := mat.NewVecDense(k+1, nil)
	bv := mat.NewVecDense(nS, b)
	var atb mat.VecDense
	atb.MulVec(Ak.T(), bv)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			v := AtA.At(i, j)
			if i == j {
				v += lambda
			}
			K.Set(i, j, scale[i]*v*scale[j])
		}
		ci := c.Norm[keep[i]] / normSum
		K.Set(i, k, scale[i]*ci)
		K.Set(k, i, scale[i]*ci)
		rhs.SetVec(i, scale[i]*atb.AtVec(i))
	}
	rhs.SetVec(k, 1)
	var x mat.VecDense
	if err := x.SolveVec(K, rhs); err != nil {
		t.Fatalf("dense KKT solve: %v", err)
	}
	w = make([]float64, nS)
	for j, s := range keep {
		w[s] = x.AtVec(j) * scale[j]
	}
	// Multipliers: g = A^T (A w - b) + lambda w; on the kept columns
	// g = mu c with mu = x[k]; nu = g - mu c.
	mu := x.AtVec(k)
	var r, g mat.VecDense
	r.MulVec(A, mat.NewVecDense(nS, w))
	r.SubVec(&r, bv)
	g.MulVec(A.T(), &r)
	nu = make([]float64, nS)
	for s := 0; s < nS; s++ {
		nu[s] = g.AtVec(s) + lambda*w[s] - mu*c.Norm[s]/normSum
	}
	return w, nu
}

// TestDenseAgreement: the conjugate-gradient solve agrees with the dense
// reference to 1e-8, with and without a ridge, on data with and without
// negative entries.
func TestDenseAgreement(t *testing.T) {
	m := taxi.New()
	pi, pi0 := taxiPolicies(t)
	taxiData := sample(t, 3, m, pi0, pi, 50, 400)
	rm, err := ring.New(7)
	if err != nil {
		t.Fatal(err)
	}
	ringData := sample(t, 4, rm, ring.Policy(7, 0.25), ring.Policy(7, 0.8), 20, 30)
	for i, tc := range []struct {
		name  string
		d     *dataset.Dataset
		gamma float64
		ridge float64
	}{
		{"ring", ringData, 1, 0},
		{"ring", ringData, 0.8, 1e-3},
		{"taxi", taxiData, 1, 0},
		{"taxi", taxiData, 0.99, 0},
		{"taxi", taxiData, 0.99, 1e-6},
	} {
		c, err := Aggregate(tc.d, tc.gamma)
		if err != nil {
			t.Fatal(err)
		}
		mod, err := Tabular{Ridge: tc.ridge}.Solve(c)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		want, _ := denseSolve(t, c, tc.ridge, nil)
		diff := maxAbsDiff(mod.W, want)
		t.Logf("case %d (%s, gamma %v, ridge %v): %d unknowns, %d iterations, %d negative, max |w_cg - w_dense| = %.2g",
			i, tc.name, tc.gamma, tc.ridge, mod.Unknowns, mod.Iterations, mod.Negative, diff)
		if diff > 1e-8 {
			t.Errorf("case %d: max |w_cg - w_dense| = %v, want <= 1e-8", i, diff)
		}
	}
}

// TestNonNegative checks the KKT conditions of the non-negative solve on
// Taxi data whose exact minimiser has negative entries: w >= 0, w equal to
// the dense reference solved on its own support, and the multipliers of
// the states held at zero non-negative.
func TestNonNegative(t *testing.T) {
	m := taxi.New()
	pi, pi0 := taxiPolicies(t)
	for i, tc := range []struct {
		seed  uint64
		gamma float64
	}{
		{3, 1},
		{1, 0.99},
	} {
		d := sample(t, tc.seed, m, pi0, pi, 50, 400)
		c, err := Aggregate(d, tc.gamma)
		if err != nil {
			t.Fatal(err)
		}
		free, err := Tabular{}.Solve(c)
		if err != nil {
			t.Fatal(err)
		}
		if free.Negative == 0 {
			t.Fatalf("case %d: the exact minimiser has no negative entry: the test data must change", i)
		}
		mod, err := Tabular{NonNegative: true}.Solve(c)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		fixed := make([]bool, len(mod.W))
		zeros := 0
		for s, w := range mod.W {
			if w < 0 {
				t.Fatalf("case %d: w(%d) = %v < 0", i, s, w)
			}
			if w == 0 {
				fixed[s] = true
				zeros++
			}
		}
		held := zeros - (len(mod.W) - mod.Unknowns) // unknowns held at 0
		t.Logf("case %d: %d negative entries without the constraint; with it %d solves, %d iterations, %d unknowns of %d held at 0, loss %.6g vs %.6g",
			i, free.Negative, mod.Solves, mod.Iterations, held, mod.Unknowns, mod.Loss, free.Loss)
		if mod.Negative != 0 || held < 1 || mod.Loss < free.Loss {
			t.Errorf("case %d: %d negative, %d held at 0, loss %v (unconstrained %v)", i, mod.Negative, held, mod.Loss, free.Loss)
		}
		want, nu := denseSolve(t, c, 0, fixed)
		if diff := maxAbsDiff(mod.W, want); diff > 1e-8 {
			t.Errorf("case %d: max |w - dense solve on the support| = %v, want <= 1e-8", i, diff)
		}
		// The multipliers of the held states must be >= 0. They are small
		// differences of larger terms, so the check allows 1e-4 of their
		// largest magnitude, and the most negative one is checked again
		// exactly: releasing its state must not make it positive.
		scale, worst := 0.0, -1
		for s, v := range nu {
			scale = math.Max(scale, math.Abs(v))
			if fixed[s] && (worst < 0 || v < nu[worst]) && mod.W[s] == 0 && want[s] == 0 && free.W[s] != 0 {
				worst = s
			}
		}
		for s, v := range nu {
			if fixed[s] && v < -1e-4*scale {
				t.Errorf("case %d: state %d held at 0 has multiplier %v < 0 (scale %v)", i, s, v, scale)
			}
		}
		if worst < 0 {
			continue // reported above: no unknown held at 0
		}
		fixed[worst] = false
		if w, _ := denseSolve(t, c, 0, fixed); w[worst] > 1e-9 {
			t.Errorf("case %d: releasing state %d (multiplier %v) gives it w = %v > 0", i, worst, nu[worst], w[worst])
		}
	}
}

// TestMinimumNorm: two closed 2-cycles, each exactly balanced, leave the
// loss flat along w = (a, a, b, b). The normalisation (2a + 4b)/6 = 1 leaves
// one free direction; the solve returns the least-norm point (columns of
// equal norm), a = 3/5 and b = 6/5. (A ridge would pick a nearby point:
// it trades loss for norm.)
func TestMinimumNorm(t *testing.T) {
	c := &Counts{NumStates: 4,
		Edges: []Edge{
			{From: 0, To: 1, Weight: 1, RatioWeight: 1}, {From: 1, To: 0, Weight: 1, RatioWeight: 1},
			{From: 2, To: 3, Weight: 1, RatioWeight: 1}, {From: 3, To: 2, Weight: 1, RatioWeight: 1},
		},
		Norm: []float64{1, 1, 1, 3}}
	want := []float64{0.6, 0.6, 1.2, 1.2}
	mod, err := Tabular{}.Solve(c)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(mod.W, want); d > 1e-12 || mod.Loss > 1e-30 {
		t.Errorf("w = %v, loss %v, want %v, 0", mod.W, mod.Loss, want)
	}
}

func TestTV(t *testing.T) {
	for i, tc := range []struct {
		w, dPi0, dPi []float64
		want         float64
	}{
		{[]float64{1, 1}, []float64{0.5, 0.5}, []float64{0.5, 0.5}, 0},
		{[]float64{2, 0}, []float64{0.5, 0.5}, []float64{0.25, 0.75}, 0.75},
		{[]float64{0.5, 1.5, 1}, []float64{0.2, 0.4, 0.4}, []float64{0.2, 0.4, 0.4}, 0.15},
	} {
		if got := TV(tc.w, tc.dPi0, tc.dPi); !scalar.EqualWithinAbs(got, tc.want, 1e-15) {
			t.Errorf("case %d: TV = %v, want %v", i, got, tc.want)
		}
	}
}

func TestErrors(t *testing.T) {
	good := func() *dataset.Dataset {
		return mustNew(t, 2, 2, []dataset.Episode{
			{ID: "e", Steps: []dataset.Step{step(0, 0, 1, 0.5, 0.5), step(1, 1, 0, 0.5, 0.5)}},
		})
	}
	for i, tc := range []struct {
		edit  func(d *dataset.Dataset)
		gamma float64
		want  string
	}{
		{func(*dataset.Dataset) {}, 0, "discount"},
		{func(*dataset.Dataset) {}, 1.5, "discount"},
		{func(*dataset.Dataset) {}, math.NaN(), "discount"},
		{func(d *dataset.Dataset) { d.StateDim = 3 }, 1, "discrete"},
		{func(d *dataset.Dataset) { d.NumStates = 0 }, 1, "discrete"},
		// A bad state at step 1 with step 0's logged next state kept (1):
		// the episode is cut into the blocks {0} and {1}, so that the next
		// state of step 0 is not read from step 1 (see Dataset.Blocks).
		{func(d *dataset.Dataset) { *d = *d.Blocks([]int{0, 1}, []int{1, 1}); d.State[1] = 2 }, 1, `episode "e" step 1: state 2`},
		{func(d *dataset.Dataset) { d.State[0] = -1 }, 0.5, `episode "e" step 0: state -1`},
		// The next state of step 0 is the state of step 1.
		{func(d *dataset.Dataset) { d.State[1] = 5 }, 1, "next state 5"},
		{func(d *dataset.Dataset) { d.FinalState[0] = 5 }, 1, "next state 5"},
		{func(d *dataset.Dataset) { d.LogBehavior[0] = math.Inf(-1) }, 1, "no finite ratio"},
		{func(d *dataset.Dataset) { d.LogTarget[1] = math.NaN() }, 1, "no finite ratio"},
		{func(d *dataset.Dataset) { d.LogBehavior[1] = -800 }, 1, "no finite ratio"},
	} {
		d := good()
		tc.edit(d)
		_, err := Tabular{}.Fit(d, tc.gamma)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("dataset case %d: error %v, want one containing %q", i, err, tc.want)
		}
	}
	if _, err := (Tabular{}).Fit(good(), 1); err != nil {
		t.Fatalf("good dataset: %v", err)
	}

	goodCounts := func() *Counts {
		return &Counts{NumStates: 2,
			Edges: []Edge{{From: 0, To: 1, Weight: 1, RatioWeight: 2}, {From: 1, To: 0, Weight: 1, RatioWeight: 0.5}},
			Norm:  []float64{1, 1}}
	}
	for i, tc := range []struct {
		l    Tabular
		edit func(c *Counts)
		want string
	}{
		{Tabular{Ridge: -1}, func(*Counts) {}, "ridge"},
		{Tabular{Ridge: math.Inf(1)}, func(*Counts) {}, "ridge"},
		{Tabular{Tol: math.NaN()}, func(*Counts) {}, "tolerance"},
		{Tabular{MaxIter: -1}, func(*Counts) {}, "iteration caps"},
		{Tabular{}, func(c *Counts) { c.NumStates = 0 }, "0 states"},
		{Tabular{}, func(c *Counts) { c.Norm = c.Norm[:1] }, "normalisation weights for 1 states"},
		{Tabular{}, func(c *Counts) { c.Restart = []float64{1} }, "restart weights for 1 states"},
		{Tabular{}, func(c *Counts) { c.Edges[1].To = 2 }, "edge 1 from 1 to 2"},
		{Tabular{}, func(c *Counts) { c.Edges[0].Weight = -1 }, "edge 0 from 0 to 1: weights -1"},
		{Tabular{}, func(c *Counts) { c.Edges[0].RatioWeight = math.NaN() }, "weights 1, NaN"},
		{Tabular{}, func(c *Counts) { c.Norm[1] = math.Inf(1) }, "state 1: normalisation weight +Inf"},
		{Tabular{}, func(c *Counts) { c.Restart = []float64{0, -2} }, "state 1: restart weight -2"},
		{Tabular{}, func(c *Counts) { c.Edges[0].Weight, c.Edges[1].Weight = 0, 0 }, "total transition weight 0"},
		{Tabular{}, func(c *Counts) { c.Norm = []float64{0, 0} }, "normalisation weights sum to 0"},
		// A self-loop with ratio 1 is a zero column: nothing is left.
		{Tabular{}, func(c *Counts) { c.Edges = []Edge{{From: 0, To: 0, Weight: 1, RatioWeight: 1}} }, "no transition constrains"},
		// Only state 0 is logged, and its column is zero.
		{Tabular{}, func(c *Counts) {
			c.NumStates = 3
			c.Edges = []Edge{{From: 0, To: 0, Weight: 1, RatioWeight: 1}, {From: 1, To: 2, Weight: 1, RatioWeight: 1}}
			c.Norm = []float64{1, 0, 0}
		}, "normalisation cannot be met"},
	} {
		c := goodCounts()
		tc.edit(c)
		_, err := tc.l.Solve(c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("counts case %d: error %v, want one containing %q", i, err, tc.want)
		}
	}
}

// TestNoConvergence: a solve stopped by MaxIter is an error, never a
// silent approximation.
func TestNoConvergence(t *testing.T) {
	m := taxi.New()
	pi, pi0 := taxiPolicies(t)
	d := sample(t, 5, m, pi0, pi, 20, 100)
	for _, l := range []Tabular{{MaxIter: 5}, {MaxIter: 5, NonNegative: true}} {
		_, err := l.Fit(d, 1)
		if err == nil || !strings.Contains(err.Error(), "did not converge") {
			t.Errorf("%+v: error %v, want non-convergence", l, err)
		}
	}
	// The same data converges without the cap.
	if _, err := (Tabular{}).Fit(d, 1); err != nil {
		t.Error(err)
	}
}

// TestGroupedOnce: Solve sums the edges by pair only when they are not
// already grouped by From with each pair once.
func TestGroupedOnce(t *testing.T) {
	e := func(from, to int) Edge { return Edge{From: from, To: to, Weight: 1} }
	cases := []struct {
		edges []Edge
		want  bool
	}{
		{nil, true},
		{[]Edge{e(0, 1), e(0, 0), e(1, 1), e(1, 0), e(2, 2)}, true}, // a To may recur under another From
		{[]Edge{e(0, 1), e(0, 2), e(0, 1)}, false},                  // a pair twice
		{[]Edge{e(0, 1), e(1, 1), e(0, 2)}, false},                  // From goes back
		{[]Edge{e(1, 0), e(0, 0)}, false},
	}
	for i, c := range cases {
		if got := groupedOnce(c.edges, 3); got != c.want {
			t.Errorf("case %d: %v, want %v", i, got, c.want)
		}
	}
	// Aggregate returns its edges so.
	target, behavior := taxiPolicies(t)
	d := sample(t, 1, taxi.New(), behavior, target, 20, 100)
	for _, gamma := range []float64{1, 0.9} {
		c, err := Aggregate(d, gamma)
		if err != nil {
			t.Fatal(err)
		}
		if !groupedOnce(c.Edges, c.NumStates) {
			t.Errorf("gamma %v: Aggregate's edges are not grouped once", gamma)
		}
	}
}

// TestEdgeSums: the hash table of edgeSums, grown several times, sums
// pairs as a map does, keeping the order of first appearance.
func TestEdgeSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 0))
	const nS = 300
	a := newEdgeSums(nS, 1<<20)
	index := map[[2]int]int{}
	var want []Edge
	for range 40000 {
		from, to := rng.IntN(nS), rng.IntN(nS)
		wt, rw := rng.Float64(), rng.Float64()
		a.add(from, to, wt, rw)
		k, ok := index[[2]int{from, to}]
		if !ok {
			k = len(want)
			index[[2]int{from, to}] = k
			want = append(want, Edge{From: from, To: to})
		}
		want[k].Weight += wt
		want[k].RatioWeight += rw
	}
	if len(a.sums) != len(want) || len(want) < 20000 {
		t.Fatalf("%d pairs, want %d (> 20000, so that the table grew)", len(a.sums), len(want))
	}
	for k, e := range a.sums {
		if got := (Edge{From: int(e.from), To: int(e.to), Weight: e.wt, RatioWeight: e.rw}); got != want[k] {
			t.Fatalf("pair %d: %+v, want %+v", k, got, want[k])
		}
	}
}
