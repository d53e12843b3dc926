package ratio

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/internal/gradcheck"
	"github.com/ihope-ope/ihope/kernelloss"
	"github.com/ihope-ope/ihope/nn"
)

// testTrainer returns a trainer for net with the batch of tr at idx.
func testTrainer(t *testing.T, net *nn.MLP, tr *transitions, idx []int, h float64, workers int) *neuralTrainer {
	t.Helper()
	nt := newNeuralTrainer(net, len(idx), h, workers)
	t.Cleanup(nt.close)
	nt.fill(tr, idx)
	return nt
}

// TestNeuralLossExact checks the loss against a hand computation. With an
// exp output and zero weights, w = e^b everywhere, so z = e^b and
// Delta_i = beta_i - 1 (0 for a dummy). Next states 0, 1, 3 with h = 1
// give K_01 = e^{-1/2}, K_02 = e^{-9/2}, K_12 = e^{-2}; beta = 2, 0.5, 1
// gives Delta = 1, -0.5, 0, so
//
//	V = (1 + 0.25 - e^{-1/2}) / 9,   U = -e^{-1/2} / 6.
func TestNeuralLossExact(t *testing.T) {
	tr := &transitions{d: 1}
	for i, v := range []float64{0, 1, 3} {
		tr.add([]float64{float64(i)}, []float64{v}, []float64{2, 0.5, 1}[i], 1, false)
	}
	tr.add([]float64{7}, []float64{7}, 0, 1, true) // a dummy, far away
	V := (1.25 - math.Exp(-0.5)) / 9
	U := -math.Exp(-0.5) / 6
	for k, tc := range []struct {
		idx     []int
		b       float64
		workers int
		diag    bool
		want    float64
	}{
		{[]int{0, 1, 2}, 0, 1, true, V},
		{[]int{0, 1, 2}, math.Log(5), 2, true, V}, // scale free: w = 5
		{[]int{0, 1, 2}, 0, 2, false, U},
		// With the dummy (Delta = 1 - w/z = 0, far from the others) the sums
		// are unchanged and only the normalisation grows: 1/16 and 1/12.
		{[]int{0, 1, 2, 3}, 0, 2, true, V * 9 / 16},
		{[]int{3, 0, 1, 2}, 0, 1, false, U * 6 / 12},
	} {
		net, _ := nn.New([]int{1, 4, 1}, nn.Tanh, nn.Exp)
		_, b := net.Layer(2)
		b[0] = tc.b
		nt := testTrainer(t, net, tr, tc.idx, 1, tc.workers)
		got, err := nt.loss(false, tc.diag)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("case %d: loss %.17g, want %.17g", k, got, tc.want)
		}
	}
}

// With a value test function v the kernel is K + v v^T: on the batch of
// TestNeuralLossExact (Delta = 1, -0.5, 0) with v = 2, 1, 5 at the next
// states, the V-statistic gains (sum_i v_i Delta_i)^2 / 9 = 2.25/9 and
// the U-statistic (that square less sum_i v_i^2 Delta_i^2) / 6 =
// (2.25 - 4.25)/6.
func TestNeuralLossValueTest(t *testing.T) {
	tr := &transitions{d: 1}
	for i, v := range []float64{0, 1, 3} {
		tr.add([]float64{float64(i)}, []float64{v}, []float64{2, 0.5, 1}[i], 1, false)
		tr.test = append(tr.test, []float64{2, 1, 5}[i])
	}
	for _, tc := range []struct {
		diag bool
		want float64
	}{
		{true, (1.25 - math.Exp(-0.5) + 2.25) / 9},
		{false, (-math.Exp(-0.5) + 2.25 - 4.25) / 6},
	} {
		net, _ := nn.New([]int{1, 4, 1}, nn.Tanh, nn.Exp)
		nt := testTrainer(t, net, tr, []int{0, 1, 2}, 1, 2)
		got, err := nt.loss(false, tc.diag)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("diag %v: loss %.17g, want %.17g", tc.diag, got, tc.want)
		}
	}
}

// TestNeuralLossGradient checks the gradient of the kernel loss with
// respect to every network parameter, through the normalisation z and
// both w(s_i) and w(s'_i), against central finite differences, with and
// without dummies, diagonal, weights (a training set used whole) and
// assembly-sized layers.
func TestNeuralLossGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 0))
	c := arChain{dim: 2, a: 0.5, tau: 0.5, sigma: 0.5, shift: 0.4}
	d := c.sample(rng, 5, 8)
	mean, scale := kernelloss.Scaling(d)
	for k, tc := range []struct {
		sizes    []int
		out      nn.Activation
		gamma    float64
		m        int
		diag     bool
		weighted bool
	}{
		{[]int{2, 16, 8, 1}, nn.Softplus, 0.7, 24, true, false},
		{[]int{2, 16, 8, 1}, nn.Softplus, 0.7, 24, false, false},
		{[]int{2, 5, 3, 1}, nn.Exp, 1, 13, true, false},
		{[]int{2, 64, 64, 1}, nn.Softplus, 0.9, 40, true, false},
		{[]int{2, 16, 8, 1}, nn.Exp, 0.7, 24, true, true},
		{[]int{2, 16, 8, 1}, nn.Softplus, 0.9, 24, false, true},
		{[]int{2, 16, 8, 1}, nn.Exp, 0.7, 24, true, false},    // with a value test (k >= 6)
		{[]int{2, 16, 8, 1}, nn.Softplus, 1, 24, false, true}, // with a value test
	} {
		var vt *valueTest
		if k >= 6 { // a value test function: any smooth function of the state
			v, next := make([]float64, d.NumSteps()), make([]float64, d.NumSteps())
			for j := range v {
				v[j] = math.Sin(3 * d.ObsAt(j)[0])
				next[j] = math.Cos(2 * d.ObsAt(j)[1])
			}
			l, _ := Neural{}.WithValue(v, next)
			vt = l.(valueTested).vt
		}
		train, _ := splitTransitions(rng, d, tc.gamma, -1, mean, scale, vt)
		net, _ := nn.New(tc.sizes, nn.Tanh, tc.out)
		net.Init(rng, 1)
		idx := make([]int, tc.m)
		train.draw(rng, idx)
		if tc.gamma < 1 {
			idx[0] = 0 // make sure a dummy is in
		}
		nt := testTrainer(t, net, train, idx, 0.8, 2)
		if tc.weighted {
			nt.om = make([]float64, tc.m)
			for i := range nt.om {
				nt.om[i] = 0.2 + rng.Float64()
			}
		}
		if _, err := nt.loss(true, tc.diag); err != nil {
			t.Fatal(err)
		}
		g := append([]float64(nil), nt.grad...)
		fd := gradcheck.FiniteDifferences(net.Params(), func() float64 {
			v, err := nt.loss(false, tc.diag)
			if err != nil {
				t.Fatal(err)
			}
			return v
		})
		vec, elem := gradcheck.Compare(g, fd)
		t.Logf("case %d %v gamma %v: relative error %.2g, element-wise %.2g", k, tc.sizes, tc.gamma, vec, elem)
		if vec > 1e-5 || elem > 1e-5 {
			t.Errorf("case %d %v gamma %v: gradient relative error %.3g (element-wise %.3g), want < 1e-5",
				k, tc.sizes, tc.gamma, vec, elem)
		}
	}
}
