package cli

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
)

// readProgressMin is the file size from which reading a log draws a bar:
// smaller files read in about a second.
var readProgressMin int64 = 32 << 20

// readThrottle is the least time between two redraws of the reading bar.
var readThrottle = 100 * time.Millisecond

// readLog reads a log as dataset.ReadFileWith does (dataset.Read for
// "-", standard input) and, on a terminal, draws a bar of the bytes read
// for a large file.
func readLog(path string, o dataset.ReadOptions, stderr io.Writer) (d *dataset.Dataset, labels *dataset.Labels, err error) {
	switch {
	case path == "-":
		d, labels, err = dataset.Read(stdin, stdinName, o)
	case !isTerminal(stderr):
		d, labels, err = dataset.ReadFileWith(path, o)
	default:
		d, labels, err = readLogProgress(path, o, stderr)
	}
	if err == nil && d.NumSteps() >= settleSteps {
		// The garbage collector's next target is twice the heap live at
		// its last cycle, which came while the reader's buffers were
		// still live; one cycle now sets it from the dataset alone, which
		// keeps the peak of 1M steps under 100 MB (112 MB without).
		runtime.GC()
	}
	return d, labels, err
}

// settleSteps is the size of a log from which readLog collects garbage
// once after reading (a few milliseconds: the columns hold no pointers).
const settleSteps = 1 << 18

// readLogProgress reads a log of readProgressMin bytes or more with a bar
// on w; anything else goes to dataset.ReadFileWith, whose errors it keeps.
func readLogProgress(path string, o dataset.ReadOptions, w io.Writer) (*dataset.Dataset, *dataset.Labels, error) {
	format := o.Format
	if format == "" {
		format, _ = dataset.FormatOf(path)
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() < readProgressMin || format == "" || !st.Mode().IsRegular() {
		return dataset.ReadFileWith(path, o)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	bar := progressbar.NewOptions64(st.Size(), progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("reading "+filepath.Base(path)), progressbar.OptionShowBytes(true),
		progressbar.OptionSetElapsedTime(true), progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(readThrottle), progressbar.OptionClearOnFinish())
	defer bar.Finish()
	o.Format = format
	if format != dataset.Parquet {
		r := progressbar.NewReader(f, bar)
		return dataset.Read(&r, path, o)
	}
	return dataset.ReadAt(&countingReaderAt{r: f, bar: bar, size: st.Size()}, st.Size(), path, o)
}

// countingReaderAt moves a bar by the bytes read through it, at most the
// file's size (Parquet reads the footer twice).
type countingReaderAt struct {
	r    io.ReaderAt
	bar  *progressbar.ProgressBar
	size int64
	read int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	if c.read < c.size {
		c.read = min(c.size, c.read+int64(n))
		c.bar.Set64(c.read)
	}
	return n, err
}

// bootstrapProgress returns a progress callback drawing a bar of total
// resamples labelled label on a terminal (nil elsewhere), and the
// function that ends it.
func bootstrapProgress(stderr io.Writer, total int, label string) (func(int), func()) {
	if !isTerminal(stderr) || total == 0 {
		return nil, func() {}
	}
	return newBar(stderr, total, label)
}

func newBar(w io.Writer, total int, label string) (func(int), func()) {
	bar := etaBar(w, total, label, progressbar.OptionShowCount())
	return func(int) { bar.Add(1) }, func() { bar.Finish() }
}

// etaBar is the bar every long step draws: label, elapsed time and the
// time left, cleared when it ends.
func etaBar(w io.Writer, total int, label string, more ...progressbar.Option) *progressbar.ProgressBar {
	return progressbar.NewOptions(total, append([]progressbar.Option{progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(label), progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish()}, more...)...)
}

// groupLabel is the bar's label of one bootstrap group (entries[idx]):
// the slow estimators' refits are named, so the ETA shown is understood
// as theirs.
func (c *estimateCmd) groupLabel(entries []ope.Entry, idx []int) string {
	label := "bootstrap"
	if entries[idx[0]].Slow {
		var names []string
		for _, i := range idx {
			names = append(names, entries[i].Name)
		}
		label = "bootstrap, refitting " + strings.Join(names, " and ")
	}
	if c.policyLabel != "" {
		label = c.policyLabel + ": " + label
	}
	return label
}

// trainingProgress returns a Progress callback for the neural networks an
// estimator trains, drawing a bar with an ETA, and the function that ends
// it. The bar counts the networks' evaluations, opts.Neural.Evaluations()
// for each of its restarts, plus one step for what follows the training
// (the estimate), which finish completes: a fit without early stopping
// (the default) makes exactly that many, so the ETA is the fit's own. An
// estimator that trains more networks (dr's neural ratio, once per fold)
// raises the total as they come, so the bar never claims more than it
// knows.
func trainingProgress(stderr io.Writer, name string, opts ope.Options) (func(iter int, loss, heldOut float64), func()) {
	restarts := cmp.Or(opts.Restarts, ratio.DefaultRestarts)
	per, err := opts.Neural.Evaluations()
	if err != nil {
		return nil, func() {}
	}
	total := per*restarts + 1
	bar := etaBar(stderr, total, fmt.Sprintf("%s: training %s", name, plural(restarts, "network")),
		progressbar.OptionThrottle(readThrottle))
	var mu sync.Mutex // the networks of an ensemble train concurrently
	done := 0
	return func(int, float64, float64) {
			mu.Lock()
			defer mu.Unlock()
			if done++; done >= total {
				total += per
				bar.ChangeMax(total)
			}
			bar.Add(1)
		}, func() {
			bar.Finish()
		}
}
