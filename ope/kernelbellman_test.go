package ope

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/pendulum"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
	"github.com/ihope-ope/ihope/value"
)

// randomWorld returns a finite MDP of nS states and nA actions with
// random transitions (each pair leads to 2 or 3 states) and rewards in
// [0, 1] drawn per outcome, so that both the next state and the reward
// are noisy, with two random policies over it.
func randomWorld(t testing.TB, seed uint64, nS, nA int) (*sim.Table, *policy.Tabular, *policy.Tabular) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	out := make([][][]mdp.Outcome, nS)
	for s := range out {
		out[s] = make([][]mdp.Outcome, nA)
		for a := range out[s] {
			k := 2 + rng.IntN(2)
			w := make([]float64, k)
			z := 0.0
			for i := range w {
				w[i] = 0.2 + rng.Float64()
				z += w[i]
			}
			for i := range w {
				out[s][a] = append(out[s][a], mdp.Outcome{Next: rng.IntN(nS), Prob: w[i] / z, Reward: rng.Float64()})
			}
		}
	}
	init := make([]float64, nS)
	init[0], init[1] = 0.5, 0.5
	m, err := sim.NewTable(out, init)
	if err != nil {
		t.Fatal(err)
	}
	pol := func() *policy.Tabular {
		rows := make([][]float64, nS)
		for s := range rows {
			rows[s] = make([]float64, nA)
			z := 0.0
			for a := range rows[s] {
				rows[s][a] = 0.1 + rng.Float64()
				z += rows[s][a]
			}
			for a := range rows[s] {
				rows[s][a] /= z
			}
		}
		p, err := policy.NewTabular(rows)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	return m, pol(), pol()
}

// trueQ returns q^pi of m at gamma by value iteration to convergence.
func trueQ(m mdp.Finite, pi *policy.Tabular, gamma float64) []float64 {
	nS, nA := m.NumStates(), m.NumActions()
	q := make([]float64, nS*nA)
	nq := make([]float64, nS*nA)
	for range 100000 {
		diff := 0.0
		for s := range nS {
			for a := range nA {
				v := 0.0
				for _, o := range m.Outcomes(s, a) {
					next := 0.0
					for b := range nA {
						next += pi.Prob(o.Next, b) * q[o.Next*nA+b]
					}
					v += o.Prob * (o.Reward + gamma*next)
				}
				nq[s*nA+a] = v
				diff = max(diff, math.Abs(v-q[s*nA+a]))
			}
		}
		q, nq = nq, q
		if diff < 1e-14 {
			break
		}
	}
	return q
}

