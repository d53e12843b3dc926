package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Activation is an element-wise function applied after a layer.
type Activation int

// Activations. The zero value is not an activation, so that settings
// structs elsewhere can read 0 as "the default".
const (
	Tanh     Activation = iota + 1 // tanh(z); derivative 1 - a^2
	ReLU                           // max(z, 0); derivative 1 for z > 0, else 0
	Softplus                       // log(1 + e^z) > 0; derivative the logistic sigmoid
	Exp                            // e^z > 0; derivative e^z
	Identity                       // z
)

// String returns the activation's lower-case name.
func (f Activation) String() string {
	switch f {
	case Tanh:
		return "tanh"
	case ReLU:
		return "relu"
	case Softplus:
		return "softplus"
	case Exp:
		return "exp"
	case Identity:
		return "identity"
	}
	return fmt.Sprintf("Activation(%d)", int(f))
}

// MLP is a fully connected feed-forward network. Its parameters live in
// one slice, layer after layer, each layer's weight matrix W_l (n_{l-1} x
// n_l, row-major) followed by its bias b_l (n_l).
type MLP struct {
	sizes          []int
	hidden, output Activation
	params         []float64
	wOff, bOff     []int // offsets of W_l and b_l in params, l = 0..L-1
}

// New returns a network with layer widths sizes = [n_0, n_1, ..., n_L]
// (input, hidden layers, output), the given hidden and output activations
// and all parameters zero (see Init).
func New(sizes []int, hidden, output Activation) (*MLP, error) {
	if len(sizes) < 2 {
		return nil, fmt.Errorf("nn: need at least an input and an output width, got %v", sizes)
	}
	for _, n := range sizes {
		if n <= 0 {
			return nil, fmt.Errorf("nn: layer widths must be positive, got %v", sizes)
		}
	}
	for _, f := range []Activation{hidden, output} {
		if f < Tanh || f > Identity {
			return nil, fmt.Errorf("nn: unknown activation %v", f)
		}
	}
	m := &MLP{sizes: append([]int(nil), sizes...), hidden: hidden, output: output}
	off := 0
	for l := 1; l < len(sizes); l++ {
		m.wOff = append(m.wOff, off)
		off += sizes[l-1] * sizes[l]
		m.bOff = append(m.bOff, off)
		off += sizes[l]
	}
	m.params = make([]float64, off)
	return m, nil
}

// Init draws the weights from N(0, 1/n_{l-1}) (LeCun's initialisation, fit
// for tanh) and sets the biases to 0; the output layer's weights are
// further scaled by outScale, so that a small outScale starts the network
// close to a constant.
func (m *MLP) Init(rng *rand.Rand, outScale float64) {
	L := len(m.sizes) - 1
	for l := 0; l < L; l++ {
		in, out := m.sizes[l], m.sizes[l+1]
		sd := 1 / math.Sqrt(float64(in))
		if l == L-1 {
			sd *= outScale
		}
		w := m.params[m.wOff[l] : m.wOff[l]+in*out]
		for i := range w {
			w[i] = sd * rng.NormFloat64()
		}
		clear(m.params[m.bOff[l] : m.bOff[l]+out])
	}
}

// Sizes returns the layer widths [n_0, ..., n_L].
func (m *MLP) Sizes() []int { return append([]int(nil), m.sizes...) }

// In returns the input width n_0 and Out the output width n_L.
func (m *MLP) In() int { return m.sizes[0] }

// Out returns the output width n_L.
func (m *MLP) Out() int { return m.sizes[len(m.sizes)-1] }

// Hidden returns the hidden activation and Output the output activation.
func (m *MLP) Hidden() Activation { return m.hidden }

// Output returns the output activation.
func (m *MLP) Output() Activation { return m.output }

// Params returns the parameter vector itself (not a copy): changing it
// changes the network. Its layout is described at MLP.
func (m *MLP) Params() []float64 { return m.params }

