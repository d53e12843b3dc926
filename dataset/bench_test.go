package dataset_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
)

// benchFile writes 1,000 episodes of 1,000 discrete steps (1,000,000 rows)
// to a file of the given extension and returns its path and size.
func benchFile(b *testing.B, ext string) (string, int64) {
	b.Helper()
	d := sampled(b, 1000, 1000)
	path := filepath.Join(b.TempDir(), "log"+ext)
	if err := logio.WriteFile(path, d); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Size()
}

func benchRead(b *testing.B, ext string) {
	path, size := benchFile(b, ext)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		d, err := logio.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		if d.NumSteps() != 1_000_000 {
			b.Fatalf("%d steps", d.NumSteps())
		}
	}
}

func BenchmarkReadCSV1M(b *testing.B)     { benchRead(b, ".csv") }
func BenchmarkReadParquet1M(b *testing.B) { benchRead(b, ".parquet") }

// BenchmarkReadCSVGzip1M reads the same log gzip-compressed: inflating
// runs in a goroutine of its own, beside the parsing (its MB/s count the
// compressed bytes).
func BenchmarkReadCSVGzip1M(b *testing.B) { benchRead(b, ".csv.gz") }

// BenchmarkReadCSVMapped1M reads the same log with its columns renamed
// (trajectory_id, step) and an extra column dropped, as --column and
// --ignore read another tool's export.
func BenchmarkReadCSVMapped1M(b *testing.B) {
	path, size := benchFile(b, ".csv")
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	i := bytes.IndexByte(raw, '\n')
	header := strings.Replace(strings.Replace(string(raw[:i]), "episode", "trajectory_id", 1), ",t,", ",step,", 1)
	// An extra first column: "u" on every row.
	var buf bytes.Buffer
	buf.WriteString("user_id," + header + "\n")
	for _, line := range bytes.SplitAfter(raw[i+1:], []byte("\n")) {
		if len(line) > 0 {
			buf.WriteString("u,")
			buf.Write(line)
		}
	}
	mapped := filepath.Join(b.TempDir(), "mapped.csv")
	if err := os.WriteFile(mapped, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	o := logio.ReadOptions{Columns: map[string]string{"episode": "trajectory_id", "t": "step"}, Ignore: []string{"user_id"}}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		d, _, err := logio.ReadFileWith(mapped, o)
		if err != nil {
			b.Fatal(err)
		}
		if d.NumSteps() != 1_000_000 {
			b.Fatalf("%d steps", d.NumSteps())
		}
	}
}

func benchWrite(b *testing.B, write func(*bytes.Buffer, *dataset.Dataset) error) {
	d := sampled(b, 1000, 1000)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := write(&buf, d); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

func BenchmarkWriteCSV1M(b *testing.B) {
	benchWrite(b, func(w *bytes.Buffer, d *dataset.Dataset) error { return logio.WriteCSV(w, d) })
}

func BenchmarkWriteParquet1M(b *testing.B) {
	benchWrite(b, func(w *bytes.Buffer, d *dataset.Dataset) error { return logio.WriteParquet(w, d) })
}

// BenchmarkBytesPerStep reports the memory that a dataset read from a
// file of 1,000 episodes of 1,000 discrete steps keeps: the growth of the
// live heap across ReadFile, measured after garbage collections on both
// sides while the dataset is alive, per step. The parsing's scratch
// memory is not counted; see the allocations of BenchmarkReadCSV1M and
// BenchmarkReadParquet1M for it.
func BenchmarkBytesPerStep(b *testing.B) {
	// settle collects twice: buffers that the Parquet reader leaves in a
	// sync.Pool survive one collection.
	settle := func() { runtime.GC(); runtime.GC() }
	for _, ext := range []string{".csv", ".parquet"} {
		b.Run(ext[1:], func(b *testing.B) {
			path, _ := benchFile(b, ext)
			var bytes, steps float64
			var before, after runtime.MemStats
			for b.Loop() {
				settle()
				runtime.ReadMemStats(&before)
				d, err := logio.ReadFile(path)
				if err != nil {
					b.Fatal(err)
				}
				settle()
				runtime.ReadMemStats(&after)
				bytes += float64(after.HeapAlloc) - float64(before.HeapAlloc)
				steps += float64(d.NumSteps())
				runtime.KeepAlive(d)
			}
			b.ReportMetric(bytes/steps, "B/step")
		})
	}
}
