package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/ihope-ope/ihope/figure"
	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/internal/progress"
	"github.com/ihope-ope/ihope/internal/words"
	"github.com/ihope-ope/ihope/research/experiment"
	_ "github.com/ihope-ope/ihope/research/experiment/paper" // registers the paper's experiments
	"github.com/ihope-ope/ihope/sim/traci"
)

type experimentCmd struct {
	Name      string `arg:"" help:"Experiment to run (see 'ihope experiment list'), or list."`
	Seeds     int    `help:"Seeds per setting (default: the experiment's, 100 for the paper's figures, 2 with --quick)."`
	gridFlags `embed:""`
	Quick     bool `help:"A tiny grid with few seeds (a smoke test in seconds); results go to NAME.quick.jsonl."`
}

func (c *experimentCmd) Run(e *runEnv) error {
	if c.Name == "list" {
		return listExperiments(e.stdout)
	}
	exp, ok := experiment.Lookup(c.Name)
	if !ok {
		return usagef("unknown experiment %q: choose from %s (or list)", c.Name, strings.Join(experiment.Names(), ", "))
	}
	if c.Seeds < 0 || c.ParallelCells < 0 {
		return usagef("--seeds and --parallel-cells must not be negative")
	}
	if c.Name == "sumo" {
		if _, err := traci.LookPath(""); err != nil {
			return fmt.Errorf("the traffic experiment drives the SUMO simulator: %w (Debian/Ubuntu; it also provides netconvert)", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runExperiment(ctx, e, exp, c)
}

// runExperiment runs the grid, then draws the figures and prints the
// summary. Tests call it with their own context.
func runExperiment(ctx context.Context, e *runEnv, exp *experiment.Experiment, c *experimentCmd) error {
	r := &experiment.Runner{Dir: c.OutDir, Seeds: c.Seeds, Workers: c.ParallelCells, Quick: c.Quick}
	sum, err := runGrid(ctx, e, r, exp)
	if err != nil {
		return err
	}
	return drawResults(e, exp.Name, sum.File, sum.Panels, sum.Lines)
}

// runGrid runs an experiment's grid with a progress bar on a terminal
// and says on stderr what it found and computed; an interrupted run
// returns an error saying how to finish it.
func runGrid(ctx context.Context, e *runEnv, r *experiment.Runner, exp *experiment.Experiment) (*experiment.Summary, error) {
	start := time.Now()
	var bar *progressbar.ProgressBar
	if progress.IsTerminal(e.stderr) {
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

// drawResults draws the figures of one results file, prints the files,
// the notes and warnings (stderr) and the MSE table (stdout).
func drawResults(e *runEnv, name, file string, panels []results.Panel, lines []results.Line) error {
	base := strings.TrimSuffix(file, ".jsonl")
	files, notes, err := figure.WriteAll(base, panels, lines)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(e.stderr, "note:", n)
	}
	for _, w := range results.CheckTruth(panels, lines) {
		fmt.Fprintln(e.stderr, "warning:", w)
	}
	printSummary(e.stdout, name, panels, lines)
	fmt.Fprintf(e.stdout, "figures: %s\n", strings.Join(files, " "))
	return nil
}

// printSummary prints, for every panel, the log10 of each estimator's MSE
// over seeds at each setting, or "exact" for an MSE of 0 up to rounding
// (results.ExactMSE), whose log10 means nothing (metric panels: the
// metric's mean).
func printSummary(out io.Writer, name string, panels []results.Panel, lines []results.Line) {
	seeds := map[int]bool{}
	for _, l := range lines {
		seeds[l.Seed] = true
	}
	fmt.Fprintf(out, "%s: %s, %s\n", name, words.Plural(len(lines), "cell"), words.Plural(len(seeds), "seed"))
	for _, p := range panels {
		var series []results.Series
		what := "log10 MSE over seeds"
		switch p.Kind {
		case results.KindMSE:
			series = results.SummarizeMSE(p, lines)
		case results.KindMetric:
			series = []results.Series{results.SummarizeMetric(p, lines, p.Metric)}
			if p.Reference != "" {
				series = append(series, results.SummarizeMetric(p, lines, p.Reference))
			}
			what = "mean over seeds"
		default:
			continue
		}
		if len(series) == 0 || len(series[0].Points) == 0 {
			continue
		}
		label := p.XLabel
		if label == "" {
			label = p.XName
		}
		exact, anyExact := results.ExactMSE(p, lines), false
		fmt.Fprintf(out, "\n[%s] %s, vs %s\n", p.Name, what, label)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "\t")
		for _, pt := range series[0].Points {
			fmt.Fprintf(tw, "%s\t", pt.Setting)
		}
		fmt.Fprintln(tw)
		for _, s := range series {
			fmt.Fprintf(tw, "%s\t", s.Name)
			byID := map[string]results.Point{}
			for _, pt := range s.Points {
				byID[pt.Setting] = pt
			}
			for _, ref := range series[0].Points {
				pt, ok := byID[ref.Setting]
				switch {
				case !ok || math.IsNaN(pt.Mean):
					fmt.Fprint(tw, "-\t")
				case p.Kind == results.KindMSE && pt.Mean <= exact:
					fmt.Fprint(tw, "exact\t")
					anyExact = true
				case p.Kind == results.KindMSE:
					fmt.Fprintf(tw, "%s\t", words.Num("%.2f", math.Log10(pt.Mean)))
				default:
					fmt.Fprintf(tw, "%s\t", words.Num("%.4g", pt.Mean))
				}
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		if anyExact {
			fmt.Fprintf(out, "exact: MSE 0 up to rounding (at most %.3g), whose log10 would be -Inf or rounding noise\n", exact)
		}
	}
	fmt.Fprintln(out)
}

func listExperiments(out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "experiment\tseeds\tcells\tpanels\tdescription")
	for _, name := range experiment.Names() {
		exp, _ := experiment.Lookup(name)
		panels, err := exp.Panels(false)
		if err != nil {
			return fmt.Errorf("experiment %s: %w", name, err)
		}
		var names []string
		cells := 0
		for _, p := range panels {
			names = append(names, p.Name)
			k := exp.DefaultSeeds(false)
			if p.MaxSeeds > 0 {
				k = min(k, p.MaxSeeds)
			}
			cells += k * len(p.Settings)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", name, exp.DefaultSeeds(false), cells, strings.Join(names, ","), exp.Description)
	}
	return tw.Flush()
}
