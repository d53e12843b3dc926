package dataset_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
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
		_, err := logio.ReadFile(tc.file)
		var fe *logio.FormatError
		if !errors.As(err, &fe) || fe.Row != tc.row || fe.Column != tc.col || !strings.Contains(fe.Msg, tc.msg) {
			t.Errorf("%s: %v; want row %d, column %s, %q", tc.file, err, tc.row, tc.col, tc.msg)
		}
	}
	// Below the bound, the ids are read as they are: 2^22 states, 1001
	// actions (the table they imply is for the memory check to refuse).
	d, err := logio.ReadFile("testdata/state-4194303.csv")
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
	got, _, err := logio.Read(bytes.NewReader(b), "long.parquet", logio.ReadOptions{Format: logio.Parquet})
	if err != nil {
		t.Fatalf("%.300v", err)
	}
	if got.NumEpisodes() != 10 || got.NumSteps() != 20 || got.IDs[9] != d.IDs[9] {
		t.Errorf("%d episodes, %d steps", got.NumEpisodes(), got.NumSteps())
	}
}

// TestQuote: names and values in messages are cut after 60 bytes, at a
// character's start, with their length.
func TestQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"reward", `"reward"`},
		{strings.Repeat("x", 60), `"` + strings.Repeat("x", 60) + `"`},
		{strings.Repeat("x", 61), `"` + strings.Repeat("x", 60) + `"…(61 bytes)`},
		{strings.Repeat("x", 59) + "é", `"` + strings.Repeat("x", 59) + `"…(61 bytes)`}, // é is 2 bytes: cut before it
	} {
		if got := dataset.Quote(c.in); got != c.want {
			t.Errorf("Quote(%.70q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestLongNamesInMessages: a 5 MB column name or episode id is shown cut
// in the error (the audit's 50 MB header name gave 150 MB of stderr).
func TestLongNamesInMessages(t *testing.T) {
	long := strings.Repeat("x", 5<<20)
	for _, c := range []struct {
		name, csv, want string
	}{
		{"header", "episode,t,state,action,reward,behavior_prob,target_prob," + long + "\ne,0,0,0,1,0.5,0.5,1\n",
			`column "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"…(5242880 bytes): unknown column`},
		{"id", "episode,t,state,action,reward,behavior_prob,target_prob\n" + long + ",0,0,0,1,0.5,0.5\n" + long + ",0,0,0,1,0.5,0.5\n",
			`duplicate step: episode "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"…(5242880 bytes) has t = 0 on row 2 too`},
	} {
		_, err := logio.ReadCSV(strings.NewReader(c.csv), "log.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) || len(err.Error()) > 2000 {
			t.Errorf("%s: %.500v (%d bytes); want %q in at most 2000 bytes", c.name, err, len(fmt.Sprint(err)), c.want)
		}
	}
}

// endless repeats one data row after a header without end, failing any
// read past limit bytes.
type endless struct {
	header, row string
	off, limit  int
}

func (e *endless) Read(p []byte) (int, error) {
	if e.off > e.limit {
		return 0, errors.New("read past the limit: the error was not reported at its row")
	}
	n := 0
	for n < len(p) {
		var s string
		if e.off < len(e.header) {
			s = e.header[e.off:]
		} else {
			k := (e.off - len(e.header)) % len(e.row)
			s = e.row[k:]
		}
		c := copy(p[n:], s)
		n, e.off = n+c, e.off+c
	}
	return n, nil
}

// TestDuplicateReportedAtItsRow: a row repeating the step before it is
// reported before the reader goes much further (10 million copies of one
// row took 1.2 GB and 6 s to be told "row 3: duplicate step": now 20 MB
// and 0.02 s), in a log read in order or not.
func TestDuplicateReportedAtItsRow(t *testing.T) {
	const header = "episode,t,state,action,reward,behavior_prob,target_prob\n"
	for _, c := range []struct {
		name, prefix, row string
		want              string
	}{
		{"in order", "", "e,0,0,0,1,0.5,0.5\n", `log.csv: row 3, column "t": duplicate step: episode "e" has t = 0 on row 2 too`},
		{"out of order", "b,1,0,0,1,0.5,0.5\nb,0,0,0,1,0.5,0.5\n", "e,0,0,0,1,0.5,0.5\n", `log.csv: row 5, column "t": duplicate step: episode "e" has t = 0 on row 4 too`},
	} {
		r := &endless{header: header + c.prefix, row: c.row, limit: 1 << 20}
		_, err := logio.ReadCSV(r, "log.csv")
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}
