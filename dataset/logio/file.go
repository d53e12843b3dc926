package logio

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ihope-ope/ihope/dataset"
)

// Format is a form a log file takes: the contract's table as CSV or TSV
// text, either gzip-compressed, or Parquet.
type Format string

// The formats, named as --format names them and as a file's extension
// ends (.csv, .tsv, .csv.gz, .tsv.gz, .parquet).
const (
	CSV     Format = "csv"     // comma-separated text (RFC 4180 quoting)
	TSV     Format = "tsv"     // tab-separated text, quoted as CSV is
	CSVGzip Format = "csv.gz"  // gzip-compressed CSV
	TSVGzip Format = "tsv.gz"  // gzip-compressed TSV
	Parquet Format = "parquet" // Apache Parquet
)

// Formats lists every format.
var Formats = []Format{CSV, TSV, CSVGzip, TSVGzip, Parquet}

// ParseFormat returns the format named s ("csv", "tsv", "csv.gz",
// "tsv.gz" or "parquet", in any case).
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if strings.EqualFold(s, string(f)) {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q; want csv, tsv, csv.gz, tsv.gz or parquet", s)
}

// FormatOf returns the format a path's extension names: .csv, .tsv,
// .csv.gz, .tsv.gz or .parquet, in any case. Any other name gives a
// *FormatError.
func FormatOf(path string) (Format, error) {
	lower := strings.ToLower(path)
	for _, f := range [...]Format{CSVGzip, TSVGzip, CSV, TSV, Parquet} {
		if strings.HasSuffix(lower, "."+string(f)) {
			return f, nil
		}
	}
	ext := path[strings.LastIndexByte(path, '.')+1:]
	if !strings.Contains(path, ".") || strings.ContainsAny(ext, `/\`) {
		return "", &FormatError{File: path, Msg: "the file name has no extension to tell its format by; want .csv, .tsv, .csv.gz, .tsv.gz or .parquet " +
			"(or give the format, --format)"}
	}
	return "", &FormatError{File: path, Msg: fmt.Sprintf("unknown file type %q; want .csv, .tsv, .csv.gz, .tsv.gz or .parquet "+
		"(or give the format, --format)", "."+ext)}
}

// sep is the field separator of a text format.
func (f Format) sep() byte {
	if f == TSV || f == TSVGzip {
		return '\t'
	}
	return ','
}

// gzipped reports whether f is compressed.
func (f Format) gzipped() bool { return f == CSVGzip || f == TSVGzip }

// text returns the text format of f without compression.
func (f Format) text() Format {
	switch f {
	case CSVGzip:
		return CSV
	case TSVGzip:
		return TSV
	}
	return f
}

// upper names a format in capitals, for messages.
func (f Format) upper() string { return strings.ToUpper(string(f)) }

// ReadFile reads a log from path in the contract's own form, choosing
// the format by the extension (FormatOf). A log that breaks the contract
// gives a *FormatError naming path.
func ReadFile(path string) (*dataset.Dataset, error) {
	d, _, err := ReadFileWith(path, ReadOptions{})
	return d, err
}

// ReadFileWith reads a log from path as o says: in o.Format (by the
// extension if ""), with the columns mapped, ignored and read as labels
// as o says. The labels are nil unless o.Categorical names columns.
//
// A file whose content does not match its format is refused with a
// message saying what it looks like: gzip-compressed data, UTF-16 text,
// a Parquet file or a spreadsheet named .csv, CSV text named .parquet,
// a header split by semicolons or tabs in a .csv.
func ReadFileWith(path string, o ReadOptions) (*dataset.Dataset, *Labels, error) {
	if err := o.Check(); err != nil {
		return nil, nil, err
	}
	f := o.Format
	if f == "" {
		var err error
		if f, err = FormatOf(path); err != nil {
			return nil, nil, err
		}
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, nil, err
	}
	if f != Parquet {
		var size int64 // unknown for a pipe or a device
		if st.Mode().IsRegular() {
			size = st.Size()
		}
		return readText(file, size, path, f, &o)
	}
	if !st.Mode().IsRegular() { // a pipe or a device: no random access
		return readAllParquet(file, path, &o)
	}
	return readParquet(file, st.Size(), path, &o)
}

// Read reads a log in o.Format, which it needs, from r (standard input,
// a network stream); name is used in error messages. Text formats are
// read streaming; Parquet, which is read from its end, is read into
// memory first.
func Read(r io.Reader, name string, o ReadOptions) (*dataset.Dataset, *Labels, error) {
	if err := o.Check(); err != nil {
		return nil, nil, err
	}
	if o.Format == "" {
		return nil, nil, errors.New("logio.Read: no format given (ReadOptions.Format)")
	}
	if o.Format == Parquet {
		return readAllParquet(r, name, &o)
	}
	return readText(r, 0, name, o.Format, &o)
}

// ReadAt reads a log in o.Format, which it needs, from the size bytes of
// r (a file read through a wrapper, a memory map); name is used in error
// messages. Text formats are read from the start, streaming; Parquet by
// random access, as ReadFileWith reads a file.
func ReadAt(r io.ReaderAt, size int64, name string, o ReadOptions) (*dataset.Dataset, *Labels, error) {
	if err := o.Check(); err != nil {
		return nil, nil, err
	}
	if o.Format == "" {
		return nil, nil, errors.New("logio.ReadAt: no format given (ReadOptions.Format)")
	}
	if o.Format == Parquet {
		return readParquet(r, size, name, &o)
	}
	return readText(io.NewSectionReader(r, 0, size), size, name, o.Format, &o)
}

func readAllParquet(r io.Reader, name string, o *ReadOptions) (*dataset.Dataset, *Labels, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return readParquet(bytes.NewReader(b), int64(len(b)), name, o)
}

// readText reads a text format, decompressing it first if f is gzipped;
// size is the number of bytes r holds, if known (0 if not).
func readText(r io.Reader, size int64, name string, f Format, o *ReadOptions) (*dataset.Dataset, *Labels, error) {
	if !f.gzipped() {
		return readDelimited(r, size, name, f, o)
	}
	br := bufio.NewReaderSize(r, 64<<10) // gzip reads through it
	head, _ := br.Peek(sniffLen)
	if !bytes.HasPrefix(head, []byte("\x1f\x8b")) {
		what := "it does not start with gzip's magic number"
		if l, ok := sniff(head); ok {
			what = "it is " + l.what
		} else if len(head) > 0 {
			what += fmt.Sprintf("; if it is %s text, read it as %s (name it .%[2]s, or give --format %[2]s)", f.text().upper(), f.text())
		}
		return nil, nil, &FormatError{File: name, Msg: "not gzip-compressed: " + what}
	}
	z, err := newGunzip(br, name)
	if err != nil {
		return nil, nil, err
	}
	defer z.Close()
	return readDelimited(z, 0, name, f, o)
}

// WriteFile writes d to path in the format its extension names
// (FormatOf): CSV, TSV, either gzip-compressed, or Parquet. The file is
// created or truncated; if writing fails, it is removed rather than left
// half written.
func WriteFile(path string, d *dataset.Dataset) (err error) {
	f, err := FormatOf(path)
	if err != nil {
		return err
	}
	if err := d.Validate(); err != nil {
		return err
	}
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			err = fmt.Errorf("%s: %w", path, err)
		}
	}()
	return write(file, d, f)
}

// Write writes d to w in format f. It first checks d with Validate, so
// that whatever it writes reads back as the same dataset.
func Write(w io.Writer, d *dataset.Dataset, f Format) error {
	if _, err := ParseFormat(string(f)); err != nil {
		return err
	}
	if err := d.Validate(); err != nil {
		return err
	}
	return write(w, d, f)
}

// write is Write without the checks.
func write(w io.Writer, d *dataset.Dataset, f Format) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	var err error
	switch {
	case f == Parquet:
		err = writeParquet(bw, d)
	case f.gzipped():
		z := gzip.NewWriter(bw)
		if err = writeDelimited(z, d, f.sep()); err == nil {
			err = z.Close()
		}
	default:
		err = writeDelimited(bw, d, f.sep())
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}