func sampleWorld(t testing.TB, m *sim.Table, behavior, target *policy.Tabular, seed uint64, n, T int) *dataset.Dataset {
	t.Helper()
	d, err := rollout.Sample(rand.New(rand.NewPCG(seed, 7)), m, behavior, target, n, T)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The closed form agrees with a second computation: for every vertex of
// the box over the unvisited pairs, the greatest (least) value over the
// ellipsoid ||B - N_U q_U - N_V q_V||^2 <= n^2 lambda from the dense
// formula c^T theta_hat +- sqrt(n^2 lambda c^T (N_V^T N_V)^-1 c) (gonum's
// dense inverse); the range is the extreme over the vertices.
func TestKernelBellmanClosedForm(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		m, behavior, target := randomWorld(t, seed, 4, 3)
		d := sampleWorld(t, m, behavior, target, seed, 3, 5) // few steps: pairs left unvisited
		gamma := 0.8
		pr, err := newKBProblem(d, gamma, target)
		if err != nil {
			t.Fatal(err)
		}
		const lambda, qlo, qhi = 0.01, -2.0, 5.0
		lo, hi, err := pr.valueRange(lambda, qlo, qhi)
		if err != nil {
			t.Fatal(err)
		}
		var V, U []int
		col := make(map[int]int)
		for x := range pr.nP {
			if pr.visited(x) {
				col[x] = len(V)
				V = append(V, x)
			} else if !pr.known[x] {
				U = append(U, x)
			}
		}
		if len(U) == 0 || len(U) > 10 {
			t.Fatalf("seed %d: %d unvisited pairs, want some (and few)", seed, len(U))
		}
		nv := len(V)
		NV := mat.NewDense(nv, nv, nil)
		NU := mat.NewDense(nv, len(U), nil)
		ucol := make(map[int]int)
		for i, x := range U {
			ucol[x] = i
		}
		for _, st := range pr.steps {
			r := col[st.x]
			NV.Set(r, r, NV.At(r, r)+1)
			for _, pw := range st.next {
				if c, ok := col[pw.p]; ok {
					NV.Set(r, c, NV.At(r, c)-gamma*pw.w)
				} else {
					c := ucol[pw.p]
					NU.Set(r, c, NU.At(r, c)-gamma*pw.w)
				}
			}
		}
		var inv, gram, gramInv mat.Dense
		if err := inv.Inverse(NV); err != nil {
			t.Fatal(err)
		}
		gram.Mul(NV.T(), NV)
		if err := gramInv.Inverse(&gram); err != nil {
			t.Fatal(err)
		}
		cV := mat.NewVecDense(nv, nil)
		for i, x := range V {
			cV.SetVec(i, pr.c[x])
		}
		var quad mat.VecDense
		quad.MulVec(&gramInv, cV)
		spread := math.Sqrt(float64(pr.n*pr.n) * lambda * mat.Dot(cV, &quad))
		wantLo, wantHi := math.Inf(1), math.Inf(-1)
		for v := 0; v < 1<<len(U); v++ {
			qU := mat.NewVecDense(len(U), nil)
			valU := 0.0
			for i, x := range U {
				q := qlo
				if v>>i&1 == 1 {
					q = qhi
				}
				qU.SetVec(i, q)
				valU += pr.c[x] * q
			}
			rhs := mat.NewVecDense(nv, nil)
			for i, x := range V {
				rhs.SetVec(i, pr.sumR[x])
			}
			var nu mat.VecDense
			nu.MulVec(NU, qU)
			rhs.SubVec(rhs, &nu)
			var theta mat.VecDense
			theta.MulVec(&inv, rhs)
			centre := mat.Dot(cV, &theta) + valU
			wantLo, wantHi = min(wantLo, centre-spread), max(wantHi, centre+spread)
		}
		if math.Abs(lo-wantLo) > 1e-8*math.Max(1, math.Abs(wantLo)) || math.Abs(hi-wantHi) > 1e-8*math.Max(1, math.Abs(wantHi)) {
			t.Errorf("seed %d: closed form [%.12f, %.12f], dense vertex search [%.12f, %.12f]", seed, lo, hi, wantLo, wantHi)
		}
	}
}

// The probability step alone: at the exact q^pi, the empirical loss
// exceeds the finite-sample lambda in at most delta of 200 seeds. (The
// bound is conservative; the test also logs how far below lambda the
// loss sits.)
func TestKernelBellmanLossAtTruth(t *testing.T) {
	const seeds, delta, gamma = 200, 0.05, 0.9
	m, behavior, target := randomWorld(t, 5, 6, 3)
	q := trueQ(m, target, gamma)
	exceed, ratio := 0, 0.0
	for s := range seeds {
		d := sampleWorld(t, m, behavior, target, uint64(s), 20, 30)
		pr, err := newKBProblem(d, gamma, target)
		if err != nil {
			t.Fatal(err)
		}
		l := (1 - 0) / (1 - gamma)
		lambda := 2 * l * l * math.Log(2/delta) / float64(pr.n)
		loss := pr.loss(q)
		if loss > lambda {
			exceed++
		}
		ratio += loss / lambda / seeds
	}
	if exceed > int(delta*seeds) {
		t.Errorf("L(q^pi) > lambda in %d of %d seeds, want at most %d", exceed, seeds, int(delta*seeds))
	}
	t.Logf("L(q^pi) > lambda in %d of %d seeds; mean L(q^pi)/lambda %.3g", exceed, seeds, ratio)
}

