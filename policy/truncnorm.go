package policy

import (
	"math"
	"math/rand/v2"
)

// This file holds the standard normal truncated to [alpha, beta], the
// building block of TruncGaussian, computed so that neither the density
// nor its normaliser underflows however far the interval lies in a tail.
//
// With Z = Phi(beta) - Phi(alpha) and Q = 1 - Phi, the log-density at z is
//
//	log phi(z) - log Z.
//
// If alpha >= 0 the interval lies in the upper tail and
//
//	Z = Q(alpha) - Q(beta) = phi(alpha) M(alpha) (1 - Q(beta)/Q(alpha)),
//
// where M(x) = Q(x)/phi(x) is Mills' ratio, so
//
//	log phi(z) - log Z = (alpha-z)(alpha+z)/2 - log M(alpha) - log(1 - Q(beta)/Q(alpha)),
//
// a difference of squares formed without ever forming z^2 or alpha^2
// (which would lose all digits when both are 1e12). The lower tail
// (beta <= 0) is the mirror image. If alpha < 0 < beta, then
// 2Z = erf(beta/sqrt2) + erf(-alpha/sqrt2) is a sum of two positive terms
// and is formed directly, without cancellation.

const (
	logSqrt2Pi = 0.91893853320467274178 // log(sqrt(2 pi))
	sqrt2      = math.Sqrt2
)

// logMills returns log M(x) = log(Q(x)/phi(x)) for x >= 0.
func logMills(x float64) float64 {
	if x < 8 {
		return logMillsErfc(x)
	}
	return logMillsCF(x)
}

// logMillsErfc computes log M(x) from erfc, which keeps full relative
// accuracy in the tail; exp(x^2/2) overflows beyond x = 37, and its
// rounding grows with x^2, so it serves x < 8.
func logMillsErfc(x float64) float64 {
	return math.Log(0.5*math.Erfc(x/sqrt2)) + 0.5*x*x + logSqrt2Pi
}

// logMillsCF computes log M(x) from Laplace's continued fraction
// M(x) = 1/(x+1/(x+2/(x+3/(x+...)))), evaluated bottom-up; at x >= 8
// sixty terms reach full double precision.
func logMillsCF(x float64) float64 {
	if math.IsInf(x, 1) {
		return math.Inf(-1)
	}
	f := x
	for k := 60; k >= 1; k-- {
		f = x + float64(k)/f
	}
	return -math.Log(f)
}

// logQ returns log Q(x) = log(1 - Phi(x)).
func logQ(x float64) float64 {
	if x >= 0 {
		if math.IsInf(x, 1) {
			return math.Inf(-1)
		}
		return -0.5*x*x - logSqrt2Pi + logMills(x)
	}
	return math.Log1p(-0.5 * math.Erfc(-x/sqrt2))
}

// log1mExp returns log(1 - exp(x)) for x <= 0 (Maechler's recipe).
func log1mExp(x float64) float64 {
	if x > -math.Ln2 {
		return math.Log(-math.Expm1(x))
	}
	return math.Log1p(-math.Exp(x))
}

// logPhiDiff returns log(Phi(b) - Phi(a)) for a < b.
func logPhiDiff(a, b float64) float64 {
	switch {
	case a >= 0:
		la := logQ(a)
		return la + log1mExp(logQ(b)-la)
	case b <= 0:
		return logPhiDiff(-b, -a)
	default:
		return math.Log(0.5 * (math.Erf(b/sqrt2) - math.Erf(a/sqrt2)))
	}
}

// truncLogPDF returns the log-density at a of the normal N(mu, s^2)
// truncated to [lo, hi] (lo < hi); -Inf outside the interval. In the tail
// cases the difference of squares is formed from the raw arguments, so
// that (lo-a)/s keeps its digits even when mu is a thousand standard
// deviations away.
func truncLogPDF(a, mu, s, lo, hi float64) float64 {
	if math.IsNaN(a) || math.IsNaN(mu) {
		return math.NaN()
	}
	if a < lo || a > hi {
		return math.Inf(-1)
	}
	alpha, beta := (lo-mu)/s, (hi-mu)/s
	switch {
	case alpha >= 0:
		// (alpha^2 - z^2)/2 with alpha - z = (lo-a)/s, alpha + z = (lo+a-2mu)/s.
		return 0.5*((lo-a)/s)*((lo-mu)/s+(a-mu)/s) - logMills(alpha) -
			log1mExp(logQ(beta)-logQ(alpha)) - math.Log(s)
	case beta <= 0:
		// mirror image: (beta^2 - z^2)/2 with beta - z = (hi-a)/s.
		return 0.5*((hi-a)/s)*((hi-mu)/s+(a-mu)/s) - logMills(-beta) -
			log1mExp(logQ(-alpha)-logQ(-beta)) - math.Log(s)
	default:
		z := (a - mu) / s
		return -0.5*z*z - logSqrt2Pi - logPhiDiff(alpha, beta) - math.Log(s)
	}
}

