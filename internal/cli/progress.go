package cli

import (
	"io"
	"os"
	"path/filepath"

	"github.com/schollz/progressbar/v3"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/internal/gcstart"
	"github.com/ihope-ope/ihope/internal/progress"
)

// readProgressMin is the file size from which reading a log draws a bar:
// smaller files read in about a second.
var readProgressMin int64 = 32 << 20

// readLog reads a log as logio.ReadFileWith does (logio.Read for
// "-", standard input) and, on a terminal, draws a bar of the bytes read
// for a large file.
func readLog(path string, o logio.ReadOptions, stderr io.Writer) (d *dataset.Dataset, labels *logio.Labels, err error) {
	switch {
	case path == "-":
		d, labels, err = logio.Read(stdin, stdinName, o)
	case !progress.IsTerminal(stderr):
		d, labels, err = logio.ReadFileWith(path, o)
	default:
		d, labels, err = readLogProgress(path, o, stderr)
	}
	if err == nil {
		gcstart.Settle(d.NumSteps())
	}
	return d, labels, err
}

// readLogProgress reads a log of readProgressMin bytes or more with a bar
// on w; anything else goes to logio.ReadFileWith, whose errors it keeps.
func readLogProgress(path string, o logio.ReadOptions, w io.Writer) (*dataset.Dataset, *logio.Labels, error) {
	format := o.Format
	if format == "" {
		format, _ = logio.FormatOf(path)
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() < readProgressMin || format == "" || !st.Mode().IsRegular() {
		return logio.ReadFileWith(path, o)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	bar := progressbar.NewOptions64(st.Size(), progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("reading "+filepath.Base(path)), progressbar.OptionShowBytes(true),
		progressbar.OptionSetElapsedTime(true), progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(progress.Throttle), progressbar.OptionClearOnFinish())
	defer bar.Finish()
	o.Format = format
	if format != logio.Parquet {
		r := progressbar.NewReader(f, bar)
		return logio.Read(&r, path, o)
	}
	return logio.ReadAt(&countingReaderAt{r: f, bar: bar, size: st.Size()}, st.Size(), path, o)
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