// NumParams returns len(m.Params()).
func (m *MLP) NumParams() int { return len(m.params) }

// Layer returns views of W_l (row-major, n_{l-1} x n_l) and b_l for layer
// l = 1..L.
func (m *MLP) Layer(l int) (w, b []float64) {
	in, out := m.sizes[l-1], m.sizes[l]
	return m.params[m.wOff[l-1] : m.wOff[l-1]+in*out], m.params[m.bOff[l-1] : m.bOff[l-1]+out]
}

// Clone returns a deep copy of m.
func (m *MLP) Clone() *MLP {
	c := *m
	c.sizes = append([]int(nil), m.sizes...)
	c.params = append([]float64(nil), m.params...)
	c.wOff = append([]int(nil), m.wOff...)
	c.bOff = append([]int(nil), m.bOff...)
	return &c
}

// Workspace holds the activations of one batch between Forward and
// Backward, and Backward's scratch space. A workspace belongs to one
// network shape and serves batches of up to its capacity; it must not be
// shared by concurrent calls.
type Workspace struct {
	sizes []int
	cap   int
	n     int       // rows of the last Forward
	x     []float64 // input of the last Forward (caller's slice)
	z, a  [][]float64
	dz    [2][]float64 // alternating gradients of pre-activations
	wt    []float64    // a transposed weight matrix
	ones  []float64    // maxRows ones, to sum rows by a product
}

// NewWorkspace returns a workspace for batches of up to maxRows rows.
func (m *MLP) NewWorkspace(maxRows int) *Workspace {
	if maxRows < 1 {
		maxRows = 1
	}
	ws := &Workspace{sizes: m.Sizes(), cap: maxRows}
	wide, wt := 0, 0
	for l := 1; l < len(m.sizes); l++ {
		n := m.sizes[l]
		ws.z = append(ws.z, make([]float64, maxRows*n))
		ws.a = append(ws.a, make([]float64, maxRows*n))
		wide = max(wide, n)
		wt = max(wt, m.sizes[l-1]*n)
	}
	ws.dz[0] = make([]float64, maxRows*wide)
	ws.dz[1] = make([]float64, maxRows*wide)
	ws.wt = make([]float64, wt)
	ws.ones = make([]float64, maxRows)
	for i := range ws.ones {
		ws.ones[i] = 1
	}
	return ws
}

func (m *MLP) checkWorkspace(ws *Workspace, n int) {
	if len(ws.sizes) != len(m.sizes) {
		panic("nn: workspace of another network shape")
	}
	for i := range m.sizes {
		if ws.sizes[i] != m.sizes[i] {
			panic("nn: workspace of another network shape")
		}
	}
	if n > ws.cap {
		panic(fmt.Sprintf("nn: batch of %d rows exceeds workspace capacity %d", n, ws.cap))
	}
}

// Forward evaluates the network on the n rows of x (row-major, n x n_0)
// and returns the n x n_L outputs, a view into ws valid until its next
// use. It keeps a reference to x for Backward. It allocates nothing.
func (m *MLP) Forward(ws *Workspace, x []float64, n int) []float64 {
	m.checkWorkspace(ws, n)
	if len(x) < n*m.sizes[0] {
		panic("nn: Forward input too short")
	}
	ws.n, ws.x = n, x
	in := x
	L := len(m.sizes) - 1
	for l := 1; l <= L; l++ {
		p, q := m.sizes[l-1], m.sizes[l]
		w, b := m.Layer(l)
		z, a := ws.z[l-1][:n*q], ws.a[l-1][:n*q]
		gemm(n, q, p, in, p, 1, w, q, z, q, b)
		f := m.hidden
		if l == L {
			f = m.output
		}
		activate(f, a, z)
		in = a
	}
	return ws.a[L-1][:n*m.sizes[L]]
}

