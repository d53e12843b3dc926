package dataset_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ihope-ope/ihope/dataset"
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
// LZ4 files, and RLE-encoded booleans, are refused with the message that
// says what to do, since parquet-go misreads them (see lz4Unsafe and
// rleBooleansMisread in pqcheck.go).
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

	const lz4 = "ihope cannot read LZ4_RAW pages that compress less than 3:1"
	files := map[string][]byte{}
	cases := []struct {
		name    string
		refused string // a part of the error, "" if read
	}{
		{"duckdb-default", ""},
		{"duckdb-uncompressed-v1", ""},
		{"duckdb-uncompressed-v2", ""},
		{"duckdb-snappy-v2", ""},
		{"duckdb-gzip-v1", ""},
		{"duckdb-gzip-v2", ""},
		{"duckdb-zstd-v1", ""},
		{"duckdb-zstd-v2", ""},
		{"duckdb-brotli-v1", ""},
		{"duckdb-brotli-v2", ""},
		{"duckdb-lz4-v1", lz4},
		{"duckdb-lz4-v2", lz4},
		{"duckdb-csv-types", ""},
		{"arrow-rs-default", ""},
		{"arrow-rs-zstd-v2", ""},
		{"arrow-rs-lz4-v2", lz4},
		{"arrow-rs-snappy-v2-bool", "ihope cannot read these RLE-encoded booleans"},
	}
	for _, c := range cases {
		b, err := os.ReadFile(filepath.Join(corpusDir, c.name+".parquet"))
		if err != nil {
			t.Fatal(err)
		}
		files[c.name] = b
	}
	for _, f := range parquetForms {
		name := "parquet-go " + f.name
		files[name] = f.write(t, want)
		cases = append(cases, struct{ name, refused string }{name, ""})
	}
	files["parquet-go lz4_raw"] = typedParquet(t, want, parquet.Compression(&parquet.Lz4Raw))
	cases = append(cases, struct{ name, refused string }{"parquet-go lz4_raw", lz4})
	for _, c := range cases {
		b := files[c.name]
		got, err := dataset.ReadParquet(bytes.NewReader(b), int64(len(b)), c.name)
		switch {
		case c.refused != "":
			if err == nil || !strings.Contains(err.Error(), c.refused) {
				t.Errorf("%s: got error %v, want one saying %q", c.name, err, c.refused)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the dataset differs from the CSV form's", c.name)
			continue
		}
		if est := corpusEstimates(t, got); !reflect.DeepEqual(est, wantEst) {
			t.Errorf("%s: estimates %v, the CSV form's %v", c.name, est, wantEst)
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
