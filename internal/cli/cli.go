package cli

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/ihope-ope/ihope/evaluate"
	"github.com/ihope-ope/ihope/internal/buildinfo"
	"github.com/ihope-ope/ihope/ratio"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1 // bad data, failed computation
	ExitUsage = 2 // bad flags or arguments
)

// app is the command tree.
type app struct {
	Version kong.VersionFlag `help:"Print ihope's version (module version and commit) and exit."`

	Demo       demoCmd       `cmd:"" help:"Compare every estimator on a built-in world against the exact truth."`
	Estimate   estimateCmd   `cmd:"" help:"Estimate a target policy's value from your own logs (CSV or Parquet)."`
	Sample     sampleCmd     `cmd:"" help:"Write logs sampled from a built-in world in the log contract."`
	Experiment experimentCmd `cmd:"" help:"Run one of the paper's experiments (a grid of settings x seeds), resumable, and draw its figures."`
	Benchmark  benchmarkCmd  `cmd:"" help:"Run every estimator on the benchmark worlds (COBS, dice_rl, the paper's) against exact truths, resumable, and write the leaderboard."`
	Plot       plotCmd       `cmd:"" help:"Redraw the figures of the results files in a directory without rerunning."`
	Train      trainCmd      `cmd:"" help:"Train the policies of the built-in worlds."`
}

// commandTree returns the command tree to parse args with: app, or when
// args start with the name of one of its commands, a tree of that command
// alone (and app's flags), which parses those args as app does. Building
// kong's model of a command parses its fields' tags and expands their
// help: for the whole tree that takes 2.2 ms and 780 kB in a warm process
// (BenchmarkCommandTree), for the estimate command alone 1 ms and 320 kB,
// and more in a fresh process, where every page of fresh memory costs a
// fault: a good part of a short run's start-up. The help and the mistakes
// of such args are the command's own, so they read the same
// (TestCommandTreeSame).
func commandTree(args []string) any {
	if len(args) == 0 {
		return new(app)
	}
	t := reflect.TypeFor[app]()
	var keep []reflect.StructField // app's flags and the command
	found := false
	for i := range t.NumField() {
		f := t.Field(i)
		_, cmd := f.Tag.Lookup("cmd")
		if cmd && strings.ToLower(f.Name) == args[0] {
			found = true
		} else if cmd {
			continue
		}
		keep = append(keep, f)
	}
	if !found {
		return new(app)
	}
	return reflect.New(reflect.StructOf(keep)).Interface()
}

// runEnv carries the streams a command writes to.
type runEnv struct {
	stdout, stderr io.Writer
	args           []string // the command line after the program's name, for reports
}

// Run parses args, runs the chosen verb and returns the exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	return runTree(commandTree(args), args, stdout, stderr)
}

// runTree is Run with the command tree given (see commandTree).
func runTree(tree any, args []string, stdout, stderr io.Writer) int {
	exit := -1
	parser, err := kong.New(tree,
		kong.Name("ihope"),
		kong.Description("Infinite-horizon off-policy estimation: how good would a target policy be, from logs of another?"),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exit = code }),
		kong.UsageOnError(),
		kong.Vars{"estimators": strings.Join(evaluate.LogEstimators, ", "), "version": buildinfo.Version(),
			"restarts": strconv.Itoa(ratio.DefaultRestarts), "neuralbatch": strconv.Itoa(ratio.DefaultBatchSize),
			"sampleiters": strconv.Itoa(ratio.DefaultSampleIters)},
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)
	if err != nil {
		fmt.Fprintln(stderr, "ihope:", err)
		return ExitError
	}
	ctx, err := parser.Parse(args)
	if exit >= 0 { // --help
		return exit
	}
	if err == nil {
		err = applyRenamed(ctx, stderr) // old flag names (renamed.go)
	}
	if err != nil {
		var pe *kong.ParseError
		if errors.As(err, &pe) {
			fmt.Fprintln(stderr, "ihope:", err)
			parser.Stdout = stderr // usage after a mistake is a message, not output
			pe.Context.PrintUsage(true)
			return ExitUsage
		}
		fmt.Fprintln(stderr, "ihope:", err)
		return ExitUsage
	}
	if err := ctx.Run(&runEnv{stdout: stdout, stderr: stderr, args: args}); err != nil {
		var ue usageError
		if errors.As(err, &ue) || evaluate.IsSettingsError(err) {
			fmt.Fprintln(stderr, "ihope:", err)
			return ExitUsage
		}
		fmt.Fprintln(stderr, "ihope:", err)
		return ExitError
	}
	return ExitOK
}

// usageError marks a mistake in flags that kong cannot see (e.g. an
// unknown estimator name).
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }
