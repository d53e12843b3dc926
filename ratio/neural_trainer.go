package ratio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/ihope-ope/ihope/nn"
)

// neuralTrainer holds the network, the minibatch and every buffer of a
// training step, so that an iteration allocates nothing. The batch's
// current states s_i are rows [0, m) of x and its next states s'_i rows
// [m, 2m); part 0 of every phase works on the former (and the first rows
// of the kernel), part 1 on the latter.
type neuralTrainer struct {
	net  *nn.MLP
	d, m int
	negc float64 // -1/(2h^2)

	x     []float64 // 2m x d
	bt    []float64 // d x m: next states by dimension
	beta  []float64 // m
	dummy []bool    // m
	w     [2][]float64
	u     []float64 // beta_i w_i - w'_i
	delta []float64
	g     [2][]float64 // partial K delta of the two kernel parts
	kg    []float64    // K delta
	dy    []float64    // 2m: dD/dw(s_i), dD/dw(s'_i)
	ws    [2]*nn.Workspace
	grads [2][]float64
	grad  []float64
	karg  [2][]float64 // kernel row scratch
	split int          // kernel rows [0, split) are part 0
	om    []float64    // weights of the batch rows; nil for unit weights
	vt    []float64    // the value test function at the batch's next states; nil for none
	opt   nn.Adam

	// The helper goroutine (Workers = 2): run publishes the phase in slot
	// and nudges the helper; whichever of the two claims slot first runs
	// part 1, so that a helper kept off the CPU by other work costs no
	// more than running both parts on one goroutine.
	gen    uint64
	slot   atomic.Uint64 // gen<<2 | phase of the unclaimed part 1, or 0
	notify chan struct{} // capacity 1
	done   chan struct{} // capacity 1: the helper finished a part
}

const (
	phaseForward = iota
	phaseKernel
	phaseBackward
)

func newNeuralTrainer(net *nn.MLP, m int, h float64, workers int) *neuralTrainer {
	d := net.In()
	t := &neuralTrainer{
		net: net, d: d, m: m, negc: -1 / (2 * h * h),
		x: make([]float64, 2*m*d), bt: make([]float64, d*m),
		beta: make([]float64, m), dummy: make([]bool, m),
		u: make([]float64, m), delta: make([]float64, m), kg: make([]float64, m),
		dy: make([]float64, 2*m), grad: make([]float64, net.NumParams()),
	}
	for p := range 2 {
		t.ws[p] = net.NewWorkspace(m)
		t.grads[p] = make([]float64, net.NumParams())
		t.g[p] = make([]float64, m)
		t.karg[p] = make([]float64, d)
	}
	// Balance the triangle of pairs (i, j > i): row i has m - 1 - i of them.
	t.split = int(float64(m) * (1 - 1/math.Sqrt2))
	if workers > 1 {
		t.notify = make(chan struct{}, 1)
		t.done = make(chan struct{}, 1)
		go func() {
			for range t.notify {
				if v := t.slot.Load(); v != 0 && t.slot.CompareAndSwap(v, 0) {
					t.exec(int(v&3), 1)
					t.done <- struct{}{}
				}
			}
		}()
	}
	return t
}

func (t *neuralTrainer) close() {
	if t.notify != nil {
		close(t.notify)
	}
}

// heldOutCap is the largest number of held-out transitions whose pairwise
// loss is evaluated.
const heldOutCap = 2048

// newSampleTrainer returns a trainer on net loaded with a fixed sample of
// tr: all its transitions, each weighted by its sampling weight, if there
// are at most n of them, otherwise n transitions drawn with replacement
// in proportion to their weights (then unweighted). The training sample
// of Neural and the held-out set are built this way.
func newSampleTrainer(rng *rand.Rand, net *nn.MLP, tr *transitions, n int, h float64, workers int) *neuralTrainer {
	n = min(tr.len(), n)
	t := newNeuralTrainer(net, n, h, workers)
	idx := make([]int, n)
	if tr.len() <= n {
		for i := range idx {
			idx[i] = i
		}
		if tr.cum != nil { // uniform weights need none
			t.om = make([]float64, n)
		}
	} else {
		tr.draw(rng, idx)
	}
	t.fill(tr, idx)
	return t
}

// run executes both parts of a phase, part 1 on the helper goroutine if
// there is one and it claims it in time.
func (t *neuralTrainer) run(ph int) {
	if t.notify == nil {
		t.exec(ph, 0)
		t.exec(ph, 1)
		return
	}
	t.gen++
	v := t.gen<<2 | uint64(ph)
	t.slot.Store(v)
	select {
	case t.notify <- struct{}{}:
	default: // a nudge is already pending
	}
	t.exec(ph, 0)
	if t.slot.CompareAndSwap(v, 0) {
		t.exec(ph, 1) // the helper has not started: do it here
		return
	}
	<-t.done
}

func (t *neuralTrainer) exec(ph, p int) {
	m, d := t.m, t.d
	switch ph {
	case phaseForward:
		t.w[p] = t.net.Forward(t.ws[p], t.x[p*m*d:(p+1)*m*d], m)
	case phaseKernel:
		lo, hi := 0, t.split
		if p == 1 {
			lo, hi = t.split, m
		}
		t.kernelRows(p, lo, hi)
	case phaseBackward:
		t.net.Backward(t.ws[p], t.dy[p*m:(p+1)*m], t.grads[p])
	}
}

