package policy

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/integrate/quad"
)

// constMean returns a truncated Gaussian on [-2, 2] whose mean is mu
// whatever the (length-1) observation: a 1 -> 1 network with zero weight
// and bias mu.
func constMean(t testing.TB, mu, std float64) *TruncGaussian {
	t.Helper()
	p, err := NewTruncGaussian(&MLP{Sizes: []int{1, 1}, Params: []float64{0, mu}}, std, []float64{-2}, []float64{2})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var obs0 = []float64{0}

// Reference values from mpmath at 60 digits:
// log(erfc(x/sqrt(2))/2).
func TestLogQ(t *testing.T) {
	for i, c := range []struct{ x, want float64 }{
		{-3, -0.0013508099647481937988},
		{0, -0.69314718055994530942},
		{1, -1.8410216450092635058},
		{5, -15.064998393988725736},
		{10, -53.231285150512470578},
		{38, -726.5572160188201301},
		{40, -804.60844201375378817},
		{100, -5005.5242086942050886},
		{1e4, -50000010.129278915181},
		{math.Inf(1), math.Inf(-1)},
	} {
		got := logQ(c.x)
		if !scalar.EqualWithinAbsOrRel(got, c.want, 1e-15, 1e-13) && got != c.want {
			t.Errorf("case %d: logQ(%v) = %.17g, want %.17g", i, c.x, got, c.want)
		}
	}
}

// The continued fraction and the erfc formula are independent; where both
// are accurate they must agree.
func TestMillsBranchesAgree(t *testing.T) {
	for x := 8.0; x <= 30; x += 0.5 {
		a, b := logMillsErfc(x), logMillsCF(x)
		if !scalar.EqualWithinAbsOrRel(a, b, 0, 1e-12) {
			t.Errorf("x=%v: erfc gives %.17g, continued fraction %.17g", x, a, b)
		}
	}
}

// Reference values from mpmath at 60 digits of
// log phi((a-mu)/s) - log s - log(Phi((2-mu)/s) - Phi((-2-mu)/s))
// and of its derivative in mu.
func TestTruncGaussianLogProb(t *testing.T) {
	for i, c := range []struct {
		a, mu, std float64
		want, dmu  float64 // dmu is NaN when not checked
		absTol     float64
	}{
		{0.3, 0, 1, -0.9173706209122825749, 0.2999999999999999889, 1e-14},
		{1.9, 0.5, 0.5, -4.144440255640892224, 5.6088727031727686608, 1e-14},
		{2, 10, 0.5, 3.4696047211149588578, 0.12404197930901210872, 1e-14},
		{-2, 10, 0.5, -156.53039527888504114, math.NaN(), 1e-12},
		{1.99, 1000, 1, -3.0742957196790328971, -0.0089979980040220367712, 1e-12},
		{-1.5, -3, 0.1, -57.88506828969814965, 49.019067660374874822, 1e-12},
		{0, 1e6, 0.5, -7999976.7981970809176, math.NaN(), 1e-8},
		{2, 1e6, 0.5, 15.201802919082414721, math.NaN(), 1e-8},
		{2, -40, 1, -156.36172251438454265, math.NaN(), 1e-12},
		{-1.999, -40, 1, 3.6002769856154615399, -0.025279466575869097656, 1e-12},
	} {
		p := constMean(t, c.mu, c.std)
		a := []float64{c.a}
		if got := p.LogProb(obs0, a); !scalar.EqualWithinAbsOrRel(got, c.want, c.absTol, 1e-13) {
			t.Errorf("case %d: log pi(%v) with mu=%v std=%v is %.17g, want %.17g", i, c.a, c.mu, c.std, got, c.want)
		}
		if math.IsNaN(c.dmu) {
			continue
		}
		// The output bias is mu itself, so its gradient is d log pi / d mu.
		grad := make([]float64, 2)
		p.AddGradLogProb(obs0, a, grad)
		if !scalar.EqualWithinAbsOrRel(grad[1], c.dmu, 1e-12, 1e-10) {
			t.Errorf("case %d: d log pi/d mu = %.17g, want %.17g", i, grad[1], c.dmu)
		}
	}
	p := constMean(t, 0, 1)
	for _, a := range []float64{-2.0001, 2.0001, math.Inf(1)} {
		if got := p.LogProb(obs0, []float64{a}); !math.IsInf(got, -1) {
			t.Errorf("log pi(%v) outside the box = %v, want -Inf", a, got)
		}
	}
}

// integrate integrates f over [lo, hi] by Gauss-Legendre on panels whose
// breakpoints crowd geometrically towards both ends and around mu, so
// densities that live within 1e-12 of a bound or within a narrow bump are
// resolved.
func integrate(f func(float64) float64, lo, hi, mu, std float64) float64 {
	pts := []float64{lo, hi}
	for k := 0; k < 45; k++ {
		h := (hi - lo) / 2 * math.Pow(2, -float64(k))
		pts = append(pts, lo+h, hi-h)
	}
	for k := -12; k <= 12; k++ {
		pts = append(pts, mu+float64(k)*std)
	}
	slices.Sort(pts)
	sum := 0.0
	for i := 1; i < len(pts); i++ {
		a, b := math.Max(pts[i-1], lo), math.Min(pts[i], hi)
		if b > a {
			sum += quad.Fixed(f, a, b, 30, quad.Legendre{}, 0)
		}
	}
	return sum
}

func TestTruncGaussianIntegratesToOne(t *testing.T) {
	for i, c := range []struct{ mu, std float64 }{
		{0, 1}, {0.5, 0.5}, {0, 0.01}, {1.95, 0.02}, {0, 20}, {-1, 3},
		{3, 0.5}, {10, 0.5}, {-50, 1}, {1e3, 0.3}, {-1e6, 0.5},
	} {
		p := constMean(t, c.mu, c.std)
		got := integrate(func(a float64) float64 {
			return math.Exp(p.LogProb(obs0, []float64{a}))
		}, -2, 2, c.mu, c.std)
		if math.Abs(got-1) > 1e-6 {
			t.Errorf("case %d: mu=%v std=%v: density integrates to %.12f", i, c.mu, c.std, got)
		}
	}
}

// TestTruncGaussianSample checks the sampler against the exact CDF with a
// Kolmogorov-Smirnov statistic at the 1% level (critical value 1.628/sqrt(n)).
// The cases cover every branch of truncStdRand: normal rejection, uniform
// proposals around 0 and in a tail, and exponential proposals in both tails.
func TestTruncGaussianSample(t *testing.T) {
	const n = 20000
	for i, c := range []struct{ mu, std float64 }{
		{0, 1},      // normal rejection
		{0.5, 0.5},  // normal rejection
		{0, 100},    // uniform around 0
		{-1, 2.5},   // uniform in the upper tail: alpha=0.4, beta=1.2
		{-3, 0.1},   // exponential, upper tail: alpha=10, beta=50
		{5, 2},      // exponential, lower tail
		{2.5, 0.01}, // far lower tail: beta=-50
		{1e4, 1},    // very far: all mass within ~1e-4 of 2
	} {
		p := constMean(t, c.mu, c.std)
		rng := rand.New(rand.NewPCG(uint64(i)+1, 7))
		xs := make([]float64, n)
		for k := range xs {
			a := p.Sample(rng, obs0)
			if a[0] < -2 || a[0] > 2 {
				t.Fatalf("case %d: sample %v outside [-2, 2]", i, a[0])
			}
			xs[k] = a[0]
		}
		slices.Sort(xs)
		alpha, beta := (-2-c.mu)/c.std, (2-c.mu)/c.std
		d := 0.0
		for k, x := range xs {
			f := truncStdCDF((x-c.mu)/c.std, alpha, beta)
			d = max(d, math.Abs(f-float64(k)/n), math.Abs(f-float64(k+1)/n))
		}
		if d*math.Sqrt(n) > 1.628 {
			t.Errorf("case %d: mu=%v std=%v: KS statistic sqrt(n) D = %.3f > 1.628", i, c.mu, c.std, d*math.Sqrt(n))
		}
	}
}

// A broken mean must not hang the sampler.
func TestTruncGaussianSampleBrokenMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, mu := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		p := constMean(t, 0, 1)
		p.Mean.Params[1] = mu
		if got := p.Sample(rng, obs0)[0]; !math.IsNaN(got) {
			t.Errorf("mean %v: sample %v, want NaN", mu, got)
		}
	}
}

