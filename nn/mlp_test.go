package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/internal/gradcheck"
)

// gradCheck compares Backward with central finite differences for the
// scalar loss f(y) = sum_k c_k y_k + 0.5 sum_k y_k^2 of the outputs y on a
// random batch. It returns the relative error of the whole gradient,
// ||g - fd|| / ||g||, and the largest element-wise relative error
// |g_i - fd_i| / |g_i| over the parameters with |g_i| >= 1e-3 max|g|
// (smaller entries are dominated by the rounding noise of fd, about
// 1e-15 |f| / h, and are covered by the first measure).
func gradCheck(t *testing.T, sizes []int, hidden, output Activation, n int, seed uint64) (vec, elem float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0))
	m, err := New(sizes, hidden, output)
	if err != nil {
		t.Fatal(err)
	}
	m.Init(rng, 1)
	for i := range m.params { // non-zero biases too
		m.params[i] += 0.1 * rng.NormFloat64()
	}
	in, out := sizes[0], sizes[len(sizes)-1]
	x := make([]float64, n*in)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	c := make([]float64, n*out)
	for i := range c {
		c[i] = rng.NormFloat64()
	}
	ws := m.NewWorkspace(n)
	loss := func() float64 {
		y := m.Forward(ws, x, n)
		s := 0.0
		for k, v := range y {
			s += c[k]*v + 0.5*v*v
		}
		return s
	}
	y := m.Forward(ws, x, n)
	dy := make([]float64, len(y))
	for k, v := range y {
		dy[k] = c[k] + v
	}
	grad := make([]float64, m.NumParams())
	m.Backward(ws, dy, grad)
	fd := gradcheck.FiniteDifferences(m.params, loss)
	return gradcheck.Compare(grad, fd)
}

func TestBackwardFiniteDifferences(t *testing.T) {
	for k, tc := range []struct {
		sizes          []int
		hidden, output Activation
		n              int
	}{
		{[]int{2, 64, 64, 1}, Tanh, Softplus, 16}, // the ratio network, assembly path
		{[]int{3, 5, 4, 2}, Tanh, Identity, 7},    // odd widths, Go path
		{[]int{2, 8, 16, 1}, Tanh, Exp, 9},
		{[]int{4, 8, 8, 3}, ReLU, Softplus, 12},
		{[]int{1, 1}, Identity, Tanh, 3},
	} {
		vec, elem := gradCheck(t, tc.sizes, tc.hidden, tc.output, tc.n, uint64(10+k))
		t.Logf("case %d %v %v/%v: relative error %.2g, element-wise %.2g", k, tc.sizes, tc.hidden, tc.output, vec, elem)
		if vec > 1e-5 || elem > 1e-5 {
			t.Errorf("case %d %v %v/%v: gradient relative error %.3g (element-wise %.3g), want < 1e-5",
				k, tc.sizes, tc.hidden, tc.output, vec, elem)
		}
	}
}

// TestForwardKnown checks Forward on a 2-2-1 network whose outputs are
// computed by hand.
func TestForwardKnown(t *testing.T) {
	m, err := New([]int{2, 2, 1}, ReLU, Identity)
	if err != nil {
		t.Fatal(err)
	}
	w1, b1 := m.Layer(1)
	copy(w1, []float64{1, -1, 2, 3}) // W1 = [[1 -1] [2 3]]
	copy(b1, []float64{0.5, -4})
	w2, b2 := m.Layer(2)
	copy(w2, []float64{2, -1})
	b2[0] = 0.25
	// x = (1, 1): z1 = (1+2+0.5, -1+3-4) = (3.5, -2) -> a1 = (3.5, 0) -> y = 7 + 0.25
	// x = (-1, 2): z1 = (-1+4+0.5, 1+6-4) = (3.5, 3) -> a1 = (3.5, 3) -> y = 7 - 3 + 0.25
	ws := m.NewWorkspace(2)
	y := m.Forward(ws, []float64{1, 1, -1, 2}, 2)
	want := []float64{7.25, 4.25}
	for i := range want {
		if y[i] != want[i] {
			t.Errorf("y[%d] = %v, want %v", i, y[i], want[i])
		}
	}
	if got := m.Predict([]float64{-1, 2}); got[0] != 4.25 {
		t.Errorf("Predict = %v, want [4.25]", got)
	}
}

// TestAssemblyMatchesGo checks that a forward and backward pass give
// bit-identical results with and without the assembly kernels.
func TestAssemblyMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 0))
	m, _ := New([]int{3, 16, 24, 1}, Tanh, Softplus)
	m.Init(rng, 1)
	const n = 37
	x := make([]float64, n*3)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	dy := make([]float64, n)
	for i := range dy {
		dy[i] = rng.NormFloat64()
	}
	run := func() ([]float64, []float64) {
		ws := m.NewWorkspace(n)
		y := append([]float64(nil), m.Forward(ws, x, n)...)
		g := make([]float64, m.NumParams())
		m.Backward(ws, dy, g)
		return y, g
	}
	y1, g1 := run()
	var y2, g2 []float64
	withGo(func() { y2, g2 = run() })
	for i := range y1 {
		if y1[i] != y2[i] {
			t.Fatalf("output %d: %v vs %v", i, y1[i], y2[i])
		}
	}
	for i := range g1 {
		if g1[i] != g2[i] {
			t.Fatalf("gradient %d: %v vs %v", i, g1[i], g2[i])
		}
	}
}

func TestNoAllocations(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 0))
	m, _ := New([]int{2, 64, 64, 1}, Tanh, Softplus)
	m.Init(rng, 0.1)
	const n = 64
	x := make([]float64, 2*n)
	dy := make([]float64, n)
	ws := m.NewWorkspace(n)
	g := make([]float64, m.NumParams())
	var opt Adam
	opt.Step(m.Params(), g)
	allocs := testing.AllocsPerRun(10, func() {
		m.Forward(ws, x, n)
		m.Backward(ws, dy, g)
		opt.Step(m.Params(), g)
	})
	if allocs != 0 {
		t.Errorf("Forward+Backward+Adam.Step allocate %v times, want 0", allocs)
	}
}

func TestNewErrors(t *testing.T) {
	for k, tc := range []struct {
		sizes  []int
		h, out Activation
	}{
		{[]int{3}, Tanh, Identity},
		{[]int{3, 0, 1}, Tanh, Identity},
		{[]int{3, 1}, 0, Identity},
		{[]int{3, 1}, Tanh, Activation(99)},
	} {
		if _, err := New(tc.sizes, tc.h, tc.out); err == nil {
			t.Errorf("case %d: New(%v, %v, %v) gave no error", k, tc.sizes, tc.h, tc.out)
		}
	}
}

// TestAdamFirstStep checks the first Adam update, which moves every
// parameter by LR against the sign of its gradient (bias correction makes
// m/sqrt(v) = g/|g|), up to Eps.
func TestAdamFirstStep(t *testing.T) {
	p := []float64{1, 2, 3}
	g := []float64{0.5, -4, 0}
	o := Adam{LR: 0.1}
	o.Step(p, g)
	want := []float64{0.9, 2.1, 3}
	for i := range p {
		if math.Abs(p[i]-want[i]) > 1e-7 {
			t.Errorf("p[%d] = %v, want %v", i, p[i], want[i])
		}
	}
	if o.Steps() != 1 {
		t.Errorf("Steps = %d, want 1", o.Steps())
	}
}
