// Package pipeline estimates from sharded logs on Apache Beam: each
// worker reads whole shards and reduces them to the sufficient statistics
// of package stream, the statistics are merged by a Beam combiner, and the
// driver's last step finishes them with the same solvers as ihope estimate
// and writes ihope estimate's JSON report.
//
// The pipeline, for shards f_1, ..., f_k:
//
//	files ──ReadShards──▶ one stream.Stats per shard (encoded) ──Combine(Merge)──▶ Stats of the whole log ──Finish──▶ JSON
//	      └─────────────▶ (episode id, shard) ──GroupByKey──▶ ids in two shards ──▶ (side input of Finish: refused)
//
// A Stats is an associative and commutative accumulator (up to the order
// of floating-point summation), so the runner may combine shards in any
// order and on any worker; the result is ihope estimate's on the same
// shards to about 1e-15 relative (1e-10 for bch-tabular's iterative
// solve). The Poisson bootstrap's multiplicities are a hash of the seed,
// the episode's id and the resample, so every worker draws its shards'
// share of every resample without talking to the others.
//
// Episodes. Each episode must lie within one shard (ihope estimate also
// joins an episode continued across ordered shards; a pipeline reads its
// shards independently). An episode continued from another shard starts
// at t > 0 and is refused by the reader naming the file, row and column;
// an id found in two shards is refused naming both.
//
// Failures. A shard whose bytes cannot be fetched (an I/O error, a
// refused permission, a file missing for a while) is read again by the
// same worker after waits of 0.5, 1, 2, 4, 8 and 16 s (ReadBackoff), and
// fails the pipeline naming the shard after the seventh attempt, 31.5 s
// on; a shard whose content is wrong fails the pipeline at once with the
// reader's error (file, row, column), as ihope estimate does. Runners
// that retry failed bundles (Dataflow, Flink, Spark) keep only the output
// of the attempt that succeeded, so a shard is never counted twice.
package pipeline
