package stream

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
)

// Files returns the shards a pattern names, in lexical order of their
// paths: the files of a directory whose names end in a log format's
// extension (.csv, .tsv, .csv.gz, .tsv.gz, .parquet), or the matches of a
// glob (filepath.Match's syntax: 'logs/*.parquet').
//
// A shard must be a regular file: a symbolic link (or a device, a pipe, a
// socket) among the shards is refused, naming it and where it points.
// Following links would let a directory of shards make ihope read, and
// quote in its errors (a header's first line), a file outside it.
func Files(pattern string) ([]string, error) {
	var files []string
	if st, err := os.Stat(pattern); err == nil && st.IsDir() {
		entries, err := os.ReadDir(pattern)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if _, err := logio.FormatOf(e.Name()); err == nil && !e.IsDir() {
				files = append(files, filepath.Join(pattern, e.Name()))
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no .csv, .tsv, .csv.gz, .tsv.gz or .parquet files", pattern)
		}
	} else {
		files, err = filepath.Glob(pattern)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pattern, err)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no such file (a glob such as 'logs/*.parquet', quoted, or a directory)", pattern)
		}
	}
	slices.Sort(files)
	for _, f := range files {
		if err := regular(f); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// regular returns nil if path is a regular file, not a symbolic link,
// or else an error naming it that says what it is and what to do.
func regular(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	switch m := st.Mode(); {
	case m.IsRegular():
		return nil
	case m&os.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return fmt.Errorf("%s: a symbolic link (to %s); shards are not read through links: copy or move the file itself into place", path, target)
	case m.IsDir():
		return fmt.Errorf("%s: a directory where a shard file was expected (a glob such as 'logs/*.parquet' names files)", path)
	default:
		return fmt.Errorf("%s: not a regular file (%s); shards must be regular files", path, m.Type())
	}
}

// IsPattern reports whether path names shards rather than one file: a
// directory, or a glob with *, ? or [.
func IsPattern(path string) bool {
	if st, err := os.Stat(path); err == nil {
		return st.IsDir()
	}
	for _, c := range path {
		if c == '*' || c == '?' || c == '[' {
			return true
		}
	}
	return false
}

// Reader reads shards one after another and hands out whole episodes,
// in the order of the shards' concatenation: memory holds one shard (and
// the next, read ahead while the current one is consumed) plus the
// episode that spans them, never the whole log.
//
// Episodes across shards: shards are read in lexical order of their
// names, and an episode may continue from the last rows of one shard
// into the first rows of the next, its id the same and its t going on
// (the next shard's first rows carry t = T, T+1, ... after the T steps
// before). Reader joins such an episode before handing it out. Any other
// reappearance of an episode id in a later shard is refused, naming the
// file, the row and the column: rows of an episode scattered over shards
// would have to wait in memory for the end of the stream.
type Reader struct {
	// Files are the shards, in order (Files gives them).
	Files []string
	// Options read every shard (ReadOptions.Shard is set by Reader).
	// Categorical columns are refused: each shard would number its labels
	// on its own.
	Options logio.ReadOptions
	// Progress, if not nil, is called after each shard with the number
	// of shards done and of steps read so far.
	Progress func(shards, steps int)

	// What the first call of Each saw of each shard, checked by every
	// later call (the second pass of a two-pass estimator): a shard that
	// changed in between is an error naming it.
	stamps   []stamp
	episodes []int // episodes beginning in each shard
}

type shard struct {
	d     *dataset.Dataset
	err   error
	stamp stamp
}

// Each calls f on the episodes of the shards, batch after batch: f(d,
// lo, hi) must consume episodes lo to hi-1 of d before it returns (d is
// not kept). It stops at the first error, of a shard or of f.
func (r *Reader) Each(f func(d *dataset.Dataset, lo, hi int) error) error {
	if len(r.Options.Categorical) > 0 {
		return errors.New("categorical columns cannot stream: each shard would number its labels on its own; give state and action ids")
	}
	if len(r.Files) == 0 {
		return errors.New("stream: no shards")
	}
	o := r.Options
	o.Shard = true
	read := func(path string) chan shard {
		ch := make(chan shard, 1)
		go func() {
			before, err := stampOf(path)
			if err != nil {
				ch <- shard{err: err}
				return
			}
			d, _, err := logio.ReadFileWith(path, o)
			if err == nil || !errors.Is(err, os.ErrNotExist) {
				// A shard rewritten while it was read would mix two
				// contents.
				after, serr := stampOf(path)
				if serr != nil {
					err = serr
				} else if why := before.differs(after); why != "" {
					err = fmt.Errorf("%s: the shard changed while it was read (%s)", path, why)
				}
			}
			ch <- shard{d, err, before}
		}()
		return ch
	}
	episodeCol := "episode"
	if c := o.Columns["episode"]; c != "" {
		episodeCol = c
	}
	tCol := "t"
	if c := o.Columns["t"]; c != "" {
		tCol = c
	}
	seen := map[string]int32{}   // episode id -> shard where it appeared
	var pending *dataset.Dataset // the last episode of the previous shard
	var pendingFile string       // where it begins, and on which row
	var pendingRow int
	steps := 0
	check := r.stamps != nil // a later pass: the shards must be as the first pass saw them
	if !check {
		r.stamps, r.episodes = make([]stamp, len(r.Files)), make([]int, len(r.Files))
	} else if len(r.stamps) != len(r.Files) {
		return fmt.Errorf("stream: the shards changed between the passes (%d files, then %d)", len(r.stamps), len(r.Files))
	}
	// done checks, at the end of shard k, that a later pass found it as
	// the first did, or records what the first pass found.
	done := func(k int, sh shard, episodes int) error {
		if !check {
			r.stamps[k], r.episodes[k] = sh.stamp, episodes
			return nil
		}
		if why := r.stamps[k].differs(sh.stamp); why != "" {
			return fmt.Errorf("%s: the shard changed between the two passes over the shards (%s); rerun once the shards no longer change", r.Files[k], why)
		}
		if episodes != r.episodes[k] {
			return fmt.Errorf("%s: the second pass over the shards found %d episodes beginning in this shard, the first %d; rerun once the shards no longer change", r.Files[k], episodes, r.episodes[k])
		}
		return nil
	}
	next := read(r.Files[0])
	for k, path := range r.Files {
		sh := <-next
		if k+1 < len(r.Files) {
			next = read(r.Files[k+1]) // read ahead while this one is consumed
		}
		var fe *logio.FormatError
		if errors.As(sh.err, &fe) && fe.NoRows() {
			if err := done(k, sh, 0); err != nil {
				drain(next, k+1 < len(r.Files))
				return err
			}
			// An empty shard (a header alone, a Parquet file of 0 rows,
			// as distributed writers leave them): nothing to read.
			if r.Progress != nil {
				r.Progress(k+1, steps)
			}
			continue
		}
		if sh.err != nil {
			drain(next, k+1 < len(r.Files))
			return sh.err
		}
		d := sh.d
		steps += d.NumSteps()
		first := 0
		if pending != nil {
			if d.IDs[0] == pending.IDs[0] {
				if d.Origin.FirstT != pending.NumSteps() {
					drain(next, k+1 < len(r.Files))
					return &logio.FormatError{File: path, Row: d.Origin.Rows[0], Column: tCol,
						Msg: fmt.Sprintf("episode %q continues from the previous shard (%s) at t = %d, where it ended after t = %d", d.IDs[0], r.Files[k-1], d.Origin.FirstT, pending.NumSteps()-1)}
				}
				if err := join(pending, d); err != nil {
					drain(next, k+1 < len(r.Files))
					return fmt.Errorf("%s: %w", path, err)
				}
				first = 1
			} else if err := f(pending, 0, 1); err != nil {
				drain(next, k+1 < len(r.Files))
				return inShard(err, pendingFile, pendingRow)
			}
		}
		if first == 0 && d.Origin.FirstT != 0 {
			drain(next, k+1 < len(r.Files))
			return &logio.FormatError{File: path, Row: d.Origin.Rows[0], Column: tCol,
				Msg: fmt.Sprintf("episode %q starts at t = %d; t must start at 0 (an episode continues into a shard only from the last rows of the shard before, in lexical order of the names)", d.IDs[0], d.Origin.FirstT)}
		}
		for e := first; e < d.NumEpisodes(); e++ {
			id := d.IDs[e]
			if at, ok := seen[id]; ok {
				drain(next, k+1 < len(r.Files))
				return &logio.FormatError{File: path, Row: d.Origin.Rows[e], Column: episodeCol,
					Msg: fmt.Sprintf("episode %q appeared already in %s and reappears here: an episode may continue into the next shard only from the last rows of the shard before (shards are read in lexical order of their names)", id, r.Files[at])}
			}
			seen[id] = int32(k)
		}
		last := d.NumEpisodes() - 1
		if first == 1 && last == 0 {
			// The whole shard continues the pending episode, which may
			// go on in the next shard.
		} else {
			if first == 1 {
				if err := f(pending, 0, 1); err != nil {
					drain(next, k+1 < len(r.Files))
					return inShard(err, pendingFile, pendingRow)
				}
			}
			if err := f(d, first, last); err != nil {
				drain(next, k+1 < len(r.Files))
				return inShard(err, path, 0)
			}
			pending, pendingFile, pendingRow = d.Subset([]int{last}), path, d.Origin.Rows[last]
		}
		if err := done(k, sh, d.NumEpisodes()-first); err != nil {
			drain(next, k+1 < len(r.Files))
			return err
		}
		if r.Progress != nil {
			r.Progress(k+1, steps)
		}
	}
	if pending == nil {
		return fmt.Errorf("stream: every shard is empty (%s ... %s hold no data rows)", r.Files[0], r.Files[len(r.Files)-1])
	}
	return inShard(f(pending, 0, 1), pendingFile, pendingRow)
}

// drain waits for a read ahead to finish, so that no goroutine outlives
// Each.
func drain(ch chan shard, started bool) {
	if started {
		<-ch
	}
}

// join appends episode 0 of d, which continues a's only episode, to a.
func join(a, d *dataset.Dataset) error {
	if (a.TargetProbs == nil) != (d.TargetProbs == nil) || a.StateDim != d.StateDim || a.ActionDim != d.ActionDim ||
		(a.LogBehavior == nil) != (d.LogBehavior == nil) {
		return fmt.Errorf("episode %q continues here with other columns than in the shard before", a.IDs[0])
	}
	c := d.Subset([]int{0})
	a.State = append(a.State, c.State...)
	a.Obs = append(a.Obs, c.Obs...)
	a.Action = append(a.Action, c.Action...)
	a.ActionVec = append(a.ActionVec, c.ActionVec...)
	a.Reward = append(a.Reward, c.Reward...)
	if a.LogBehavior != nil {
		a.LogBehavior = append(a.LogBehavior, c.LogBehavior...)
	}
	a.LogTarget = append(a.LogTarget, c.LogTarget...)
	if a.TargetProbs != nil {
		a.TargetProbs = append(a.TargetProbs, c.TargetProbs...)
		a.FinalTargetProbs, a.HasFinalTarget = c.FinalTargetProbs, c.HasFinalTarget
	}
	a.Start[1] = len(a.Reward)
	a.HasFinal, a.FinalState, a.FinalObs = c.HasFinal, c.FinalState, c.FinalObs
	a.Terminal = c.Terminal
	a.NumStates, a.NumActions = max(a.NumStates, c.NumStates), max(a.NumActions, c.NumActions)
	return nil
}

// inShard names the shard path in an error of the statistics on its
// episodes: a format error that has no file yet gets it, and row, if
// positive, where it has none (a pending episode, carried over from the
// shard where it begins, has lost its rows: row is its first); any other
// error is prefixed with the path.
func inShard(err error, path string, row int) error {
	var fe *logio.FormatError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		if fe.File != "" {
			return err
		}
		named := *fe
		named.File = path
		if named.Row == 0 && row > 0 {
			named.Row = row
		}
		return &named
	}
	return fmt.Errorf("%s: %w", path, err)
}
