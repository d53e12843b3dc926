package dataset_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ihope-ope/ihope/dataset"
)

// TestIDsFarBeyondTheData: discrete ids are indexed densely, so an id far
// larger than the data is refused where it is, for actions as for states
// (a 2-row log with action 2,000,000,000 took 1.97 GB to read and crashed
// --fit-behavior out of memory).
func TestIDsFarBeyondTheData(t *testing.T) {
	for _, tc := range []struct {
		file string
		row  int
		col  string
		msg  string
	}{
		{"testdata/action-2e9.csv", 3, "action", "action id 2000000000 is far larger than the data (2 rows)"},
	} {
		_, err := dataset.ReadFile(tc.file)
		var fe *dataset.FormatError
		if !errors.As(err, &fe) || fe.Row != tc.row || fe.Column != tc.col || !strings.Contains(fe.Msg, tc.msg) {
			t.Errorf("%s: %v; want row %d, column %s, %q", tc.file, err, tc.row, tc.col, tc.msg)
		}
	}
	// Below the bound, the ids are read as they are: 2^22 states, 1001
	// actions (the table they imply is for the memory check to refuse).
	d, err := dataset.ReadFile("testdata/state-4194303.csv")
	if err != nil {
		t.Fatal(err)
	}
	if d.NumStates != 1<<22 || d.NumActions != 1001 {
		t.Errorf("NumStates %d, NumActions %d; want %d, 1001", d.NumStates, d.NumActions, 1<<22)
	}
}

// TestParquetLongIDs: a valid Parquet file whose episode ids are long
// and alike compresses far beyond maxExpansion (10 ids of 2 MB in a few
// KB); its string pages are read, not called damaged or "impossible",
// which only pages of fixed-size values can be. (The audit's file held 10
// ids of 30 MB in 12 KB.)
func TestParquetLongIDs(t *testing.T) {
	d := sampled(t, 10, 2)
	for i := range d.IDs {
		d.IDs[i] = strings.Repeat(string(rune('a'+i)), 2<<20)
	}
	b := typedParquet(t, d, parquet.Compression(&parquet.Zstd), parquet.SkipPageBounds("episode"), parquet.DataPageStatistics(false), parquet.ColumnIndexSizeLimit(func([]string) int { return 16 }))
	if len(b)*1024 >= 10*(2<<20) {
		t.Fatalf("the file has %d bytes: not compressed beyond 1024x, the test tests nothing", len(b))
	}
	got, _, err := dataset.Read(bytes.NewReader(b), "long.parquet", dataset.ReadOptions{Format: dataset.Parquet})
	if err != nil {
		t.Fatalf("%.300v", err)
	}
	if got.NumEpisodes() != 10 || got.NumSteps() != 20 || got.IDs[9] != d.IDs[9] {
		t.Errorf("%d episodes, %d steps", got.NumEpisodes(), got.NumSteps())
	}
}