// truncDLogZ returns (phi(alpha) - phi(beta)) / Z for alpha = (lo-mu)/s,
// beta = (hi-mu)/s and Z = Phi(beta) - Phi(alpha): the derivative of
// log Z with respect to mu, times s.
func truncDLogZ(mu, s, lo, hi float64) float64 {
	alpha, beta := (lo-mu)/s, (hi-mu)/s
	switch {
	case alpha >= 0:
		return tailDLogZ(alpha, beta, (hi-lo)/s)
	case beta <= 0:
		return -tailDLogZ(-beta, -alpha, (hi-lo)/s)
	default:
		lz := logPhiDiff(alpha, beta)
		pa, pb := 0.0, 0.0
		if !math.IsInf(alpha, -1) {
			pa = math.Exp(-0.5*alpha*alpha - logSqrt2Pi - lz)
		}
		if !math.IsInf(beta, 1) {
			pb = math.Exp(-0.5*beta*beta - logSqrt2Pi - lz)
		}
		return pa - pb
	}
}

// tailDLogZ is truncDLogZ for 0 <= alpha < beta = alpha + width:
// phi(alpha)/Z = 1/(M(alpha)(1-r)) with r = Q(beta)/Q(alpha), and
// phi(beta)/Z = phi(alpha)/Z * exp(-(beta-alpha)(beta+alpha)/2).
func tailDLogZ(alpha, beta, width float64) float64 {
	g := -logMills(alpha) - log1mExp(logQ(beta)-logQ(alpha))
	pa := math.Exp(g)
	if math.IsInf(beta, 1) {
		return pa
	}
	return pa - math.Exp(g-0.5*width*(alpha+beta))
}

// truncStdRand draws from the standard normal truncated to [alpha, beta]
// (alpha < beta, either may be infinite) by rejection, with the proposal
// of Robert (1995) that fits the interval: the normal itself for a wide
// interval around 0, a uniform for a narrow one, and a translated
// exponential with rate (a + sqrt(a^2+4))/2 in a tail. Every branch
// accepts at least about a fifth of its proposals.
//
// References:
//
//	Robert, C. P. (1995). Simulation of truncated normal variables.
//	Statistics and Computing 5(2), 121-125.
func truncStdRand(rng *rand.Rand, alpha, beta float64) float64 {
	if !(alpha < beta) {
		// A NaN or infinite mean: no distribution to draw from. NaN
		// propagates to the caller instead of looping forever.
		return math.NaN()
	}
	switch {
	case beta <= 0:
		return -truncStdRand(rng, -beta, -alpha)
	case alpha < 0: // 0 inside (alpha, beta)
		if beta-alpha >= 2.5 {
			for {
				z := rng.NormFloat64()
				if z >= alpha && z <= beta {
					return z
				}
			}
		}
		for {
			z := alpha + (beta-alpha)*rng.Float64()
			if rng.Float64() <= math.Exp(-0.5*z*z) {
				return z
			}
		}
	default: // 0 <= alpha < beta
		lambda := 0.5 * (alpha + math.Sqrt(alpha*alpha+4))
		if (beta-alpha)*lambda < 1 {
			for {
				z := alpha + (beta-alpha)*rng.Float64()
				if rng.Float64() <= math.Exp(0.5*(alpha-z)*(alpha+z)) {
					return z
				}
			}
		}
		for {
			z := alpha - math.Log(1-rng.Float64())/lambda
			if z > beta {
				continue
			}
			d := z - lambda
			if rng.Float64() <= math.Exp(-0.5*d*d) {
				return z
			}
		}
	}
}
