package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"

	"github.com/ihope-ope/ihope/experiment/results"
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
	// Lines are all cells of the file (canonical order after a complete
	// run).
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
	panels, err := e.Panels(r.Quick)
	if err != nil {
		return nil, fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	if err := checkPanels(e.Name, panels); err != nil {
		return nil, err
	}
	seeds := r.Seeds
	if seeds <= 0 {
		seeds = e.DefaultSeeds(r.Quick)
	}
	workers := r.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return nil, err
	}
	path := results.FileName(r.Dir, e.Name, r.Quick)
	sum := &Summary{File: path, Panels: Describe(panels)}

	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	old, valid, err := results.Parse(path, data)
	if err != nil {
		return nil, err
	}
	sum.Repaired = valid < len(data)
	done := map[string]bool{}
	for _, l := range old {
		if l.Experiment != e.Name {
			return nil, fmt.Errorf("%s holds results of experiment %q, not %q", path, l.Experiment, e.Name)
		}
		if done[l.Key()] {
			continue // a duplicate (two runs on one file): keep the first
		}
		done[l.Key()] = true
		sum.Lines = append(sum.Lines, l)
	}

	// The grid, seed-major so that an interrupted run covers every
	// setting evenly; cells sharing a Key at a seed form one job.
	var jobs []*job
	total := 0
	for seed := range seeds {
		byKey := map[string]*job{}
		for pi, p := range panels {
			if p.MaxSeeds > 0 && seed >= p.MaxSeeds {
				continue
			}
			for si, s := range p.Settings {
				total++
				key := results.CellKey(p.Name, s.ID, seed)
				if done[key] {
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

	app, err := results.OpenAppender(path, int64(valid))
	if err != nil {
		return nil, err
	}
	defer app.Close()

	var (
		mu       sync.Mutex // guards the file, sum, ndone, firstErr
		ndone    = sum.Found
		firstErr error
		wg       sync.WaitGroup
		next     = make(chan *job)
		cache    = &memo{}
		perSeed  = newSeedMemos(jobs)
	)
	if r.Progress != nil {
		r.Progress(ndone, total)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range min(workers, max(1, len(jobs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				lines, err := runJob(runCtx, e.Name, panels, j, cache, perSeed.get(j.seed))
				perSeed.done(j.seed)
				mu.Lock()
				if err != nil {
					if firstErr == nil && runCtx.Err() == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
					continue
				}
				for _, l := range lines {
					if err := app.Append(&l); err != nil {
						if firstErr == nil {
							firstErr = fmt.Errorf("write %s: %w", path, err)
							cancel()
						}
						break
					}
					sum.Lines = append(sum.Lines, l)
					sum.Ran++
					ndone++
					if r.Progress != nil {
						r.Progress(ndone, total)
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case next <- j:
		case <-runCtx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()

	if firstErr != nil {
		return sum, firstErr
	}
	if err := ctx.Err(); err != nil && ndone < total {
		return sum, err
	}
	if err := app.Close(); err != nil {
		return sum, err
	}
	if err := results.WriteCanonical(path, sum.Panels, sum.Lines); err != nil {
		return sum, err
	}
	sum.Lines, _, err = results.Read(path)
	return sum, err
}

// runJob computes one job and returns its lines, one per target cell.
func runJob(ctx context.Context, exp string, panels []Panel, j *job, cache, seedCache *memo) ([]results.Line, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	first := panels[j.targets[0].panel].Settings[j.targets[0].setting]
	c := &Cell{Experiment: exp, Seed: j.seed, memo: cache, seedMemo: seedCache}
	out, err := first.Run(ctx, c)
	if err == nil && out == nil {
		err = errors.New("no outcome")
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		p := panels[j.targets[0].panel]
		return nil, fmt.Errorf("experiment %s, panel %s, setting %s, seed %d: %w", exp, p.Name, first.ID, j.seed, err)
	}
	if ctx.Err() != nil { // interrupted: the cell may be incomplete
		return nil, ctx.Err()
	}
	lines := make([]results.Line, len(j.targets))
	for k, t := range j.targets {
		p := panels[t.panel]
		s := p.Settings[t.setting]
		l := results.Line{
			Experiment:  exp,
			Panel:       p.Name,
			Setting:     s.ID,
			XName:       p.XName,
			X:           results.Float(s.X),
			Tick:        s.Tick,
			Seed:        j.seed,
			Truth:       results.Float(out.Truth),
			TruthSE:     results.Float(out.TruthSE),
			TruthMethod: out.TruthMethod,
		}
		if p.Kind == results.KindMSE {
			l.Records = make([]results.Record, len(out.Records))
			for i, rec := range out.Records {
				if rec.Error == "" {
					d := float64(rec.Estimate) - out.Truth
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
		lines[k] = l
	}
	return lines, nil
}
