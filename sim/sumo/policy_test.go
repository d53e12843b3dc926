package sumo

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

// weights returns a 4 x 9 weight matrix with the given entries set.
func weights(set map[[2]int]float64) []float64 {
	w := make([]float64, NumPhases*NumFeatures)
	for k, v := range set {
		w[k[0]*NumFeatures+k[1]] = v
	}
	return w
}

func TestLinearSoftmaxProbs(t *testing.T) {
	e := math.E
	for i, tc := range []struct {
		lights  int
		w       []float64
		scale   float64
		eps     float64
		obs     []float64
		want    []float64
		comment string
	}{
		{1, weights(nil), 10, 0.05, make([]float64, 8), []float64{0.25, 0.25, 0.25, 0.25}, "zero weights: uniform"},
		{
			1, weights(map[[2]int]float64{{0, 0}: 1}), 10, 0.05,
			[]float64{10, 3, 4, 5, 6, 7, 8, 9},
			// z = (1, 0, 0, 0): q = 0.95 softmax(z) + 0.0125.
			[]float64{0.95*e/(e+3) + 0.0125, 0.95/(e+3) + 0.0125, 0.95/(e+3) + 0.0125, 0.95/(e+3) + 0.0125},
			"weight on the north straight count",
		},
		{
			1, weights(map[[2]int]float64{{2, 8}: math.Log(3)}), 1, 0.2, make([]float64, 8),
			[]float64{0.8/6 + 0.05, 0.8/6 + 0.05, 0.8/2 + 0.05, 0.8/6 + 0.05},
			"a bias of log 3 on phase 2",
		},
		{
			2, weights(map[[2]int]float64{{0, 0}: 1}), 10, 0.05,
			[]float64{10, 0, 0, 0, 0, 0, 0, 0 /* light 1: */, 0, 0, 0, 0, 0, 0, 0, 0},
			// Light 1 sees zeros (uniform); the joint is the product,
			// light 0 the fastest digit.
			func() []float64 {
				q := []float64{0.95*e/(e+3) + 0.0125, 0.95/(e+3) + 0.0125, 0.95/(e+3) + 0.0125, 0.95/(e+3) + 0.0125}
				out := make([]float64, 16)
				for a1 := range 4 {
					for a0 := range 4 {
						out[a0+4*a1] = q[a0] * 0.25
					}
				}
				return out
			}(),
			"two lights",
		},
	} {
		p, err := NewLinearSoftmax(tc.lights, tc.w, tc.scale, tc.eps)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		got := make([]float64, p.NumActions())
		p.Probs(tc.obs, got)
		sum := 0.0
		for a := range got {
			if !scalar.EqualWithinAbsOrRel(got[a], tc.want[a], 1e-15, 1e-13) {
				t.Errorf("case %d (%s): pi(%d) = %v, want %v", i, tc.comment, a, got[a], tc.want[a])
			}
			if lp := p.LogProb(tc.obs, a); !scalar.EqualWithinAbsOrRel(lp, math.Log(tc.want[a]), 1e-13, 1e-13) {
				t.Errorf("case %d: log pi(%d) = %v, want %v", i, a, lp, math.Log(tc.want[a]))
			}
			sum += got[a]
		}
		if math.Abs(sum-1) > 1e-14 {
			t.Errorf("case %d: probabilities sum to %v", i, sum)
		}
	}
	// The numbers of case 1, written out.
	if q0 := 0.95*e/(e+3) + 0.0125; math.Abs(q0-0.4640985420977381) > 1e-15 {
		t.Errorf("q0 = %v", q0)
	}
}

func TestLinearSoftmaxFloorAndOverflow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		w := make([]float64, NumPhases*NumFeatures)
		for k := range w {
			w[k] = 1e4 * rng.NormFloat64() // logits far beyond exp's range
		}
		p, err := NewLinearSoftmax(2, w, 1, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		obs := make([]float64, 16)
		for k := range obs {
			obs[k] = float64(rng.IntN(15))
		}
		probs := make([]float64, 16)
		p.Probs(obs, probs)
		for a, v := range probs {
			// Every joint action keeps at least (eps/4)^2.
			if !(v >= 0.0125*0.0125*(1-1e-12)) || math.IsNaN(v) {
				t.Fatalf("case %d: pi(%d) = %v", i, a, v)
			}
		}
	}
}

