// Package rank measures how well an estimator orders policies: the
// ranking its estimates give, Spearman's rank correlation with the true
// values, and the normalised regret of deploying the policy it ranks
// first.
//
// Off-policy evaluation is often used to choose among candidate
// policies rather than to value one, and an estimator with a larger
// error can still order the candidates right (a bias shared by every
// policy cancels). These are the two measures of that use in Voloshin et
// al. (2021) and in SCOPE-RL (Kiyohara et al., 2023).
//
// References:
//
//	C. Voloshin, H. M. Le, N. Jiang, Y. Yue. Empirical Study of Off-Policy
//	Policy Evaluation for Reinforcement Learning. NeurIPS Datasets and
//	Benchmarks, 2021.
//	H. Kiyohara, R. Kishimoto, K. Kawakami, K. Kobayashi, K. Nakata,
//	Y. Saito. Towards Assessing and Benchmarking Risk-Return Tradeoff of
//	Off-Policy Evaluation. ICLR 2024 (SCOPE-RL).
package rank
