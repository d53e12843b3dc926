package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// MLP is a fully connected feed-forward network with tanh hidden layers
// and a linear output layer:
//
//	h_0 = x,  h_k = tanh(W_k h_{k-1} + b_k) for hidden layers,
//	y = W_L h_{L-1} + b_L.
//
// Sizes lists the layer widths [in, hidden..., out]. Params holds every
// layer's weights (row-major, out x in) followed by its biases, layer
// after layer; it is the flat vector that gradients and optimisers work
// on. The fields are exported for JSON; NewMLP and Validate keep them
// consistent. An MLP is safe for concurrent use as long as nobody writes
// Params.
type MLP struct {
	Sizes  []int     `json:"sizes"`
	Params []float64 `json:"params"`
}

// NewMLP returns a network with the given layer sizes (at least input and
// output), weights drawn from Glorot's uniform distribution
// U[-sqrt(6/(in+out)), sqrt(6/(in+out))] and zero biases.
func NewMLP(rng *rand.Rand, sizes ...int) (*MLP, error) {
	m := &MLP{Sizes: append([]int(nil), sizes...)}
	n, err := numParams(sizes)
	if err != nil {
		return nil, err
	}
	m.Params = make([]float64, n)
	off := 0
	for k := 1; k < len(sizes); k++ {
		in, out := sizes[k-1], sizes[k]
		lim := math.Sqrt(6 / float64(in+out))
		for i := 0; i < in*out; i++ {
			m.Params[off+i] = lim * (2*rng.Float64() - 1)
		}
		off += in*out + out
	}
	return m, nil
}

func numParams(sizes []int) (int, error) {
	if len(sizes) < 2 {
		return 0, fmt.Errorf("policy: network needs at least 2 layer sizes, got %v", sizes)
	}
	n := 0
	for k, s := range sizes {
		if s <= 0 {
			return 0, fmt.Errorf("policy: network layer %d has size %d", k, s)
		}
		if k > 0 {
			n += sizes[k-1]*s + s
		}
	}
	return n, nil
}

// Validate reports whether Sizes and Params agree and every parameter is
// finite.
func (m *MLP) Validate() error {
	n, err := numParams(m.Sizes)
	if err != nil {
		return err
	}
	if len(m.Params) != n {
		return fmt.Errorf("policy: network of sizes %v needs %d parameters, has %d", m.Sizes, n, len(m.Params))
	}
	for i, v := range m.Params {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("policy: network parameter %d is %v", i, v)
		}
	}
	return nil
}

// In returns the input width.
func (m *MLP) In() int { return m.Sizes[0] }

// Out returns the output width.
func (m *MLP) Out() int { return m.Sizes[len(m.Sizes)-1] }

// NumParams returns len(Params).
func (m *MLP) NumParams() int { return len(m.Params) }

// Clone returns a deep copy.
func (m *MLP) Clone() *MLP {
	return &MLP{Sizes: append([]int(nil), m.Sizes...), Params: append([]float64(nil), m.Params...)}
}

// width returns the sum of all layer sizes, the length of the activation
// buffer used by forward.
func (m *MLP) width() int {
	w := 0
	for _, s := range m.Sizes {
		w += s
	}
	return w
}

// forward writes every layer's activations into act (length m.width()),
// input first, output last, and returns the output slice of act.
func (m *MLP) forward(x, act []float64) []float64 {
	if len(x) != m.Sizes[0] {
		panic(fmt.Sprintf("policy: network input of length %d, want %d", len(x), m.Sizes[0]))
	}
	copy(act, x)
	prev := act[:m.Sizes[0]]
	aOff, pOff := m.Sizes[0], 0
	last := len(m.Sizes) - 1
	for k := 1; k <= last; k++ {
		in, out := m.Sizes[k-1], m.Sizes[k]
		w := m.Params[pOff : pOff+in*out]
		b := m.Params[pOff+in*out : pOff+in*out+out]
		cur := act[aOff : aOff+out]
		for i := range cur {
			s := b[i]
			row := w[i*in : (i+1)*in]
			for j, v := range prev {
				s += row[j] * v
			}
			if k < last {
				s = math.Tanh(s)
			}
			cur[i] = s
		}
		prev = cur
		aOff += out
		pOff += in*out + out
	}
	return prev
}

// Forward returns the network's output at x. It panics if len(x) != In().
func (m *MLP) Forward(x []float64) []float64 {
	act := make([]float64, m.width())
	return append([]float64(nil), m.forward(x, act)...)
}

// AddGrad adds to grad (length NumParams) the gradient with respect to
// Params of dOut . y(x), i.e. the vector-Jacobian product J(x)^T dOut of
// back-propagation, and returns the output y(x). It panics on mismatched
// lengths.
func (m *MLP) AddGrad(x, dOut, grad []float64) []float64 {
	if len(dOut) != m.Out() {
		panic(fmt.Sprintf("policy: network gradient with dOut of length %d, want %d", len(dOut), m.Out()))
	}
	return m.AddGradOf(x, grad, func(_, d []float64) { copy(d, dOut) })
}

// AddGradOf is AddGrad for an output weight that depends on the output:
// it computes y = y(x), calls dOut(y, d) to fill d (length Out(), zeroed)
// with dLoss/dy, adds J(x)^T d to grad and returns a copy of y. One
// forward pass serves both the loss and the gradient, e.g. a squared error
// (d = y - target) or a log-density whose mean is y.
func (m *MLP) AddGradOf(x, grad []float64, dOut func(y, d []float64)) []float64 {
	if len(grad) != len(m.Params) {
		panic(fmt.Sprintf("policy: network gradient of length %d, want %d", len(grad), len(m.Params)))
	}
	width := m.width()
	ms := maxSize(m.Sizes)
	buf := make([]float64, width+2*ms)
	act := buf[:width]
	y := m.forward(x, act)
	out := append([]float64(nil), y...)

	// delta holds dLoss/d(pre-activation) of the current layer; the two
	// scratch buffers alternate between layers.
	bufA := buf[width : width+ms : width+ms]
	bufB := buf[width+ms:]
	delta := bufA[:len(y)]
	dOut(out, delta)
	aEnd, pEnd := width-m.Out(), len(m.Params)
	for k := len(m.Sizes) - 1; k >= 1; k-- {
		in, o := m.Sizes[k-1], m.Sizes[k]
		pOff := pEnd - (in*o + o)
		prev := act[aEnd-in : aEnd]
		w := m.Params[pOff : pOff+in*o]
		gw := grad[pOff : pOff+in*o]
		gb := grad[pOff+in*o : pEnd]
		for i := 0; i < o; i++ {
			d := delta[i]
			gb[i] += d
			if d == 0 {
				continue
			}
			row := gw[i*in : (i+1)*in]
			for j, v := range prev {
				row[j] += d * v
			}
		}
		if k > 1 {
			nd := bufB[:in]
			clear(nd)
			for i := 0; i < o; i++ {
				d := delta[i]
				if d == 0 {
					continue
				}
				row := w[i*in : (i+1)*in]
				for j, v := range row {
					nd[j] += v * d
				}
			}
			for j, h := range prev {
				nd[j] *= 1 - h*h // tanh' = 1 - tanh^2
			}
			delta = nd
			bufA, bufB = bufB, bufA
		}
		aEnd -= in
		pEnd = pOff
	}
	return out
}

func maxSize(sizes []int) int {
	m := 0
	for _, s := range sizes {
		m = max(m, s)
	}
	return m
}
