// Package stream estimates from logs too large for memory: it reads
// sharded logs one shard at a time and keeps only the estimators'
// sufficient statistics, sums over episodes, so that memory does not grow
// with the number of steps.
//
// The estimators that stream are those whose statistics are sums
// (ope.Summer): naive, the IS and WIS variants (per-step sums indexed by
// t where step-wise WIS needs them, so memory grows with the longest
// episode), bch-tabular (the tabular problem aggregated by (s, s'),
// ratio.Counts, and per-state reward sums; Finish runs ratio.Tabular's own
// Solve), and the tabular learners of discrete states and actions,
// model-based and fqe under either estimand and mwl, dualdice and mql:
// their statistics are one ope.TabularCounts, the (s, a, s') counts, the
// reward sums per (s, a), the first-state counts and the (first state,
// length) pairs, filled once and shared by all of them (ope.CountSums).
// Finish builds the count model with value.NewCountModel (model-based,
// fqe: mdp.Value under the horizon estimand for model-based, else
// value.Tabular.FitCounts) or the state-action problem with
// kernelloss.FromCounts (mwl, dualdice: ratio.MWL.FitCounts,
// ratio.DualDICE.FitCounts; mql: value.MQL.FitCounts): the in-memory
// learners' own solves on the same numbers.
//
// bch-kernel streams in two passes (ope.TwoPassSums): its features depend
// on the whole log. The first pass (ratio.KernelPrep) keeps the states'
// per-dimension mean and variance, the number of episodes, and two
// bottom-k samples (the states and next states of smallest key, a fixed
// hash of the kernel's seed, the episode id and t: a uniform sample
// without replacement, the same whatever the order of the shards and on
// however many machines), plus the largest log(gamma^t beta). EndFirst
// fixes the scaling, the median bandwidth, the bumps' centres and the
// loss's frequencies. The second pass sums the loss's moments per
// cross-validation fold (folds by a hash of the episode id; with fewer
// than five episodes, blocks of steps) and per Poisson copy, and, since
// w is linear in its features, the estimate's sums sum_j q_j r_j phi(s_j)
// and sum_j q_j phi(s_j). Finish runs the in-memory fit's
// cross-validation and solve (ratio.Kernel.FitMoments). The in-memory fit
// draws the same samples and folds, so the two agree to rounding (1e-15
// relative measured). What a stream cannot hold: the largest step weight
// (WeightSummary.MaxShare) is exact for the 64 steps of largest
// gamma^t beta kept and bounded above for the others; a Signed fit, which
// counts the steps where w < 0, is refused. The bootstrap copies keep the
// first pass's features (the in-memory bootstrap refits them per
// resample), and each copy holds 5 (D_k + P) P floats of moments (2 MB at
// the defaults): memory grows with the resamples, not the steps.
//
// bch-neural streams in two passes as well (ope.SampleSums): the
// first keeps a sample of whole episodes (the smallest keys, a hash of
// the training seed and the episode id, up to Options.Reservoir steps:
// ope.ReservoirEpisodes), EndFirst trains the ensemble on it, and the
// second pass evaluates every network at every step and sums per network
// and copy, so that the estimate is the in-memory estimator's with that
// model on the whole log. Its statistics hold trained networks and do
// not encode (Movable): one machine only. The neural forms of fqe and mql
// (Options.ValueModel "neural") and of mwl and dualdice
// (Options.RatioModel "neural") stream the same way on the same shared
// piece: trained on the sample, their second pass sums the in-memory
// estimate's terms with that model (sum g0 v(s_0) for fqe and mql, with
// the maxima of fqe's bound on a diverged model; sum w r, sum w and the
// transitions for mwl and dualdice).
//
// fqe with the linear value learner (ope.LinearFQESums) streams in two
// passes too: value.LinearPrep fixes the scaling and the horizons and
// samples steps for the bound check, value.LinearMoments holds the
// LSTD-Q moments per copy, and the start states' expected features are
// summed per episode length.
//
// The others, which fit a model on all steps at once (the kernel forms
// of mwl, dualdice and mql on real states, mis, dr), are
// refused with a message that says so: run them on a log that fits in
// memory. The tabular learners on real states fail the same way, each
// under its own name (Applies tells beforehand).
//
// Intervals come from the Poisson bootstrap: episode i has multiplicity
// ope.PoissonCount(seed, id_i, r) in resample r, a Poisson(1) draw from a
// fixed hash of the seed, its id and r. So each of the B resamples is one
// more weighted copy of the same sums, filled in the same pass, and any
// machine computes any shard's share of every resample. The intervals
// are those of ope.Bootstrap with Poisson set, on the concatenated log,
// resample for resample.
//
// # One machine
//
// Files lists the shards (a glob or a directory, in lexical order),
// Reader reads them one after another (episodes may continue from one
// shard into the next, see Reader), and Stats accumulates:
//
//	stats, _ := stream.New(stream.Config{Estimators: names, Gamma: 1, Resamples: 200, Seed: 1})
//	r := stream.Reader{Files: files}
//	if stats.FirstPass() { // bch-kernel: a first pass over the shards
//		err = r.Each(stats.AddFirst)
//		stats.EndFirst()
//	}
//	err = r.Each(stats.Add)
//	res, err := stats.Finish()
//
// # Apache Beam, or any map-reduce
//
// A Stats is an associative, commutative accumulator (up to the order of
// floating-point summation), which is what a Beam CombineFn needs:
//
//   - CreateAccumulator: New(cfg), the same Config on every worker;
//   - AddInput: Add(d, 0, d.NumEpisodes()) for a shard read with
//     logio.ReadFileWith (whole episodes: shard the logs by episode, or
//     join episodes that cross shards before, as Reader does);
//   - MergeAccumulators: Merge;
//   - ExtractOutput: Finish, on the driver;
//   - with a first pass (FirstPass): one such combine over AddFirst,
//     EndFirst on the driver, and a second combine whose accumulators
//     all start from the ended statistics (beam/pipeline.Run);
//   - the coder: MarshalBinary and UnmarshalBinary (gob), or MarshalJSON
//     and UnmarshalJSON; both keep every float exactly.
//
// Merging shards in another order than the log's changes the sums by
// rounding only, which the estimates carry to about 1e-15 relative,
// bch-tabular's conjugate-gradient solve to about 1e-10, and the tabular
// learners' solves (dense LU by blocks, GMRES to a relative residual of
// 1e-13) to about 1e-14.
package stream
