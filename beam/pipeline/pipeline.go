package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"   // gs:// shards and output
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local shards and output
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/evaluate"
	"github.com/ihope-ope/ihope/stream"
	"github.com/ihope-ope/ihope/stream/tempdir"
)

func init() {
	// Statistics move between workers in stream's own exact encoding; in
	// a fused stage (a shard's reading and the combiner's first merge)
	// they are not encoded at all.
	beam.RegisterCoder(reflect.TypeOf((*stream.Stats)(nil)), encodeStats, decodeStats)
	register.DoFn4x1[context.Context, string, func(*stream.Stats), func(string, string), error](&readShardFn{})
	register.Emitter1[*stream.Stats]()
	register.Emitter2[string, string]()
	register.Combiner3[*stream.Stats, *stream.Stats, *stream.Stats](&mergeFn{})
	register.Function3x0[string, func(*string) bool, func(string)](sharedIDs)
	register.Iter1[string]()
	register.DoFn3x1[context.Context, *stream.Stats, func(*string) bool, error](&finishFn{})
}

func encodeStats(s *stream.Stats) ([]byte, error) { return s.MarshalBinary() }

func decodeStats(b []byte) (*stream.Stats, error) {
	s := new(stream.Stats)
	return s, s.UnmarshalBinary(b)
}

// ReadBackoff is how long a worker waits before each new attempt at a
// shard it failed to read (an I/O error opening or reading it; see
// fetchWithBackoff): 0.5 s, then doubling, 7 attempts over 31.5 s in all, so
// that a shard unreadable for a few seconds (a network file system's
// hiccup, an object store's throttling) does not fail the job, and one
// unreadable for longer fails it with a message saying so. A Prism
// bundle that fails is not retried, so these are all the attempts a
// shard gets there. Tests shorten it.
var ReadBackoff = []time.Duration{
	500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
	8 * time.Second, 16 * time.Second,
}

