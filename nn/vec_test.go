package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// withGo runs f with the assembly kernels switched off.
func withGo(f func()) {
	saved := useAVX2
	useAVX2 = false
	defer func() { useAVX2 = saved }()
	f()
}

func TestExpToTanhTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 0))
	const n = 100003
	x := make([]float64, n)
	for i := range x {
		x[i] = -720 + 1440*rng.Float64()
	}
	for i := 0; i < 2000; i++ { // dense near 0 for tanh
		x[i] = (rng.Float64() - 0.5) * 1e-3
	}
	x[2000], x[2001], x[2002], x[2003] = 0, math.Copysign(0, -1), math.NaN(), math.Inf(-1)
	x[2004], x[2005], x[2006], x[2007] = math.Inf(1), -708, 709, 5e-324

	for _, fn := range []struct {
		name string
		vec  func(dst, x []float64)
		ref  func(float64) float64
		tol  float64
	}{
		{"exp", ExpTo, math.Exp, 1e-15},
		{"tanh", TanhTo, math.Tanh, 1e-15},
	} {
		got := make([]float64, n)
		fn.vec(got, x)
		plain := make([]float64, n)
		withGo(func() { fn.vec(plain, x) })
		worst := 0.0
		for i, xi := range x {
			if math.Float64bits(got[i]) != math.Float64bits(plain[i]) && !(math.IsNaN(got[i]) && math.IsNaN(plain[i])) {
				t.Fatalf("%s(%v): assembly %v, Go %v", fn.name, xi, got[i], plain[i])
			}
			want := fn.ref(xi)
			switch {
			case fn.name == "exp" && xi < expLo:
				want = 0
			case fn.name == "exp" && xi > expHi:
				want = math.Exp(expHi)
			}
			if math.IsNaN(want) {
				if !math.IsNaN(got[i]) {
					t.Errorf("%s(%v) = %v, want NaN", fn.name, xi, got[i])
				}
				continue
			}
			if want == 0 {
				if got[i] != 0 || math.Signbit(got[i]) != math.Signbit(want) {
					t.Errorf("%s(%v) = %v, want %v", fn.name, xi, got[i], want)
				}
				continue
			}
			worst = max(worst, math.Abs(got[i]-want)/math.Abs(want))
		}
		if worst > fn.tol {
			t.Errorf("%s: worst relative error %g > %g", fn.name, worst, fn.tol)
		}
		t.Logf("%s: worst relative error %g", fn.name, worst)
	}
}
