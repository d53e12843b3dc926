package dataset_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
)

// Every form a log can take reads back as the dataset written: from a
// file named by its extension, and from a stream with the format given.
func TestFormsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for name, d := range map[string]*dataset.Dataset{
		"discrete":     sampled(t, 4, 6),
		"vector":       continuous(t),
		"target probs": withTargetProbs(t)["vector states"],
	} {
		for _, f := range logio.Formats {
			path := filepath.Join(dir, "log."+strings.ToUpper(string(f)))
			if err := logio.WriteFile(path, d); err != nil {
				t.Fatalf("%s %s: %v", name, f, err)
			}
			if got, err := logio.FormatOf(path); got != f || err != nil {
				t.Errorf("FormatOf(%s) = %q, %v", path, got, err)
			}
			got, err := logio.ReadFile(path)
			if err != nil {
				t.Fatalf("%s %s: %v", name, f, err)
			}
			if !reflect.DeepEqual(got, d) {
				t.Errorf("%s %s: file read back differs", name, f)
			}
			var buf bytes.Buffer
			if err := logio.Write(&buf, d, f); err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(path)
			if f != logio.CSVGzip && f != logio.TSVGzip && !bytes.Equal(buf.Bytes(), raw) {
				t.Errorf("%s %s: Write and WriteFile differ", name, f)
			}
			// A stream: no name to go by, no random access.
			got, _, err = logio.Read(struct{ *bytes.Reader }{bytes.NewReader(raw)}, "standard input", logio.ReadOptions{Format: f})
			if err != nil {
				t.Fatalf("%s %s from a stream: %v", name, f, err)
			}
			if !reflect.DeepEqual(got, d) {
				t.Errorf("%s %s: stream read back differs", name, f)
			}
			got, _, err = logio.ReadAt(bytes.NewReader(raw), int64(len(raw)), "test", logio.ReadOptions{Format: f})
			if err != nil || !reflect.DeepEqual(got, d) {
				t.Errorf("%s %s: ReadAt: %v, or the dataset differs", name, f, err)
			}
		}
	}
	if _, _, err := logio.Read(strings.NewReader(hdr+ok), "-", logio.ReadOptions{}); err == nil {
		t.Error("Read without a format: no error")
	}
}

