package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/ihope-ope/ihope/benchmark"
	"github.com/ihope-ope/ihope/experiment"
	"github.com/ihope-ope/ihope/experiment/results"
	"github.com/ihope-ope/ihope/figure"
)

type benchmarkCmd struct {
	Suite   string `default:"all" enum:"cobs,dice,paper,all" help:"Suite of worlds: cobs (COBS's Graph, ToyMC, ModelFail, ModelWin), dice (dice_rl's GridWalk), paper (Taxi and the ring) or all."`
	Seeds   int    `help:"Seeds per cell (default: 20, 2 with --quick)."`
	Workers int    `help:"Cells computed at once (default: the number of CPUs)."`
	Out     string `default:"out" placeholder:"DIR" help:"Directory of the results files, the leaderboard and the figures (default: out)."`
	Quick   bool   `help:"Small logs, three targets per world, two seeds (a smoke test in seconds); files get .quick in their names."`
}

func (c *benchmarkCmd) Run(e *runEnv) error {
	if c.Seeds < 0 || c.Workers < 0 {
		return usagef("--seeds and --workers must not be negative")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runBenchmark(ctx, e, c)
}

// runBenchmark runs every suite's grid (resumable: each suite's results
// file keeps the finished cells), then writes the leaderboard and the
// figures. Tests call it with their own context.
func runBenchmark(ctx context.Context, e *runEnv, c *benchmarkCmd) error {
	start := time.Now()
	suites, err := benchmark.Suites(c.Suite)
	if err != nil {
		return usagef("%v", err)
	}
	var runs []benchmark.SuiteResults
	var files []string
	ran, found := 0, 0
	for _, s := range suites {
		sum, err := runSuite(ctx, e, c, s.Experiment())
		if err != nil {
			return err
		}
		ran, found = ran+sum.Ran, found+sum.Found
		worlds, err := s.Worlds(c.Quick)
		if err != nil {
			return err
		}
		runs = append(runs, benchmark.SuiteResults{Suite: s, Worlds: worlds, Lines: sum.Lines})
		// One figure per world: the MSE of every estimator per target.
		figs, notes, err := figure.WriteAll(strings.TrimSuffix(sum.File, ".jsonl"), sum.Panels, sum.Lines)
		if err != nil {
			return err
		}
		files = append(files, figs...)
		for _, n := range notes {
			fmt.Fprintln(e.stderr, "note:", n)
		}
	}
	board := benchmark.Build(runs, c.Quick)
	board.Seconds, board.Ran, board.Found = time.Since(start).Seconds(), ran, found
	base := leaderboardBase(c)
	figs, err := writeBoard(board, base, c.Suite)
	if err != nil {
		return err
	}
	files = append(files, figs...)
	if err := board.WriteMarkdown(e.stdout); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\nleaderboard: %s.md %s.json\nfigures: %s\n", base, base, strings.Join(files, " "))
	return nil
}

// runSuite runs one suite's grid with a progress bar on a terminal.
func runSuite(ctx context.Context, e *runEnv, c *benchmarkCmd, exp *experiment.Experiment) (*experiment.Summary, error) {
	start := time.Now()
	r := &experiment.Runner{Dir: c.Out, Seeds: c.Seeds, Workers: c.Workers, Quick: c.Quick}
	var bar *progressbar.ProgressBar
	if isTerminal(e.stderr) {
		r.Progress = func(done, total int) {
			if bar == nil {
				bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(e.stderr),
					progressbar.OptionSetDescription(exp.Name), progressbar.OptionShowCount(),
					progressbar.OptionSetElapsedTime(true), progressbar.OptionSetPredictTime(true),
					progressbar.OptionClearOnFinish())
			}
			bar.Set(done)
		}
	}
	sum, err := r.Run(ctx, exp)
	if bar != nil {
		bar.Finish()
	}
	if sum != nil && sum.Repaired {
		fmt.Fprintf(e.stderr, "%s: dropped a torn last line left by an interrupted run\n", sum.File)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) && sum != nil {
			return nil, fmt.Errorf("interrupted: %d cells saved in %s; run the same command again to finish the rest", len(sum.Lines), sum.File)
		}
		return nil, err
	}
	fmt.Fprintf(e.stderr, "%s: %d cells (%d computed now, %d found) in %s\n", sum.File, len(sum.Lines), sum.Ran, sum.Found,
		time.Since(start).Round(100*time.Millisecond))
	return sum, nil
}

// leaderboardBase returns the leaderboard's path without extension:
// DIR/leaderboard for every suite, DIR/leaderboard-SUITE for one, with
// ".quick" in quick mode, so that a quick or partial run never
// overwrites the full leaderboard.
func leaderboardBase(c *benchmarkCmd) string {
	name := "leaderboard"
	if c.Suite != benchmark.All {
		name += "-" + c.Suite
	}
	if c.Quick {
		name += ".quick"
	}
	return filepath.Join(c.Out, name)
}

// writeBoard writes base.md, base.json and the figures of the suites
// (base-SUITE.png and .svg; for "all" one per suite and one of every
// world) and returns the figures' files.
func writeBoard(b *benchmark.Board, base, suite string) ([]string, error) {
	md, err := os.Create(base + ".md")
	if err != nil {
		return nil, err
	}
	if err := b.WriteMarkdown(md); err != nil {
		md.Close()
		return nil, err
	}
	if err := md.Close(); err != nil {
		return nil, err
	}
	js, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(base+".json", append(js, '\n'), 0o644); err != nil {
		return nil, err
	}
	names := b.Suites
	if suite == benchmark.All {
		names = append(append([]string(nil), names...), benchmark.All)
	}
	var panels []results.Panel
	var lines []results.Line
	for _, name := range names {
		p, l := b.Figure(name)
		panels, lines = append(panels, p), append(lines, l...)
	}
	files, _, err := figure.WriteAll(base, panels, lines)
	return files, err
}
