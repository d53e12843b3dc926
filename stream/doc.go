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
// Solve) and model-based under the horizon estimand (the count model's
// counts; Finish builds it with value.NewCountModel and runs
// exact.Value). The others, which fit a model on all steps at once
// (neural and kernel learners, fqe, the minimax learners, dr), are
// refused with a message that says so: run them on a log that fits in
// memory.
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
// rounding only, which the estimates carry to about 1e-15 relative, and
// bch-tabular's conjugate-gradient solve to about 1e-10.
package stream
