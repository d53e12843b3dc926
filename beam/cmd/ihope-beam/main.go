// Command ihope-beam estimates from sharded logs on Apache Beam: the same
// estimators, statistics and JSON report as ihope estimate --data GLOB
// --json, computed by a Beam pipeline (package pipeline).
//
//	ihope-beam --input 'logs/*.parquet' --gamma 1 --output result.json [--bootstrap B] [--runner prism|dataflow|flink|spark|universal] [Beam's flags]
//
// The runner is Beam's Go-native Prism by default, in this process. The
// estimators that apply are chosen from the first shard, as ihope
// estimate does, by the driver, which reads that shard once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/ihope-ope/ihope/beam/pipeline"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/evaluate"
)

var (
	input      = flag.String("input", "", "Shards: a glob ('logs/*.parquet', quoted) or a directory of .csv, .tsv, .csv.gz, .tsv.gz or .parquet files; gs://bucket/glob on Google Cloud.")
	output     = flag.String("output", "", "File to write the report to: ihope estimate's JSON (gs:// on Google Cloud).")
	gamma      = flag.Float64("gamma", 1, "Discount in (0, 1]: 1 estimates the average reward.")
	bootstrap  = flag.Int("bootstrap", 0, "Poisson bootstrap resamples for intervals (0: none).")
	seed       = flag.Uint64("seed", 1, "Seed of the Poisson bootstrap.")
	alpha      = flag.Float64("alpha", 0.05, "1 - the intervals' level.")
	estimators = flag.String("estimators", "", "Comma-separated estimators (default: the streamable ones of ihope estimate's default set that apply).")
	estimand   = flag.String("estimand", "", "horizon or long-run (default: as ihope estimate).")
	valueModel = flag.String("value-model", "", "fqe's value learner: linear streams LSTD-Q on real states with discrete actions (default: tabular); neural, which also picks mql's neural form, is refused: its networks, trained in one process, have no encoding (run ihope estimate --data).")
	format     = flag.String("format", "", "The shards' format when their names do not say it: csv, tsv, csv.gz, tsv.gz or parquet.")
	verbose    = flag.Bool("verbose", false, "Show Beam's and the runner's own log messages (warnings and errors only otherwise).")
)

func main() {
	flag.Parse()
	if !*verbose {
		beamlog.LogLevel = "warn" // Prism logs every job's progress at level info
	}
	beam.Init()
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "ihope-beam:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	if *input == "" || *output == "" {
		return errors.New("--input and --output are required")
	}
	var o logio.ReadOptions
	if *format != "" {
		f, err := logio.ParseFormat(*format)
		if err != nil {
			return err
		}
		o.Format = f
	}
	var names []string
	if *estimators != "" {
		names = strings.Split(*estimators, ",")
	}
	c, err := pipeline.NewConfig(ctx, *input, *output, o, evaluate.StreamOptions{Estimators: names, Gamma: *gamma,
		Bootstrap: *bootstrap, Seed: *seed, Alpha: *alpha, Estimand: *estimand, ValueModel: *valueModel})
	if err != nil {
		return err
	}
	return pipeline.Run(ctx, c, beamx.Run)
}