// finite-difference check of the score through a hidden layer.
func TestTruncGaussianGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	m, err := NewMLP(rng, 3, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	m.Params[len(m.Params)-1] = 1.2 // push the mean towards the upper bound
	p, err := NewTruncGaussian(m, 0.4, []float64{-2}, []float64{2})
	if err != nil {
		t.Fatal(err)
	}
	obs := []float64{0.3, -0.8, 2.5}
	a := []float64{1.7}
	grad := make([]float64, m.NumParams())
	lp := p.AddGradLogProb(obs, a, grad)
	if lp != p.LogProb(obs, a) {
		t.Errorf("AddGradLogProb returns %v, LogProb %v", lp, p.LogProb(obs, a))
	}
	const h = 1e-6
	for j := range m.Params {
		v := m.Params[j]
		m.Params[j] = v + h
		up := p.LogProb(obs, a)
		m.Params[j] = v - h
		down := p.LogProb(obs, a)
		m.Params[j] = v
		fd := (up - down) / (2 * h)
		if !scalar.EqualWithinAbsOrRel(grad[j], fd, 1e-7, 1e-6) {
			t.Errorf("parameter %d: gradient %.10g, finite difference %.10g", j, grad[j], fd)
		}
	}
}

func TestMLPForward(t *testing.T) {
	// y = tanh(x0) + tanh(x1) + 0.5: identity hidden weights.
	m := &MLP{Sizes: []int{2, 2, 1}, Params: []float64{1, 0, 0, 1, 0, 0, 1, 1, 0.5}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	x := []float64{0.5, -0.25}
	want := 0.46211715726000974 - 0.24491866240370913 + 0.5
	if got := m.Forward(x)[0]; math.Abs(got-want) > 1e-15 {
		t.Errorf("Forward = %.17g, want %.17g", got, want)
	}
	grad := make([]float64, m.NumParams())
	m.AddGrad(x, []float64{2}, grad)
	t0, t1 := math.Tanh(0.5), math.Tanh(-0.25)
	wantGrad := []float64{
		2 * (1 - t0*t0) * 0.5, 2 * (1 - t0*t0) * -0.25, // W1 row 0
		2 * (1 - t1*t1) * 0.5, 2 * (1 - t1*t1) * -0.25, // W1 row 1
		2 * (1 - t0*t0), 2 * (1 - t1*t1), // b1
		2 * t0, 2 * t1, 2, // W2, b2
	}
	for j := range grad {
		if math.Abs(grad[j]-wantGrad[j]) > 1e-15 {
			t.Errorf("gradient %d = %.17g, want %.17g", j, grad[j], wantGrad[j])
		}
	}
	for i, bad := range []*MLP{
		{Sizes: []int{2}, Params: nil},
		{Sizes: []int{2, 0, 1}, Params: nil},
		{Sizes: []int{2, 1}, Params: []float64{1, 2}},
		{Sizes: []int{1, 1}, Params: []float64{math.NaN(), 0}},
	} {
		if bad.Validate() == nil {
			t.Errorf("case %d: Validate accepts %+v", i, bad)
		}
	}
}

func TestContinuousMixture(t *testing.T) {
	a, b := constMean(t, -1.5, 0.1), constMean(t, 1.5, 0.3)
	for i, c := range []struct{ alpha, x float64 }{
		{0.3, -1.4}, {0.3, 1.2}, {0.3, 0}, {0, 1.2}, {1, -1.4}, {0.9, 0.7},
	} {
		m, err := NewContinuousMixture(c.alpha, a, b)
		if err != nil {
			t.Fatal(err)
		}
		x := []float64{c.x}
		want := math.Log((1-c.alpha)*math.Exp(a.LogProb(obs0, x)) + c.alpha*math.Exp(b.LogProb(obs0, x)))
		if got := m.LogProb(obs0, x); !scalar.EqualWithinAbsOrRel(got, want, 1e-13, 1e-13) {
			t.Errorf("case %d: log mixture = %.17g, want %.17g", i, got, want)
		}
		// Panels crowd around a's mode; b's wider bump at 1.5 falls on
		// the geometric panels [1, 1.5] and [1.5, 1.75].
		total := integrate(func(v float64) float64 { return math.Exp(m.LogProb(obs0, []float64{v})) }, -2, 2, -1.5, 0.1)
		if math.Abs(total-1) > 1e-6 {
			t.Errorf("case %d: mixture density integrates to %.12f", i, total)
		}
	}

	// Both components far below their modes: each density underflows to
	// exp(-7000) and beyond, the mixture's log-density must stay finite.
	far1, far2 := constMean(t, 10, 0.1), constMean(t, 12, 0.1)
	m, _ := NewContinuousMixture(0.25, far1, far2)
	x := []float64{-2}
	l1, l2 := far1.LogProb(obs0, x), far2.LogProb(obs0, x)
	want := math.Log(0.75) + l1 + math.Log1p(0.25/0.75*math.Exp(l2-l1))
	if got := m.LogProb(obs0, x); math.IsInf(l1, 0) || !scalar.EqualWithinAbsOrRel(got, want, 0, 1e-14) {
		t.Errorf("far tails: log mixture = %v, want %v (components %v, %v)", got, want, l1, l2)
	}

	// Sampling picks B with probability alpha: the components barely
	// overlap, so the share of positive actions estimates alpha.
	m, _ = NewContinuousMixture(0.3, a, b)
	rng := rand.New(rand.NewPCG(11, 0))
	const n = 40000
	pos := 0
	for range n {
		if m.Sample(rng, obs0)[0] > 0 {
			pos++
		}
	}
	// P(B's draw > 0) = 1 - 2e-6 with std 0.3 and mean 1.5; 4 standard errors.
	if frac, se := float64(pos)/n, math.Sqrt(0.3*0.7/n); math.Abs(frac-0.3) > 4*se {
		t.Errorf("share of B's draws %v, want 0.3 +- %v", frac, 4*se)
	}

	if _, err := NewContinuousMixture(1.5, a, b); err == nil {
		t.Error("mixing ratio 1.5 accepted")
	}
}

func TestTruncGaussianJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	m, _ := NewMLP(rng, 3, 4, 1)
	p, err := NewTruncGaussian(m, 0.7, []float64{-2}, []float64{2})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	q, err := ReadTruncGaussian(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Mean.Params, q.Mean.Params) || !slices.Equal(p.Mean.Sizes, q.Mean.Sizes) || p.Std != q.Std ||
		!slices.Equal(p.Low, q.Low) || !slices.Equal(p.High, q.High) {
		t.Errorf("round trip changed the policy:\n%+v\n%+v", p, q)
	}
	for i, bad := range []string{
		``,
		`{"type":"gaussian","mean":{"sizes":[1,1],"params":[0,0]},"std":1,"low":[-2],"high":[2]}`,
		`{"type":"trunc-gaussian","mean":{"sizes":[1,1],"params":[0]},"std":1,"low":[-2],"high":[2]}`,
		`{"type":"trunc-gaussian","mean":{"sizes":[1,1],"params":[0,0]},"std":0,"low":[-2],"high":[2]}`,
		`{"type":"trunc-gaussian","mean":{"sizes":[1,1],"params":[0,0]},"std":1,"low":[2],"high":[-2]}`,
		`{"type":"trunc-gaussian","mean":{"sizes":[1,1],"params":[0,0]},"std":1,"low":[-2,-2],"high":[2,2]}`,
		`{"type":"trunc-gaussian","mean":{"sizes":[1,1],"params":[0,0]},"std":1,"low":[-2],"high":[2],"extra":1}`,
	} {
		if _, err := ReadTruncGaussian(strings.NewReader(bad)); err == nil {
			t.Errorf("case %d: ReadTruncGaussian accepts %s", i, bad)
		}
	}
}

