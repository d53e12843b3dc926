package cli

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/internal/progress"
)

// Reading a large log draws a bar of the bytes read and gives the same
// dataset as logio.ReadFile, for CSV and Parquet.
func TestReadLogProgress(t *testing.T) {
	dir := t.TempDir()
	defer func(size int64, throttle time.Duration) { readProgressMin, progress.Throttle = size, throttle }(readProgressMin, progress.Throttle)
	readProgressMin, progress.Throttle = 0, 0 // every file is large, every read drawn
	for _, ext := range []string{"csv", "csv.gz", "parquet"} {
		path := filepath.Join(dir, "logs."+ext)
		if _, errOut, code := run(t, "sample", "-n", "200", "-T", "100", "--out", path); code != ExitOK {
			t.Fatal(errOut)
		}
		var bar bytes.Buffer
		got, _, err := readLogProgress(path, logio.ReadOptions{}, &bar)
		if err != nil {
			t.Fatal(err)
		}
		want, err := logio.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the dataset read with a bar differs", ext)
		}
		if !strings.Contains(bar.String(), "reading logs."+ext) {
			t.Errorf("%s: no bar in %q", ext, bar.String())
		}
	}
	// Errors are logio.ReadFile's.
	var bar bytes.Buffer
	if _, _, err := readLogProgress(filepath.Join(dir, "logs.txt"), logio.ReadOptions{}, &bar); err == nil || !strings.Contains(err.Error(), "want .csv, .tsv") {
		t.Errorf("a .txt log: %v", err)
	}
}
