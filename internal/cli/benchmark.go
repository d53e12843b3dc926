package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ihope-ope/ihope/figure"
	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/research/benchmark"
	"github.com/ihope-ope/ihope/research/experiment"
)

type benchmarkCmd struct {
	Suite     string `default:"all" enum:"cobs,dice,paper,all" help:"Suite of worlds: cobs (COBS's Graph, ToyMC, ModelFail, ModelWin), dice (dice_rl's GridWalk), paper (Taxi and the ring) or all."`
	Seeds     int    `help:"Seeds per cell (default: 20, 2 with --quick)."`
	gridFlags `embed:""`
	Quick     bool `help:"Small logs, three targets per world, two seeds (a smoke test in seconds); files get .quick in their names."`
}

func (c *benchmarkCmd) Run(e *runEnv) error {
	if c.Seeds < 0 || c.ParallelCells < 0 {
		return usagef("--seeds and --parallel-cells must not be negative")
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
		r := &experiment.Runner{Dir: c.OutDir, Seeds: c.Seeds, Workers: c.ParallelCells, Quick: c.Quick}
		sum, err := runGrid(ctx, e, r, s.Experiment())
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
	figs, err := writeBoard(board, base, figureBase(c), c.Suite)
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
	return filepath.Join(c.OutDir, name)
}

// figureBase returns the base of the leaderboard's figures,
// DIR/leaderboard (".quick" in quick mode): a suite's figure draws its
// results file, which a run of that suite alone and a run of all share.
func figureBase(c *benchmarkCmd) string {
	if c.Quick {
		return filepath.Join(c.OutDir, "leaderboard.quick")
	}
	return filepath.Join(c.OutDir, "leaderboard")
}

// writeBoard writes base.md, base.json and the figures of the suites
// (figs-SUITE.png and .svg; for "all" one per suite and one of every
// world) and returns the figures' files.
func writeBoard(b *benchmark.Board, base, figs, suite string) ([]string, error) {
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
	files, _, err := figure.WriteAll(figs, panels, lines)
	return files, err
}