func ExampleTruncGaussian() {
	// A one-dimensional policy on [-2, 2] whose mean is 1 + 0.5 x.
	mean := &MLP{Sizes: []int{1, 1}, Params: []float64{0.5, 1}}
	p, err := NewTruncGaussian(mean, 0.5, []float64{-2}, []float64{2})
	if err != nil {
		fmt.Println(err)
		return
	}
	obs := []float64{2} // mean 2, on the upper bound: half the mass is cut off
	fmt.Printf("mean %.1f\n", p.MeanAction(obs)[0])
	fmt.Printf("log density at 2: %.6f\n", p.LogProb(obs, []float64{2}))
	fmt.Printf("log density at 3: %v\n", p.LogProb(obs, []float64{3}))
	// Output:
	// mean 2.0
	// log density at 2: 0.467356
	// log density at 3: -Inf
}

func ExampleNewContinuousMixture() {
	low, high := []float64{-2}, []float64{2}
	a, _ := NewTruncGaussian(&MLP{Sizes: []int{1, 1}, Params: []float64{0, -1}}, 0.5, low, high)
	b, _ := NewTruncGaussian(&MLP{Sizes: []int{1, 1}, Params: []float64{0, 1}}, 0.5, low, high)
	m, _ := NewContinuousMixture(0.25, a, b) // 0.75 a + 0.25 b
	obs, act := []float64{0}, []float64{0}
	fmt.Printf("%.6f %.6f %.6f\n", a.LogProb(obs, act), b.LogProb(obs, act), m.LogProb(obs, act))
	// Output:
	// -2.202778 -2.202778 -2.202778
}

