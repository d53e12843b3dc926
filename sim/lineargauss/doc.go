// Package lineargauss is a linear-Gaussian control system whose off-policy
// evaluation truth is known in closed form, the test bench of the
// continuous-state density-ratio estimator (package ratio).
//
// The state follows s' = A s + B u + w with Gaussian noise w, a policy is
// u = K s + c + v with Gaussian v (untruncated, exact log-density), and the
// reward is quadratic (or linear) in s and u. Under a policy the states
// form a Gaussian AR(1) chain s' = M s + B c + e with M = A + B K, so when
// the spectral radius of M is below 1 the stationary distribution is
// Gaussian,
//
//	d_pi = N(mu, S),  mu = (I - M)^{-1} B c,  S = M S M' + W  (discrete Lyapunov),
//
// W = Noise + B Cov B'. Hence the paper's stationary ratio
// w(s) = d_pi(s)/d_pi0(s) (Section 3) is a ratio of two Gaussian densities,
// and the average reward, the finite-horizon discounted value and
// E_{d_pi0}[w^2] all have closed forms (System.Stationary,
// System.AverageReward, System.Value, Ratio).
//
// Discrete is a discrete-action variant (pushes -1, 0, +1 chosen by a
// softmax of the state), whose state distributions are not Gaussian: its
// truth is computed by quadrature (a Nystrom solve to about 1e-12)
// instead; DiscreteProblem is its ready-made (system, target, behavior).
//
// Problem1D and Problem2D are ready-made (system, target, behavior) triples
// whose reset distribution is the behavior's stationary law, so that
// logged states are exactly d_pi0-distributed at every step.
package lineargauss
