package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/ihope-ope/ihope/figure/results"
)

// Runner runs an experiment's grid of (setting x seed) cells in parallel
// and appends each finished cell to the results file at once.
type Runner struct {
	// Dir is the output directory; it is created if missing.
	Dir string
	// Seeds is the number of seeds 0..Seeds-1; 0 means the experiment's
	// default for the mode.
	Seeds int
	// Workers is the number of cells computed at once; 0 means the
	// number of CPUs.
	Workers int
	// Quick selects the experiment's tiny grid and its own results file.
	Quick bool
	// Progress, if not nil, is called with the number of cells done
	// (those found in the results file included) and the total: once
	// before the first cell and after every cell written. Calls are
	// serialised.
	Progress func(done, total int)
}

// Summary describes a finished (or interrupted) run.
type Summary struct {
	// File is the results file.
	File string
	// Panels is the experiment's grid as the figures see it.
	Panels []results.Panel
	// Lines are the cells of the file at the seeds run (canonical order
	// after a complete run): a file that holds more seeds from an earlier
	// run keeps them, but the summary, and so the table and figures drawn
	// from it, has only the seeds asked for.
	Lines []results.Line
	// Found counts cells already in the file, Ran the cells computed now.
	Found, Ran int
	// Repaired reports that a torn last line was dropped.
	Repaired bool
}

// job is one computation: a setting key at one seed, and the cells
// (panel, setting) that receive its outcome.
type job struct {
	seed    int
	targets []target
}

type target struct{ panel, setting int }

// Run runs every missing cell of e and returns the summary. A cell's
// outcome does not depend on Workers or on the order of the cells, so an
// interrupted run resumed later ends with the same results file as an
// uninterrupted one: after the last cell the file is rewritten in
// canonical order. When ctx is cancelled, cells in flight are abandoned,
// finished cells stay in the file, and Run returns ctx's error with the
// summary so far.
func (r *Runner) Run(ctx context.Context, e *Experiment) (*Summary, error) {
	panels, err := r.grid(e)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return nil, err
	}
	sum := &Summary{File: results.FileName(r.Dir, e.Name, r.Quick), Panels: Describe(panels)}
	valid, done, err := readPrevious(sum, e.Name)
	if err != nil {
		return nil, err
	}
	seeds := r.seeds(e)
	jobs, total := planJobs(panels, seeds, done, sum)
	defer func() { sum.Lines = seedsBelow(sum.Lines, seeds) }()

	app, err := results.OpenAppender(sum.File, int64(valid))
	if err != nil {
		return nil, err
	}
	defer app.Close()
	out := &collector{app: app, sum: sum, done: sum.Found, total: total, progress: r.Progress}
	if err := r.runJobs(ctx, e.Name, panels, jobs, out); err != nil {
		return sum, err
	}
	if err := ctx.Err(); err != nil && out.done < total {
		return sum, err
	}
	return sum, finish(app, sum)
}

// grid returns e's panels for the runner's mode, checked.
func (r *Runner) grid(e *Experiment) ([]Panel, error) {
	panels, err := e.Panels(r.Quick)
	if err != nil {
		return nil, fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	if err := checkPanels(e.Name, panels); err != nil {
		return nil, err
	}
	return panels, nil
}

// seeds returns the number of seeds to run.
func (r *Runner) seeds(e *Experiment) int {
	if r.Seeds > 0 {
		return r.Seeds
	}
	return e.DefaultSeeds(r.Quick)
}

// workers returns the number of cells computed at once.
func (r *Runner) workers() int {
	if r.Workers > 0 {
		return r.Workers
	}
	return runtime.NumCPU()
}

// readPrevious reads the cells already in the results file sum.File
// (missing: none) into sum.Lines, keeping the first of duplicate cells,
// and notes in sum.Repaired whether a torn last line was dropped. It
// returns the length of the file's valid prefix and the keys of the
// cells found.
func readPrevious(sum *Summary, name string) (valid int, done map[string]bool, err error) {
	data, err := os.ReadFile(sum.File)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, nil, err
	}
	old, valid, err := results.Parse(sum.File, data)
	if err != nil {
		return 0, nil, err
	}
	sum.Repaired = valid < len(data)
	done = map[string]bool{}
	for _, l := range old {
		if l.Experiment != name {
			return 0, nil, fmt.Errorf("%s holds results of experiment %q, not %q", sum.File, l.Experiment, name)
		}
		if done[l.Key()] {
			continue // a duplicate (two runs on one file): keep the first
		}
		done[l.Key()] = true
		sum.Lines = append(sum.Lines, l)
	}
	return valid, done, nil
}

// seedsBelow returns the lines of seeds 0..seeds-1, in order.
func seedsBelow(lines []results.Line, seeds int) []results.Line {
	out := lines[:0:0]
	for _, l := range lines {
		if l.Seed < seeds {
			out = append(out, l)
		}
	}
	return out
}

// planJobs returns the jobs computing the cells of seeds 0..seeds-1 not
// in done, and the number of cells of the grid; it counts the cells found
// done in sum.Found. The jobs are seed-major, so that an interrupted run
// covers every setting evenly; cells sharing a Key at a seed form one job.
func planJobs(panels []Panel, seeds int, done map[string]bool, sum *Summary) (jobs []*job, total int) {
	for seed := range seeds {
		byKey := map[string]*job{}
		for pi, p := range panels {
			if p.MaxSeeds > 0 && seed >= p.MaxSeeds {
				continue
			}
			for si, s := range p.Settings {
				total++
				if done[results.CellKey(p.Name, s.ID, seed)] {
					sum.Found++
					continue
				}
				k := s.Key
				if k == "" {
					k = "\x00" + p.Name + "/" + s.ID
				}
				j, ok := byKey[k]
				if !ok {
					j = &job{seed: seed}
					byKey[k] = j
					jobs = append(jobs, j)
				}
				j.targets = append(j.targets, target{pi, si})
			}
		}
	}
	return jobs, total
}