// activate sets a = f(z).
func activate(f Activation, a, z []float64) {
	switch f {
	case Tanh:
		TanhTo(a, z)
	case ReLU:
		for i, v := range z {
			a[i] = max(v, 0)
		}
	case Softplus:
		for i, v := range z {
			a[i] = softplus(v)
		}
	case Exp:
		ExpTo(a, z)
	case Identity:
		copy(a, z)
	}
}

// softplus returns log(1 + e^z) without overflow.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

// sigmoid returns 1 / (1 + e^-z), the derivative of softplus.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// scaleByDerivative sets d[i] *= f'(z[i]), with a = f(z).
func scaleByDerivative(f Activation, d, z, a []float64) {
	switch f {
	case Tanh:
		n := 0
		if useAVX2 && len(a) >= 4 {
			n = len(a) &^ 3
			dtanhAVX2(&d[0], &a[0], n)
		}
		for i := n; i < len(a); i++ {
			d[i] *= math.FMA(-a[i], a[i], 1)
		}
	case ReLU:
		for i, v := range z {
			if !(v > 0) {
				d[i] = 0
			}
		}
	case Softplus:
		for i, v := range z {
			d[i] *= sigmoid(v)
		}
	case Exp:
		for i, v := range a {
			d[i] *= v
		}
	case Identity:
	}
}

// Backward sets grad (length NumParams) to the gradient of a scalar loss
// with respect to the parameters, given dy = dLoss/dOutputs (n x n_L,
// row-major) for the batch of the last Forward on ws:
//
//	dz_L = dy .* f_L'(z_L)
//	dW_l = a_{l-1}^T dz_l,   db_l = sum over rows of dz_l
//	dz_{l-1} = (dz_l W_l^T) .* f_{l-1}'(z_{l-1})
//
// It allocates nothing; dy is not modified.
func (m *MLP) Backward(ws *Workspace, dy, grad []float64) {
	n := ws.n
	m.checkWorkspace(ws, n)
	L := len(m.sizes) - 1
	if len(dy) < n*m.sizes[L] || len(grad) != len(m.params) {
		panic("nn: Backward slice lengths")
	}
	q := m.sizes[L]
	cur := ws.dz[0][:n*q]
	copy(cur, dy[:n*q])
	scaleByDerivative(m.output, cur, ws.z[L-1][:n*q], ws.a[L-1][:n*q])
	for l := L; l >= 1; l-- {
		p, q := m.sizes[l-1], m.sizes[l]
		in := ws.x
		if l > 1 {
			in = ws.a[l-2]
		}
		// dW_l = in^T cur: A(i,q') = in[q'*p + i].
		gw := grad[m.wOff[l-1] : m.wOff[l-1]+p*q]
		gemm(p, q, n, in, 1, p, cur, q, gw, q, nil)
		// db_l = 1^T cur.
		gemm(1, q, n, ws.ones, 0, 1, cur, q, grad[m.bOff[l-1]:m.bOff[l-1]+q], q, nil)
		if l == 1 {
			break
		}
		// prev = cur W_l^T, with W_l^T (q x p) formed in ws.wt.
		w, _ := m.Layer(l)
		wt := ws.wt[:p*q]
		for i := 0; i < p; i++ {
			for j := 0; j < q; j++ {
				wt[j*p+i] = w[i*q+j]
			}
		}
		next := ws.dz[(L-l+1)%2][:n*p]
		gemm(n, p, q, cur, q, 1, wt, p, next, p, nil)
		scaleByDerivative(m.hidden, next, ws.z[l-2][:n*p], ws.a[l-2][:n*p])
		cur = next
	}
}

// Predict evaluates the network on one input and returns a new slice of
// its n_L outputs. It allocates; use Forward with a Workspace in loops.
func (m *MLP) Predict(x []float64) []float64 {
	ws := m.NewWorkspace(1)
	return append([]float64(nil), m.Forward(ws, x, 1)...)
}
