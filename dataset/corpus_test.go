package dataset_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/ope"
)

// corpusDir holds one log (log.csv) and its Parquet forms as DuckDB and
// arrow-rs write them (make.mjs made them, with DuckDB 1.5.6 and
// parquet-wasm 0.8.0).
const corpusDir = "testdata/parquet-corpus"

// TestParquetCorpus reads every Parquet form of the corpus's log, from
// DuckDB and arrow-rs (committed files) and from parquet-go (written
// here), and checks
// it against the CSV form: the same Dataset and the same estimates. The
// LZ4 files and the RLE-encoded booleans are those parquet-go misreads by
// itself (see lz4Block and appendBooleans).
func TestParquetCorpus(t *testing.T) {
	csv, err := os.ReadFile(filepath.Join(corpusDir, "log.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := readCSV(t, csv)
	// What make.mjs wrote: 149 episodes, 1,271 steps, every third
	// episode ending in a terminal state.
	if want.NumEpisodes() != 149 || want.NumSteps() != 1271 {
		t.Fatalf("log.csv: %d episodes, %d steps, want 149 and 1271", want.NumEpisodes(), want.NumSteps())
	}
	terminal := 0
	for _, x := range want.Terminal {
		if x {
			terminal++
		}
	}
	if terminal != 50 {
		t.Fatalf("log.csv: %d terminal episodes, want 50", terminal)
	}
	wantEst := corpusEstimates(t, want)

	// The order matters: a file read after others reuses parquet-go's
	// buffers, which its own LZ4 codec read stale data from.
	names := []string{
		"duckdb-default", "duckdb-uncompressed-v1", "duckdb-uncompressed-v2",
		"duckdb-snappy-v2", "duckdb-gzip-v1", "duckdb-gzip-v2", "duckdb-zstd-v1",
		"duckdb-zstd-v2", "duckdb-brotli-v1", "duckdb-brotli-v2", "duckdb-lz4-v1",
		"duckdb-lz4-v2", "duckdb-csv-types", "arrow-rs-default", "arrow-rs-zstd-v2",
		"arrow-rs-lz4-v2", "arrow-rs-snappy-v2-bool",
	}
	files := map[string][]byte{}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(corpusDir, name+".parquet"))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	for _, f := range parquetForms {
		name := "parquet-go " + f.name
		files[name] = f.write(t, want)
		names = append(names, name)
	}
	files["parquet-go lz4_raw"] = typedParquet(t, want, parquet.Compression(&parquet.Lz4Raw))
	names = append(names, "parquet-go lz4_raw")
	for _, name := range names {
		b := files[name]
		got, err := logio.ReadParquet(bytes.NewReader(b), int64(len(b)), name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the dataset differs from the CSV form's", name)
			continue
		}
		if est := corpusEstimates(t, got); !reflect.DeepEqual(est, wantEst) {
			t.Errorf("%s: estimates %v, the CSV form's %v", name, est, wantEst)
		}
	}
}

// corpusEstimates returns the estimates of three estimators of different
// kinds (a mean, importance weights, a value model) on d.
func corpusEstimates(t *testing.T, d *dataset.Dataset) map[string]float64 {
	t.Helper()
	est, err := ope.New([]string{"naive", "wis-stepwise", "is-trajectory"}, ope.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, e := range est {
		r, err := e.Estimate(d, 0.95)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		out[e.Name()] = r.Value
	}
	return out
}
