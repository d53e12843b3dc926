package nn_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/nn"
)

// A 2-2-1 network with hand-set weights, evaluated on a batch of two rows.
func ExampleMLP_Forward() {
	m, err := nn.New([]int{2, 2, 1}, nn.ReLU, nn.Identity)
	if err != nil {
		fmt.Println(err)
		return
	}
	w1, b1 := m.Layer(1)
	copy(w1, []float64{1, -1, 2, 3}) // W1 = [[1 -1] [2 3]], row-major
	copy(b1, []float64{0.5, -4})
	w2, b2 := m.Layer(2)
	copy(w2, []float64{2, -1})
	b2[0] = 0.25

	ws := m.NewWorkspace(2)
	y := m.Forward(ws, []float64{1, 1, -1, 2}, 2)
	fmt.Println(y)
	// Output:
	// [7.25 4.25]
}

// Fitting y = sin(x) on [-2, 2] with a small tanh network: Forward,
// Backward of the squared error and an Adam step per iteration.
func ExampleMLP_Backward() {
	rng := rand.New(rand.NewPCG(1, 0))
	m, _ := nn.New([]int{1, 16, 1}, nn.Tanh, nn.Identity)
	m.Init(rng, 1)
	const n = 64
	x := make([]float64, n)
	for i := range x {
		x[i] = -2 + 4*float64(i)/(n-1)
	}
	ws := m.NewWorkspace(n)
	dy := make([]float64, n)
	grad := make([]float64, m.NumParams())
	opt := nn.Adam{LR: 0.01}
	mse := 0.0
	for range 2000 {
		y := m.Forward(ws, x, n)
		mse = 0
		for i := range y {
			r := y[i] - math.Sin(x[i])
			mse += r * r / n
			dy[i] = 2 * r / n
		}
		m.Backward(ws, dy, grad)
		opt.Step(m.Params(), grad)
	}
	fmt.Printf("mean squared error below 1e-3: %v\n", mse < 1e-3)
	// Output:
	// mean squared error below 1e-3: true
}

func ExampleTanhTo() {
	y := make([]float64, 3)
	nn.TanhTo(y, []float64{-1, 0, 0.5})
	fmt.Printf("%.6f\n", y)
	// Output:
	// [-0.761594 0.000000 0.462117]
}