func TestLinearSoftmaxSample(t *testing.T) {
	p, _ := NewLinearSoftmax(2, weights(map[[2]int]float64{{0, 0}: 1, {3, 8}: -1}), 10, 0.05)
	obs := []float64{10, 2, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 3}
	want := make([]float64, 16)
	p.Probs(obs, want)
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 200000
	count := make([]float64, 16)
	for range n {
		count[p.Sample(rng, obs)]++
	}
	for a := range count {
		// Binomial standard deviation is at most sqrt(0.25/n) = 0.0011.
		if got := count[a] / n; math.Abs(got-want[a]) > 0.005 {
			t.Errorf("action %d drawn %.4f of the time, pi = %.4f", a, got, want[a])
		}
	}
}

func TestLinearSoftmaxValidateAndJSON(t *testing.T) {
	w := weights(map[[2]int]float64{{1, 2}: 0.5})
	for i, tc := range []struct {
		lights     int
		w          []float64
		scale, eps float64
		want       string
	}{
		{0, w, 1, 0.1, "0 lights"},
		{5, w, 1, 0.1, "5 lights"},
		{1, w[:35], 1, 0.1, "35 weights"},
		{1, w, 0, 0.1, "scale 0"},
		{1, w, 1, 0, "epsilon 0"},
		{1, w, 1, 1.5, "epsilon 1.5"},
		{1, append(append([]float64(nil), w[:35]...), math.NaN()), 1, 0.1, "weight 35 is NaN"},
	} {
		if _, err := NewLinearSoftmax(tc.lights, tc.w, tc.scale, tc.eps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %d: error %v, want %q", i, err, tc.want)
		}
	}
	p, _ := NewLinearSoftmax(1, w, 10, 0.05)
	var buf bytes.Buffer
	if err := p.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	q, err := ReadLinearSoftmax(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if q.Lights != 1 || q.Scale != 10 || q.Epsilon != 0.05 || q.Weights[1*NumFeatures+2] != 0.5 {
		t.Errorf("round trip: %+v", q)
	}
	if _, err := ReadLinearSoftmax(strings.NewReader(`{"lights":1,"weights":[1],"scale":1,"epsilon":0.1}`)); err == nil {
		t.Error("a policy with one weight was read")
	}
}

func TestShippedPolicies(t *testing.T) {
	tr := Shipped()
	if len(tr.Iterations) != 10 {
		t.Fatalf("%d iterations, want 10", len(tr.Iterations))
	}
	target := Target(1)
	if got := tr.Iterations[9].Policy.Weights; !floatsEqual(got, target.Weights) {
		t.Error("Target is not iteration 10")
	}
	for k := 1; k <= NumBehaviors; k++ {
		b, err := Behavior(k, 2)
		if err != nil {
			t.Fatal(err)
		}
		if b.Lights != 2 || !floatsEqual(b.Weights, tr.Iterations[4+k].Policy.Weights) {
			t.Errorf("Behavior(%d) is not iteration %d for 2 lights", k, 5+k)
		}
		if floatsEqual(b.Weights, target.Weights) {
			t.Errorf("Behavior(%d) equals the target", k)
		}
	}
	if _, err := Behavior(5, 1); err == nil {
		t.Error("Behavior(5) accepted")
	}
	// The record's evaluation: the target is clearly better than the
	// uniform policy (more than 4 standard errors apart).
	var uni, tgt *EvaluatedPolicy
	for i, p := range tr.Evaluation.Policies {
		switch p.Name {
		case "uniform":
			uni = &tr.Evaluation.Policies[i]
		case "target":
			tgt = &tr.Evaluation.Policies[i]
		}
	}
	if uni == nil || tgt == nil {
		t.Fatal("evaluation lacks the uniform or the target policy")
	}
	t.Logf("shipped evaluation (%d x %d steps): uniform %.3f ± %.3f, target %.3f ± %.3f",
		tr.Evaluation.Episodes, tr.Evaluation.Steps, uni.Reward, uni.StdErr, tgt.Reward, tgt.StdErr)
	if gap := tgt.Reward - uni.Reward; gap < 4*math.Hypot(uni.StdErr, tgt.StdErr) {
		t.Errorf("target %.3f not clearly above uniform %.3f", tgt.Reward, uni.Reward)
	}
}

func floatsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
