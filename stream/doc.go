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
// fqe: exact.Value under the horizon estimand for model-based, else
// value.Tabular.FitCounts) or the state-action problem with
// minimax.FromCounts (mwl, dualdice: ratio.MWL.FitCounts,
// ratio.DualDICE.FitCounts; mql: value.MQL.FitCounts): the in-memory
// learners' own solves on the same numbers. The others, which fit a model
// on all steps at once (neural and kernel learners, the linear value
// learner, the neural forms of the minimax learners, mis, dr), are
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
//	err := r.Each(func(d *dataset.Dataset, lo, hi int) error { return stats.Add(d, lo, hi) })
//	res, err := stats.Finish()
//
// # Apache Beam, or any map-reduce
//
// A Stats is an associative, commutative accumulator (up to the order of
// floating-point summation), which is what a Beam CombineFn needs:
//
//   - CreateAccumulator: New(cfg), the same Config on every worker;
//   - AddInput: Add(d, 0, d.NumEpisodes()) for a shard read with
//     dataset.ReadFileWith (whole episodes: shard the logs by episode, or
//     join episodes that cross shards before, as Reader does);
//   - MergeAccumulators: Merge;
//   - ExtractOutput: Finish, on the driver;
//   - the coder: MarshalBinary and UnmarshalBinary (gob), or MarshalJSON
//     and UnmarshalJSON; both keep every float exactly.
//
// Merging shards in another order than the log's changes the sums by
// rounding only, which the estimates carry to about 1e-15 relative,
// bch-tabular's conjugate-gradient solve to about 1e-10, and the tabular
// learners' solves (dense LU by blocks, GMRES to a relative residual of
// 1e-13) to about 1e-14.
package stream
