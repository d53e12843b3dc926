package ring

import "math"

// The functions below give the exact moments of the trajectory-wise
// importance weight on the ring (Appendix B), for the behavior policy that
// picks R with probability rho and the target that picks it with
// probability 1 - rho.
//
// Horizon convention: as in the paper's Proposition, the trajectory is
// tau = {s_t, a_t, r_t} for 0 <= t <= T, that is T+1 steps, and
//
//	w_{0:T}(tau) = prod_{t=0}^{T} pi(a_t|s_t)/pi0(a_t|s_t) = C^(2F - (T+1)),
//	R^T(tau)     = F / (T+1),
//
// with C = (1-rho)/rho and F ~ Binomial(T+1, rho) the number of R actions.
// For a log of L steps per episode, pass T = L-1.
//
// All functions return NaN unless 0 < rho < 1 and T >= 0.

// A returns A_rho = (rho^3 + (1-rho)^3) / ((1-rho) rho)
// = 1 + (1-2 rho)^2 / (rho (1-rho)), the per-step growth factor of the
// weight's second moment: E[w_{0:T}^2] = A_rho^(T+1).
func A(rho float64) float64 {
	if !(rho > 0 && rho < 1) {
		return math.NaN()
	}
	return 1 + aMinus1(rho)
}

// aMinus1 returns A_rho - 1 = (1-2 rho)^2 / (rho (1-rho)) without the
// cancellation of the paper's form near rho = 1/2.
func aMinus1(rho float64) float64 {
	d := 1 - 2*rho
	return d * d / (rho * (1 - rho))
}

// B returns B_{rho,T} = rho (1-rho) / (T+1) + (1-rho)^4 / rho^2, so that
// E[(w_{0:T} R^T)^2] = B_{rho,T} A_rho^(T-1).
//
// Erratum: the paper prints (1-rho)^4 / rho for the second term. Its own
// derivation gives B = (C/(T+1) + C^4) rho^2 = rho (1-rho)/(T+1) +
// (1-rho)^4/rho^2 (the printed "(C/(T+1) + rho C^4) rho^2" has a spurious
// rho), and only this form reproduces the paper's Remark that the variance
// is 1/(4(T+1)) at rho = 1/2; the tests check it against the exact
// binomial law of F.
func B(rho float64, T int) float64 {
	if !(rho > 0 && rho < 1) || T < 0 {
		return math.NaN()
	}
	q := 1 - rho
	return rho*q/float64(T+1) + q*q*q*q/(rho*rho)
}

// WeightVariance returns Var_{pi0}[w_{0:T}] = A_rho^(T+1) - 1 for a
// trajectory of T+1 steps t = 0..T (Appendix B, Proposition on the
// trajectory-wise weight). It is computed as expm1((T+1) log1p(A_rho-1)),
// accurate also near rho = 1/2 where the variance is small.
func WeightVariance(rho float64, T int) float64 {
	if !(rho > 0 && rho < 1) || T < 0 {
		return math.NaN()
	}
	return math.Expm1(float64(T+1) * math.Log1p(aMinus1(rho)))
}

// WeightRewardVariance returns Var_{pi0}[w_{0:T} R^T] =
// B_{rho,T} A_rho^(T-1) - (1-rho)^2, the variance of one trajectory's term
// in the trajectory-wise IS estimate of the target's average reward
// R_pi = 1 - rho (same Proposition, with B corrected as documented at B).
func WeightRewardVariance(rho float64, T int) float64 {
	if !(rho > 0 && rho < 1) || T < 0 {
		return math.NaN()
	}
	q := 1 - rho
	return B(rho, T)*math.Pow(A(rho), float64(T-1)) - q*q
}

// WISVariance returns D_{rho,T} A_rho^T = E_{pi0}[w_{0:T}^2 (R^T - R_pi)^2],
// the asymptotic variance of the trajectory-wise WIS estimate from n
// trajectories times n: E[(R_wis - R_pi)^2] = WISVariance/n + o(1/n)
// (Appendix B, the WIS proposition), with R_pi = 1 - rho and
//
//	D_{rho,T} = B_{rho,T}/A_rho - 2 (1-rho)^3/rho + (1-rho)^2 A_rho
//
// using the corrected B_{rho,T}.
func WISVariance(rho float64, T int) float64 {
	if !(rho > 0 && rho < 1) || T < 0 {
		return math.NaN()
	}
	q := 1 - rho
	a := A(rho)
	// Sum the three moments separately, as in the proof, rather than
	// factoring out A^T: E[w^2 R^2] - 2 R_pi E[w^2 R] + R_pi^2 E[w^2].
	at := math.Pow(a, float64(T))
	return B(rho, T)*at/a - 2*q*q*q/rho*at + q*q*at*a
}