func BenchmarkTruncGaussianLogProb(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	m, _ := NewMLP(rng, 3, 32, 1)
	p, _ := NewTruncGaussian(m, 0.5, []float64{-2}, []float64{2})
	obs, a := []float64{0.6, 0.8, -1.2}, []float64{0.4}
	for b.Loop() {
		p.LogProb(obs, a)
	}
}

func BenchmarkTruncGaussianSample(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	m, _ := NewMLP(rng, 3, 32, 1)
	p, _ := NewTruncGaussian(m, 0.5, []float64{-2}, []float64{2})
	obs := []float64{0.6, 0.8, -1.2}
	for b.Loop() {
		p.Sample(rng, obs)
	}
}

func BenchmarkTruncGaussianGrad(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	m, _ := NewMLP(rng, 3, 32, 1)
	p, _ := NewTruncGaussian(m, 0.5, []float64{-2}, []float64{2})
	obs, a := []float64{0.6, 0.8, -1.2}, []float64{0.4}
	grad := make([]float64, m.NumParams())
	for b.Loop() {
		p.AddGradLogProb(obs, a, grad)
	}
}

// truncStdCDF returns P(Z <= z) for the standard normal truncated to
// [alpha, beta].
func truncStdCDF(z, alpha, beta float64) float64 {
	if z <= alpha {
		return 0
	}
	if z >= beta {
		return 1
	}
	return math.Exp(logPhiDiff(alpha, z) - logPhiDiff(alpha, beta))
}
