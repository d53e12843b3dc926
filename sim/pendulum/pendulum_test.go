package pendulum

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/ihope-ope/ihope/sim/rollout"
)

// Reference numbers from Gymnasium's PendulumEnv.step formulas evaluated in
// Python float64 (gymnasium/envs/classic_control/pendulum.py).
func TestStep(t *testing.T) {
	for i, c := range []struct {
		th, thdot, u               float64
		wantTh, wantThdot, wantRew float64
	}{
		{0.5, -1.2, 1.5, 0.46922845769765764, -0.6154308460468477, -0.39625},
		{math.Pi, 0, 5, 3.1565926535897932, 0.3000000000000001, -9.873604401089358}, // torque clipped to 2
		{1.5, 7.9, 2, 1.9, 8, -8.495},                                               // speed clipped to 8
		{7, 0.3, -0.5, 7.0358869974519544, 0.7177399490390919, -0.5230733038432241}, // angle not wrapped
		{-3.5, -7.99, -3, -3.9, -8, -14.134130454100328},
	} {
		next, r := Pendulum{}.Step(nil, []float64{c.th, c.thdot}, []float64{c.u})
		if !scalar.EqualWithinAbsOrRel(next[0], c.wantTh, 1e-15, 1e-15) ||
			!scalar.EqualWithinAbsOrRel(next[1], c.wantThdot, 1e-15, 1e-15) ||
			!scalar.EqualWithinAbsOrRel(r, c.wantRew, 1e-15, 1e-15) {
			t.Errorf("case %d: step(%v, %v, %v) = (%.17g, %.17g), %.17g; want (%.17g, %.17g), %.17g",
				i, c.th, c.thdot, c.u, next[0], next[1], r, c.wantTh, c.wantThdot, c.wantRew)
		}
	}
	// g is a setting: the moon's pull halves the velocity change.
	next, _ := Pendulum{G: 1.62}.Step(nil, []float64{0.5, 0}, []float64{0})
	if want := 3 * 1.62 / 2 * math.Sin(0.5) * DT; math.Abs(next[1]-want) > 1e-16 {
		t.Errorf("g = 1.62: theta-dot' = %v, want %v", next[1], want)
	}
}

func TestAngleNormalize(t *testing.T) {
	for i, c := range []struct{ x, want float64 }{
		{math.Pi, -math.Pi}, {-math.Pi, -math.Pi}, {7, 0.7168146928204138},
		{-3.5, 2.7831853071795862}, {0, 0}, {100, -0.5309649148733762}, {-1e-20, 0},
	} {
		if got := AngleNormalize(c.x); math.Abs(got-c.want) > 1e-14 {
			t.Errorf("case %d: AngleNormalize(%v) = %.17g, want %.17g", i, c.x, got, c.want)
		}
	}
}

func TestResetObserve(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var p Pendulum
	minTh, maxTh, minV, maxV := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for range 10000 {
		s := p.Reset(rng)
		minTh, maxTh = math.Min(minTh, s[0]), math.Max(maxTh, s[0])
		minV, maxV = math.Min(minV, s[1]), math.Max(maxV, s[1])
	}
	// Uniform on [-pi, pi] x [-1, 1]: 10000 draws come within 0.01 of every edge.
	if minTh < -math.Pi || minTh > -math.Pi+0.01 || maxTh > math.Pi || maxTh < math.Pi-0.01 ||
		minV < -1 || minV > -0.99 || maxV > 1 || maxV < 0.99 {
		t.Errorf("reset ranges theta [%v, %v], theta-dot [%v, %v]", minTh, maxTh, minV, maxV)
	}
	o := p.Observe([]float64{2 * math.Pi / 3, -4})
	if math.Abs(o[0]+0.5) > 1e-15 || math.Abs(o[1]-math.Sqrt(3)/2) > 1e-15 || o[2] != -4 {
		t.Errorf("Observe = %v, want (-0.5, 0.866, -4)", o)
	}
	if math.Abs(MinReward+16.2736044) > 1e-7 {
		t.Errorf("MinReward = %v", MinReward)
	}
}

// The shipped policies load, and pi_* beats pi_+ clearly (their values,
// by 1000 episodes of 1000 steps, are printed by internal/pendulumgen).
func TestDefaults(t *testing.T) {
	target, plus := DefaultTarget(), DefaultPlus()
	for _, p := range []interface {
		ObsDim() int
		ActionDim() int
	}{target, plus} {
		if p.ObsDim() != 3 || p.ActionDim() != 1 {
			t.Fatalf("policy maps %d observations to %d actions", p.ObsDim(), p.ActionDim())
		}
	}
	if target.Std != DefaultStd || plus.Std != DefaultStd || target.Low[0] != -2 || target.High[0] != 2 {
		t.Errorf("std %v and %v, box [%v, %v]", target.Std, plus.Std, target.Low[0], target.High[0])
	}
	rng := rand.New(rand.NewPCG(3, 3))
	vt, st, err := rollout.Evaluate(rng, Pendulum{}, target, 40, 400, 1)
	if err != nil {
		t.Fatal(err)
	}
	vp, sp, err := rollout.Evaluate(rng, Pendulum{}, plus, 40, 400, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("average reward over 400 steps: pi_* %.3f +- %.3f, pi_+ %.3f +- %.3f", vt, st, vp, sp)
	if vt < -0.6 || vt-vp < 0.5 || vt-vp < 5*math.Hypot(st, sp) {
		t.Errorf("average reward over 400 steps: pi_* %.3f +- %.3f, pi_+ %.3f +- %.3f", vt, st, vp, sp)
	}
	b, err := Behavior(0.3)
	if err != nil {
		t.Fatal(err)
	}
	obs, a := []float64{1, 0, 0}, []float64{0.1}
	want := math.Log(0.7*math.Exp(target.LogProb(obs, a)) + 0.3*math.Exp(plus.LogProb(obs, a)))
	if got := b.LogProb(obs, a); math.Abs(got-want) > 1e-13 {
		t.Errorf("behavior log-density %v, want %v", got, want)
	}
}

func ExamplePendulum() {
	var env Pendulum
	state := []float64{math.Pi, 0} // hanging straight down, at rest
	for range 3 {
		next, r := env.Step(nil, state, []float64{2}) // full torque
		fmt.Printf("theta %.4f  theta-dot %.4f  reward %.4f\n", next[0], next[1], r)
		state = next
	}
	// Output:
	// theta 3.1566  theta-dot 0.3000  reward -9.8736
	// theta 3.1860  theta-dot 0.5888  reward -9.7886
	// theta 3.2288  theta-dot 0.8554  reward -9.6310
}