// fetchWithBackoff reads a shard's bytes, again after each wait of
// ReadBackoff while that fails. Every failure to get the bytes (opening,
// reading: a reset connection, a throttled object store, a file being
// replaced or its permissions changed) is taken for transient; errors in
// the content are found after the bytes are in memory (ReadShard) and are
// never retried, as they will not go away.
func fetchWithBackoff(ctx context.Context, path string) ([]byte, error) {
	waited := time.Duration(0)
	for attempt := 1; ; attempt++ {
		raw, err := fetch(ctx, path)
		if err == nil || ctx.Err() != nil {
			return raw, err
		}
		if attempt > len(ReadBackoff) {
			return nil, fmt.Errorf("%s: unreadable after %d attempts over %v (the last: %w)", path, attempt, waited, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: %w (while waiting to read it again after: %v)", path, ctx.Err(), err)
		case <-time.After(ReadBackoff[attempt-1]):
		}
		waited += ReadBackoff[attempt-1]
	}
}

// fetch reads a shard's bytes once.
func fetch(ctx context.Context, path string) ([]byte, error) {
	rc, err := openShard(ctx, path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// Config is what the pipeline computes and where it writes.
type Config struct {
	// Files are the shards (local paths or gs:// objects).
	Files []string
	// Empty is the statistics to fill, with no episode yet (its
	// configuration: estimators, discount, resamples, seed), as
	// stream.Stats.MarshalBinary encodes it.
	Empty []byte
	// Output is the file the JSON report is written to; Input is what
	// the report names as the data.
	Output, Input string
	// Options read every shard.
	Options logio.ReadOptions
	// First makes the pipeline the first of two passes (see Run): the
	// shards feed stream.Stats.AddFirst, and the last step ends the first
	// pass and writes the encoded statistics to Output instead of the
	// report.
	First bool
}

// Run runs the pipeline of c with execute (beamx.Run, or a runner's
// Execute): once, or twice when an estimator needs a first pass over the
// whole log (stream.Stats.FirstPass: bch-kernel). Then a first pipeline
// merges the shards' first passes, ends it on the driver's last step and
// writes the statistics, with their features fixed, next to the output
// (Output + ".first", removed after); the second pipeline starts every
// worker from them, as ihope estimate's second pass over the shards does.
//
// The pipelines run with a private temporary directory (TMPDIR), removed
// when Run returns: Beam's loopback worker leaves a 0-byte
// beamloopbackworker-* file in the temporary directory on every run
// (runnerlib.Execute), and a killed run's directory is removed by the next
// (tempdir.New names it with the pid).
func Run(ctx context.Context, c Config, execute func(context.Context, *beam.Pipeline) error) error {
	dir, err := tempdir.New("", "ihope-beam-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	prev, had := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", dir)
	defer func() {
		if had {
			os.Setenv("TMPDIR", prev)
		} else {
			os.Unsetenv("TMPDIR")
		}
	}()
	return run(ctx, c, execute)
}

func run(ctx context.Context, c Config, execute func(context.Context, *beam.Pipeline) error) error {
	st, err := decodeStats(c.Empty)
	if err != nil {
		return err
	}
	if st.FirstPass() {
		first := c
		first.First, first.Output = true, c.Output+".first"
		p, s := beam.NewPipelineWithRoot()
		Build(s, first)
		if err := execute(ctx, p); err != nil {
			return err
		}
		if c.Empty, err = readAll(ctx, first.Output); err != nil {
			return err
		}
		if fs, err := filesystem.New(ctx, first.Output); err == nil {
			if r, ok := fs.(filesystem.Remover); ok {
				r.Remove(ctx, first.Output)
			}
			fs.Close()
		}
	}
	p, s := beam.NewPipelineWithRoot()
	Build(s, c)
	return execute(ctx, p)
}

// readAll reads a whole file from any file system Beam knows.
func readAll(ctx context.Context, path string) ([]byte, error) {
	rc, err := openShard(ctx, path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// NewConfig lists the shards of input and makes the statistics to fill:
// the estimators the flags f name, or those ihope estimate would choose
// for the first shard, which it reads. output is where the report goes.
func NewConfig(ctx context.Context, input, output string, o logio.ReadOptions, f evaluate.StreamOptions) (Config, error) {
	files, err := Files(ctx, input)
	if err != nil {
		return Config{}, err
	}
	first, err := ReadShard(ctx, files[0], o)
	if err != nil {
		return Config{}, err
	}
	st, err := evaluate.NewStreamStats(first, f)
	if err != nil {
		return Config{}, err
	}
	empty, err := st.MarshalBinary()
	if err != nil {
		return Config{}, err
	}
	return Config{Files: files, Empty: empty, Output: output, Input: input, Options: o}, nil
}

// Build adds the pipeline to s.
func Build(s beam.Scope, c Config) {
	s = s.Scope("ihope")
	files := beam.CreateList(s, c.Files)
	stats, ids := beam.ParDo2(s, &readShardFn{Empty: c.Empty, Format: string(c.Options.Format),
		Columns: c.Options.Columns, Ignore: c.Options.Ignore, First: c.First}, files)
	whole := beam.Combine(s, &mergeFn{Empty: c.Empty}, stats)
	shared := beam.ParDo(s, sharedIDs, beam.GroupByKey(s, ids))
	beam.ParDo0(s, &finishFn{Output: c.Output, Input: c.Input, First: c.First}, whole, beam.SideInput{Input: shared})
}

// openShard opens a shard for reading; tests replace it to inject
// failures.
var openShard = func(ctx context.Context, path string) (io.ReadCloser, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	return fs.OpenRead(ctx, path)
}

// readShardFn reads one shard into the statistics of its episodes, and
// emits each episode's id with the shard's path.
type readShardFn struct {
	Empty   []byte
	Format  string
	Columns map[string]string
	Ignore  []string
	First   bool
}

func (f *readShardFn) ProcessElement(ctx context.Context, path string, emitStats func(*stream.Stats), emitID func(string, string)) error {
	o := logio.ReadOptions{Format: logio.Format(f.Format), Columns: f.Columns, Ignore: f.Ignore}
	d, err := ReadShard(ctx, path, o)
	if err != nil {
		return err
	}
	st, err := decodeStats(f.Empty)
	if err != nil {
		return err
	}
	add := st.Add
	if f.First {
		add = st.AddFirst
	}
	if err := add(d, 0, d.NumEpisodes()); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	emitStats(st)
	for _, id := range d.IDs {
		emitID(id, path)
	}
	return nil
}

// ReadShard reads one shard whole (a shard fits in a worker's memory),
// from any file system Beam knows (local paths, gs://).
func ReadShard(ctx context.Context, path string, o logio.ReadOptions) (*dataset.Dataset, error) {
	raw, err := fetchWithBackoff(ctx, path)
	if err != nil {
		return nil, err
	}
	if o.Format == "" {
		if o.Format, err = logio.FormatOf(path); err != nil {
			return nil, err
		}
	}
	d, _, err := logio.ReadAt(bytes.NewReader(raw), int64(len(raw)), path, o)
	return d, err
}

// Files returns the shards that pattern names, in lexical order: as
// stream.Files does for local paths (a glob or a directory), and for a
// URL such as gs://bucket/logs/*.parquet the matches of Beam's file
// system.
func Files(ctx context.Context, pattern string) ([]string, error) {
	if !strings.Contains(pattern, "://") {
		return stream.Files(pattern)
	}
	fs, err := filesystem.New(ctx, pattern)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	files, err := fs.List(ctx, pattern)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no such file", pattern)
	}
	slices.Sort(files)
	return files, nil
}

// mergeFn merges statistics: the accumulator is a Stats, merged into in
// place.
type mergeFn struct {
	Empty []byte
}

func (f *mergeFn) CreateAccumulator() (*stream.Stats, error) { return decodeStats(f.Empty) }

func (f *mergeFn) AddInput(acc, in *stream.Stats) (*stream.Stats, error) {
	return f.MergeAccumulators(acc, in)
}

func (f *mergeFn) MergeAccumulators(a, b *stream.Stats) (*stream.Stats, error) {
	if err := a.Merge(b); err != nil {
		return nil, err
	}
	return a, nil
}

func (f *mergeFn) ExtractOutput(acc *stream.Stats) *stream.Stats { return acc }

// sharedIDs emits a message for an episode id found in two or more
// shards.
func sharedIDs(id string, paths func(*string) bool, emit func(string)) {
	var all []string
	var p string
	for paths(&p) {
		if !slices.Contains(all, p) {
			all = append(all, p)
		}
	}
	if len(all) > 1 {
		slices.Sort(all)
		emit(fmt.Sprintf("episode %q is in shards %s: each episode must lie within one shard", id, strings.Join(all, " and ")))
	}
}

// finishFn finishes the statistics of the whole log and writes the
// report, unless an episode id was found in two shards.
type finishFn struct {
	Output, Input string
	First         bool
}

func (f *finishFn) ProcessElement(ctx context.Context, st *stream.Stats, shared func(*string) bool) error {
	var msgs []string
	var m string
	for shared(&m) {
		msgs = append(msgs, m)
	}
	if len(msgs) > 0 {
		slices.Sort(msgs)
		if len(msgs) > 1 {
			return fmt.Errorf("%s (and %d more ids)", msgs[0], len(msgs)-1)
		}
		return errors.New(msgs[0])
	}
	var buf bytes.Buffer
	if f.First {
		st.EndFirst()
		b, err := st.MarshalBinary()
		if err != nil {
			return err
		}
		buf.Write(b)
	} else {
		res, err := st.Finish()
		if err != nil {
			return err
		}
		if err := evaluate.StreamReport(res, f.Input).WriteJSON(&buf); err != nil {
			return err
		}
	}
	fs, err := filesystem.New(ctx, f.Output)
	if err != nil {
		return err
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, f.Output)
	if err != nil {
		return err
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