// runJobs computes the jobs, r.workers() at a time, and hands each job's
// lines to out as soon as it is done. It returns the first error of a job
// or of a write; the jobs not started by then are skipped and those in
// flight abandoned. A job's error caused by a cancelled ctx is not
// returned: Run then reports ctx's own error if cells are missing.
func (r *Runner) runJobs(ctx context.Context, exp string, panels []Panel, jobs []*job, out *collector) error {
	cache, perSeed := &memo{}, newSeedMemos(jobs)
	out.report()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.workers())
	for _, j := range jobs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			lines, err := runJob(gctx, exp, panels, j, cache, perSeed.get(j.seed))
			perSeed.done(j.seed)
			if err != nil {
				if gctx.Err() != nil {
					return nil // cancelled: by ctx, or after an earlier error
				}
				return err
			}
			return out.add(lines)
		})
	}
	return g.Wait()
}

// finish closes the results file, rewrites it in canonical order and
// reads it back into sum.Lines.
func finish(app *results.Appender, sum *Summary) error {
	if err := app.Close(); err != nil {
		return err
	}
	if err := results.WriteCanonical(sum.File, sum.Panels, sum.Lines); err != nil {
		return err
	}
	var err error
	sum.Lines, _, err = results.Read(sum.File)
	return err
}

// collector appends finished cells to the results file and the summary
// and reports progress. add is called from the workers; it serialises
// the writes and the calls of progress.
type collector struct {
	mu          sync.Mutex
	app         *results.Appender
	sum         *Summary
	done, total int
	progress    func(done, total int)
}

// add appends the lines of one job, each with one write.
func (c *collector) add(lines []results.Line) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range lines {
		if err := c.app.Append(&l); err != nil {
			return fmt.Errorf("write %s: %w", c.sum.File, err)
		}
		c.sum.Lines = append(c.sum.Lines, l)
		c.sum.Ran++
		c.done++
		c.report()
	}
	return nil
}

// report calls progress, if set, with the cells done so far.
func (c *collector) report() {
	if c.progress != nil {
		c.progress(c.done, c.total)
	}
}

// runJob computes one job and returns its lines, one per target cell.
func runJob(ctx context.Context, exp string, panels []Panel, j *job, cache, seedCache *memo) ([]results.Line, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := panels[j.targets[0].panel]
	first := p.Settings[j.targets[0].setting]
	c := &Cell{Experiment: exp, Seed: j.seed, memo: cache, seedMemo: seedCache}
	out, err := first.Run(ctx, c)
	if err == nil && out == nil {
		err = errors.New("no outcome")
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("experiment %s, panel %s, setting %s, seed %d: %w", exp, p.Name, first.ID, j.seed, err)
	}
	if ctx.Err() != nil { // interrupted: the cell may be incomplete
		return nil, ctx.Err()
	}
	lines := make([]results.Line, len(j.targets))
	for k, t := range j.targets {
		p := panels[t.panel]
		lines[k] = newLine(exp, p, p.Settings[t.setting], j.seed, out)
	}
	return lines, nil
}

// newLine returns the results line of the cell of panel p at setting s
// and seed, from the outcome of its job: in MSE panels the records with
// their squared errors against the truth of their estimand (a failed
// estimator's estimate and error NaN), the metrics, and the vectors if p
// keeps them.
func newLine(exp string, p Panel, s Setting, seed int, out *Outcome) results.Line {
	l := results.Line{
		Experiment:  exp,
		Panel:       p.Name,
		Setting:     s.ID,
		XName:       p.XName,
		X:           results.Float(s.X),
		Tick:        s.Tick,
		Seed:        seed,
		Truth:       results.Float(out.Truth),
		TruthSE:     results.Float(out.TruthSE),
		TruthMethod: out.TruthMethod,
	}
	if len(out.Truths) > 0 {
		l.Truths = make(map[string]results.Float, len(out.Truths))
		for name, v := range out.Truths {
			l.Truths[name] = results.Float(v)
		}
	}
	if p.Kind == results.KindMSE {
		l.Records = make([]results.Record, len(out.Records))
		for i, rec := range out.Records {
			if rec.Error == "" {
				d := float64(rec.Estimate) - l.TruthOf(&rec)
				rec.SqError = results.Float(d * d)
			} else {
				rec.Estimate, rec.SqError = results.Float(math.NaN()), results.Float(math.NaN())
			}
			l.Records[i] = rec
		}
	}
	if len(out.Metrics) > 0 {
		l.Metrics = make(map[string]results.Float, len(out.Metrics))
		for name, v := range out.Metrics {
			l.Metrics[name] = results.Float(v)
		}
	}
	if p.KeepVectors && len(out.Vectors) > 0 {
		l.Vectors = make(map[string][]results.Float, len(out.Vectors))
		for name, v := range out.Vectors {
			fv := make([]results.Float, len(v))
			for i, x := range v {
				fv[i] = results.Float(x)
			}
			l.Vectors[name] = fv
		}
	}
	return l
}
