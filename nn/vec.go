package nn

import "math"

// Constants of the exponential shared by the Go code and the assembly.
// exp(x) = 2^k e^r with k = round(x/ln 2) and r = x - k ln 2 (Cody-Waite
// split of ln 2), e^r from its Taylor polynomial of degree 12, accurate to
// a few ulp on |r| <= ln(2)/2.
const (
	expLo   = -708.0 // ExpTo gives 0 below, TanhTo saturates here
	expHi   = 709.0  // ExpTo saturates above (no +Inf)
	log2e   = 1.4426950408889634
	shifter = 0x1.8p52 // adding it rounds to an integer held in the low mantissa bits
	ln2hi   = 6.93147180369123816490e-01
	ln2lo   = 1.90821492927058770002e-10
	signBit = 1 << 63
)

// expCoef[n] = 1/n!.
var expCoef = [13]float64{
	1, 1, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
	1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600,
}

// ExpTo sets dst[i] = e^x[i] to within a few ulp, faster than math.Exp on
// slices. Arguments below -708 give 0, arguments above 709 give e^709
// (about 8.2e307, not +Inf) and NaN gives NaN. It panics if the lengths
// differ.
func ExpTo(dst, x []float64) {
	if len(dst) != len(x) {
		panic("nn: ExpTo length mismatch")
	}
	n := 0
	if useAVX2 && len(x) >= 4 {
		n = len(x) &^ 3
		expAVX2(&dst[0], &x[0], n)
	}
	for i := n; i < len(x); i++ {
		dst[i] = exp1(x[i])
	}
}

// TanhTo sets dst[i] = tanh(x[i]) to within a few ulp (computed from
// expm1(-2|x|), so small arguments keep their relative accuracy). NaN
// gives NaN. It panics if the lengths differ.
func TanhTo(dst, x []float64) {
	if len(dst) != len(x) {
		panic("nn: TanhTo length mismatch")
	}
	n := 0
	if useAVX2 && len(x) >= 4 {
		n = len(x) &^ 3
		tanhAVX2(&dst[0], &x[0], n)
	}
	for i := n; i < len(x); i++ {
		dst[i] = tanh1(x[i])
	}
}

// exp1 is the scalar twin of expAVX2: the same operations in the same
// order, with math.FMA where the assembly fuses.
func exp1(x float64) float64 {
	if x != x {
		return x
	}
	xc := x
	if xc < expLo {
		xc = expLo
	}
	if xc > expHi {
		xc = expHi
	}
	t := math.FMA(xc, log2e, shifter)
	kf := t - shifter
	r := math.FMA(-kf, ln2hi, xc)
	r = math.FMA(-kf, ln2lo, r)
	p := expCoef[12]
	for n := 11; n >= 0; n-- {
		p = math.FMA(p, r, expCoef[n])
	}
	y := math.Float64frombits(math.Float64bits(p) + math.Float64bits(t)<<52)
	if x < expLo {
		y = 0
	}
	return y
}

// tanh1 is the scalar twin of tanhAVX2:
//
//	tanh|x| = -m / (2 + m),   m = expm1(-2|x|) = 2^k (e^r - 1) + (2^k - 1),
//
// with the sign of x put back at the end.
func tanh1(x float64) float64 {
	y := math.Abs(x) * -2
	if y < expLo {
		y = expLo
	}
	t := math.FMA(y, log2e, shifter)
	kf := t - shifter
	r := math.FMA(-kf, ln2hi, y)
	r = math.FMA(-kf, ln2lo, r)
	q := expCoef[12]
	for n := 11; n >= 1; n-- {
		q = math.FMA(q, r, expCoef[n])
	}
	p1 := r * q
	s := math.Float64frombits(math.Float64bits(t)<<52 + math.Float64bits(1))
	m := math.FMA(s, p1, s-1)
	v := (0 - m) / (2 + m)
	return math.Float64frombits(math.Float64bits(v) | math.Float64bits(x)&signBit)
}