// Coverage over 200 seeds of a random world with its exact long-run
// value: both calibrations hold the truth in at least
// 1 - alpha - 2.33 sqrt(alpha(1 - alpha)/200) of the seeds at 90%, and
// the sign-flip interval is the narrower.
func TestKernelBellmanCoverage(t *testing.T) {
	const seeds, alpha, gamma = 200, 0.1, 0.9
	m, behavior, target := randomWorld(t, 5, 6, 3)
	truth, err := mdp.LongRun(m, target, gamma)
	if err != nil {
		t.Fatal(err)
	}
	floor := 1 - alpha - 2.33*math.Sqrt(alpha*(1-alpha)/seeds)
	widths := map[string]float64{}
	for _, cal := range []string{FiniteSample, SignFlip} {
		covered := 0
		for s := range seeds {
			d := sampleWorld(t, m, behavior, target, uint64(s), 40, 40)
			b, err := KernelBellman{RewardLow: 0, RewardHigh: 1, Alpha: alpha, Calibration: cal, Flips: 500, Seed: uint64(s), Target: target}.Bounds(d, gamma)
			if err != nil {
				t.Fatal(err)
			}
			if b.Low <= truth && truth <= b.High {
				covered++
			}
			widths[cal] += (b.High - b.Low) / seeds
		}
		if float64(covered)/seeds < floor {
			t.Errorf("%s: covered %d of %d, want at least %.3f", cal, covered, seeds, floor)
		}
		t.Logf("%s: covered %d/%d, mean width %.3f (truth %.4f)", cal, covered, seeds, widths[cal], truth)
	}
	if !(widths[SignFlip] < widths[FiniteSample]) {
		t.Errorf("mean widths %v: the sign-flip interval should be the narrower", widths)
	}
}

// Benchmarks of the bounds on the README's Taxi log (200 episodes of 400
// steps, pi19 against pi18), gamma = 0.95.
func taxiLogForBounds(b *testing.B) (*dataset.Dataset, *policy.Tabular) {
	b.Helper()
	m := taxi.New()
	target, err := taxi.Policy("pi19")
	if err != nil {
		b.Fatal(err)
	}
	behavior, err := taxi.Policy("pi18")
	if err != nil {
		b.Fatal(err)
	}
	d, err := rollout.Sample(rand.New(rand.NewPCG(1, 2)), sim.NewSampler(m), behavior, target, 200, 400)
	if err != nil {
		b.Fatal(err)
	}
	return d, target
}

func BenchmarkKernelBellmanTaxi(b *testing.B) {
	d, target := taxiLogForBounds(b)
	for _, cal := range []string{FiniteSample, SignFlip} {
		b.Run(cal, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := (KernelBellman{RewardLow: -1, RewardHigh: 20, Calibration: cal, Target: target}).Bounds(d, 0.95); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkHCOPETaxi(b *testing.B) {
	d, _ := taxiLogForBounds(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (HCOPE{RewardLow: -1, RewardHigh: 20}).Bounds(d, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKernelBellmanPendulum is the real-state interval on the
// README's Pendulum log (150 episodes of 1000 steps, behavior pi+), q
// linear in the default quadratic features, the target's own draws, at
// gamma 0.99 and at the average reward.
func BenchmarkKernelBellmanPendulum(b *testing.B) {
	behavior, err := pendulum.Behavior(1)
	if err != nil {
		b.Fatal(err)
	}
	target := pendulum.DefaultTarget()
	d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(3, 0)), pendulum.Pendulum{}, behavior, target, 150, 1000)
	if err != nil {
		b.Fatal(err)
	}
	for _, gamma := range []float64{0.99, 1} {
		b.Run(fmt.Sprintf("gamma=%g", gamma), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := (KernelBellman{RewardLow: -17, RewardHigh: 0, Linear: value.Linear{}, ValueTarget: value.Target{Continuous: target, Seed: 1}}).Bounds(d, gamma); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