// The TSV form is CSV with tabs: the header and the rows.
func TestWriteTSV(t *testing.T) {
	d := mustNew(t, 2, 2, []dataset.Episode{{ID: "a\tb", Steps: []dataset.Step{{State: 0, Action: 1, Reward: 0.5, NextState: -1, LogBehavior: -1, LogTarget: -2}}}})
	var buf bytes.Buffer
	if err := logio.Write(&buf, d, logio.TSV); err != nil {
		t.Fatal(err)
	}
	want := "episode\tt\tstate\taction\treward\tbehavior_logprob\ttarget_logprob\tnext_state\n\"a\tb\"\t0\t0\t1\t0.5\t-1\t-2\t\n"
	if buf.String() != want {
		t.Errorf("got\n%q\nwant\n%q", buf.String(), want)
	}
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func utf16LE(s string, bom bool) []byte {
	var out []byte
	if bom {
		out = append(out, 0xff, 0xfe)
	}
	for _, u := range utf16.Encode([]rune(s)) {
		out = append(out, byte(u), byte(u>>8))
	}
	return out
}

// A file whose content is not what its name says gets a message saying
// what it looks like and what to do, and so does a header split by
// another separator.
func TestFormHints(t *testing.T) {
	log := []byte(hdr + ok)
	pqLog := writeParquet(t, sampled(t, 1, 2))
	zipped := gz(t, log)
	garbage := []byte("\x8d\x13\xa7\x00\x9e\"\xfa\x01,\x7f\x02\n\x91")
	semi := []byte(strings.ReplaceAll(hdr+ok, ",", ";"))
	tabs := []byte(strings.ReplaceAll(hdr+ok, ",", "\t"))
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"log.csv", zipped, "not CSV text: this is gzip-compressed data; read it as csv.gz (name it .csv.gz, or give --format csv.gz)"},
		{"log.tsv", zipped, "not TSV text: this is gzip-compressed data; read it as tsv.gz"},
		{"log.csv", utf16LE(hdr+ok, true), "UTF-16 text (it starts with a UTF-16 byte-order mark); save it as UTF-8"},
		{"log.csv", utf16LE(hdr+ok, false), "UTF-16 text (every other byte of its first line is 0)"},
		{"log.csv", garbage, "not CSV text: this is binary data (byte 0x13 at offset 1 of its first line)"},
		{"log.csv", pqLog, "this is a Parquet file; read it as parquet (name it .parquet, or give --format parquet)"},
		{"log.csv", []byte("PK\x03\x04\x14\x00\x06\x00"), "a zip archive (an Excel .xlsx workbook is one)"},
		{"log.csv", []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00"), "an Excel 97-2003 workbook"},
		{"log.csv", []byte("\x28\xb5\x2f\xfd\x04\x00"), "zstd-compressed data; decompress it first (unzstd); ihope reads gzip (csv.gz) itself"},
		{"log.csv", []byte("BZh91AY&SY\x01\x02"), "bzip2-compressed data"},
		{"log.csv", semi, `row 1: the header is one column, "episode;t;state;action;reward;behavior_prob;target_prob", which is split by semicolons`},
		{"log.csv", tabs, "which is split by tabs: read it as tsv (name it .tsv, or give --format tsv)"},
		{"log.tsv", log, "which is split by commas: read it as csv (name it .csv, or give --format csv)"},
		{"log.csv", []byte(strings.ReplaceAll(hdr, ",", "|")), "split by '|'"},
		{"log.csv.gz", log, "not gzip-compressed: it does not start with gzip's magic number; if it is CSV text, read it as csv (name it .csv, or give --format csv)"},
		{"log.csv.gz", pqLog, "not gzip-compressed: it is a Parquet file"},
		{"log.csv.gz", zipped[:len(zipped)-9], "truncated gzip data (is the file complete?)"},
		{"log.csv.gz", append(zipped[:len(zipped)-8:len(zipped)-8], 1, 2, 3, 4, 5, 6, 7, 8), "damaged gzip data: gzip: invalid checksum"},
		{"log.parquet", log, "not a readable Parquet file: no PAR1 magic number at its start and end; it looks like CSV text; read it as csv"},
		{"log.parquet", tabs, "it looks like TSV text; read it as tsv"},
		{"log.parquet", pqLog[:len(pqLog)-20], "it starts as a Parquet file but does not end as one: truncated (is the file complete?)"},
		{"log.parquet", append(zipped, make([]byte, 8)...), "it looks like gzip-compressed data"},
		{"log.xlsx", log, `unknown file type ".xlsx"; want .csv, .tsv, .csv.gz, .tsv.gz or .parquet (or give the format, --format)`},
		{"log", log, `the file name has no extension to tell its format by`},
	} {
		path := filepath.Join(t.TempDir(), c.name)
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := logio.ReadFile(path)
		var fe *logio.FormatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s %.12q: got %v\nwant a *FormatError with %q", c.name, c.data, err, c.want)
		}
		if strings.Contains(err.Error(), "double quote") || strings.Contains(err.Error(), "%!") {
			t.Errorf("%s: %v", c.name, err) // %! is a fmt verb left over
		}
	}
}

// The same hints on a stream say what to give as --format.
func TestFormHintsStream(t *testing.T) {
	zipped := gz(t, []byte(hdr+ok))
	_, _, err := logio.Read(bytes.NewReader(zipped), "standard input", logio.ReadOptions{Format: logio.CSV})
	if err == nil || err.Error() != "standard input: not CSV text: this is gzip-compressed data; read it as csv.gz (name it .csv.gz, or give --format csv.gz)" {
		t.Errorf("gzip on a CSV stream: %v", err)
	}
	d, _, err := logio.Read(bytes.NewReader(zipped), "standard input", logio.ReadOptions{Format: logio.CSVGzip})
	if err != nil || d.NumSteps() != 1 {
		t.Errorf("gzip stream as csv.gz: %v", err)
	}
}

// A gzip file that fails part way stops its decompressing goroutine and
// names the row where the bad value is, as plain CSV does.
func TestGzipBadRow(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(hdr)
	for range 100000 {
		sb.WriteString("a,0,1,0,0.5,0.5,0.25\n")
	}
	path := filepath.Join(t.TempDir(), "log.csv.gz")
	if err := os.WriteFile(path, gz(t, []byte(hdr+ok+"a,1,1,0,x,0.5,0.5\n"+sb.String())), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := logio.ReadFile(path)
	if err == nil || err.Error() != path+`: row 3, column "reward": "x" is not a number` {
		t.Errorf("got %v", err)
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"csv", "TSV", "csv.gz", "tsv.gz", "Parquet"} {
		if _, err := logio.ParseFormat(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	if _, err := logio.ParseFormat("xlsx"); err == nil {
		t.Error("xlsx: no error")
	}
}
