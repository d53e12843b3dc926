// Package pointmass is a 2-d point mass (position, velocity) pushed by
// five discrete accelerations, with quadratic costs and a clipped
// velocity: a real-state, discrete-action world whose action value q is
// not quadratic, with a Monte Carlo truth.
//
// The dynamics, with time step Dt and action a in 0..4 pushing by
// Accel[a] in {-2, -1, 0, 1, 2},
//
//	v' = clip(v + Dt Accel[a] + SigmaV w1, -VMax, VMax),
//	x' = x + Dt v' + SigmaX w2,                         w1, w2 ~ N(0, 1),
//	r(s, a) = -(x^2 + CostV v^2 + CostU Accel[a]^2),
//	x_0 ~ N(0, InitX^2),  v_0 = clip(N(0, InitV^2), -VMax, VMax).
//
// Without the clip and with a linear controller this is linear-quadratic
// control and q is quadratic in the state. The clip (VMax = 0.5, on about
// 12% of the logged steps) makes the time to return to 0
// grow linearly with |x| and the cost paid on the way like |x|^3, and
// the discrete, saturated accelerations and the softmax policies add
// their own curvature: a quadratic value model misfits, higher-degree
// features do better (the reason the world exists: issue 29, model
// selection for the linear value model).
//
// A policy is a softmax around a linear controller (Controller):
// pi(a|s) proportional to exp(-Beta (Accel[a] - u*(s))^2) with
// u*(s) = -(KX x + KV v). The target steers firmly (KX 1, KV 1.5,
// Beta 2), the behavior softly (KX 0.5, KV 1, Beta 0.7), so every action
// has positive probability under both.
//
// The truth (Truth) is Monte Carlo with an explicit seed: for gamma < 1
// the normalised discounted value (1 - gamma) E_{s_0}[sum_t gamma^t r_t]
// over rollouts of the target truncated where gamma^t < 1e-9; for
// gamma = 1 the average reward, the mean reward over steps Burn..Burn+Len
// of long rollouts. Both come with their standard error over the
// rollouts; TruthDiscounted and TruthAverage are the values of 100,000
// rollouts (seed 1), which TestTruthConstants checks under IHOPE_LONG.
package pointmass