// kernelRows sets g[p] to the contributions of the kernel rows [lo, hi)
// off the diagonal: for i in the range and j > i, K_ij Delta_j to entry i
// and K_ij Delta_i to entry j (K is symmetric), so that the two parts
// together hold (K - I) Delta having evaluated each K_ij once.
func (t *neuralTrainer) kernelRows(p, lo, hi int) {
	m, d := t.m, t.d
	g := t.g[p]
	clear(g)
	y := t.karg[p][:d]
	for i := lo; i < hi; i++ {
		for k := range y {
			y[k] = t.bt[k*m+i]
		}
		n := m - i - 1
		gi := nn.RBFRow(n, t.bt[i+1:], m, y, t.negc, t.delta[i+1:], t.delta[i], g[i+1:])
		g[i] += gi
	}
}

// fill loads the transitions idx of tr into the minibatch, with their
// sampling weights if t.om is not nil.
func (t *neuralTrainer) fill(tr *transitions, idx []int) {
	m, d := t.m, t.d
	for k, i := range idx {
		if t.om != nil {
			t.om[k] = tr.weight[i]
		}
		copy(t.x[k*d:(k+1)*d], tr.s[i*d:(i+1)*d])
		copy(t.x[(m+k)*d:(m+k+1)*d], tr.next[i*d:(i+1)*d])
		for c := 0; c < d; c++ {
			t.bt[c*m+k] = tr.next[i*d+c]
		}
		t.beta[k] = tr.beta[i]
		t.dummy[k] = tr.dummy[i]
		if tr.test != nil {
			if t.vt == nil {
				t.vt = make([]float64, m)
			}
			t.vt[k] = tr.test[i]
		}
	}
}

// loss returns the kernel loss D of the current minibatch and, if grad is
// set, leaves its gradient with respect to the parameters in t.grad. With
// diag, D is the V-statistic (1/m^2) sum_{i,j} Delta_i Delta_j K_ij;
// without, the U-statistic 1/(m(m-1)) sum_{i != j}; with a value test
// function v, K is k + v v^T. With N the normalisation and g = K Delta
// (or K Delta less its diagonal),
//
//	dD/dDelta_i = 2 g_i / N
//	dD/dz = -sum_i dD/dDelta_i u_i / z^2,  u_i = beta_i w(s_i) - w(s'_i)
//	dD/dw(s_i) = dD/dDelta_i beta_i / z + [i not dummy] dD/dz / n_z
//	dD/dw(s'_i) = -dD/dDelta_i / z
func (t *neuralTrainer) loss(grad, diag bool) (float64, error) {
	m := t.m
	t.run(phaseForward)
	w, wn := t.w[0], t.w[1]
	z, nz, wz := 0.0, 0, 0.0
	for i, dm := range t.dummy {
		if !dm {
			o := 1.0
			if t.om != nil {
				o = t.om[i]
			}
			z += o * w[i]
			wz += o
			nz++
		}
	}
	if nz == 0 || !(wz > 0) {
		// Only dummies: no normalisation is defined; skip the step.
		clear(t.grad)
		return 0, nil
	}
	z /= wz
	if !(z > 0) || math.IsInf(z, 0) {
		return 0, fmt.Errorf("mean network output %v (training diverged)", z)
	}
	for i := range t.u {
		t.u[i] = t.beta[i]*w[i] - wn[i]
		c := 0.0
		if t.dummy[i] {
			c = 1
		}
		t.delta[i] = c + t.u[i]/z
	}
	mm := float64(m) * float64(m-1)
	if diag {
		mm = float64(m) * float64(m)
	}
	if t.om != nil { // weighted: Delta_i o_i, normalised by sum_{i != j} o_i o_j
		s, s2 := 0.0, 0.0
		for i, o := range t.om {
			t.delta[i] *= o
			s += o
			s2 += o * o
		}
		mm = s*s - s2
		if diag {
			mm = s * s
		}
	}
	t.run(phaseKernel)
	// The value test function adds v v^T to the kernel (a rank-one
	// term: the loss over the unit ball of the summed kernel's RKHS).
	sv := 0.0
	for i, v := range t.vt {
		sv += v * t.delta[i]
	}
	D := 0.0
	for i := range t.kg {
		t.kg[i] = t.g[0][i] + t.g[1][i]
		if diag {
			t.kg[i] += t.delta[i] // K_ii = 1
		}
		if t.vt != nil {
			t.kg[i] += t.vt[i] * sv
			if !diag {
				t.kg[i] -= t.vt[i] * t.vt[i] * t.delta[i]
			}
		}
		D += t.delta[i] * t.kg[i]
	}
	D /= mm
	if math.IsNaN(D) || math.IsInf(D, 0) {
		return 0, fmt.Errorf("loss %v (training diverged)", D)
	}
	if !grad {
		return D, nil
	}
	dz := 0.0
	for i, gi := range t.kg {
		G := 2 * gi / mm
		if t.om != nil {
			G *= t.om[i]
		}
		dz -= G * t.u[i]
	}
	dz /= z * z
	for i, gi := range t.kg {
		G := 2 * gi / mm
		if t.om != nil {
			G *= t.om[i]
		}
		t.dy[i] = G * t.beta[i] / z
		if !t.dummy[i] {
			if t.om != nil {
				t.dy[i] += dz * t.om[i] / wz
			} else {
				t.dy[i] += dz / float64(nz)
			}
		}
		t.dy[m+i] = -G / z
	}
	t.run(phaseBackward)
	for k := range t.grad {
		t.grad[k] = t.grads[0][k] + t.grads[1][k]
	}
	return D, nil
}
