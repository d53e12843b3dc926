package dataset

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ReadFile reads a log from path, choosing the format by the extension:
// .csv or .parquet (in any case). A log that breaks the contract gives a
// *FormatError naming path; any other extension is refused likewise.
func ReadFile(path string) (*Dataset, error) {
	ext, err := extension(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if ext == ".csv" {
		return ReadCSV(f, path)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return ReadParquet(f, st.Size(), path)
}

// WriteFile writes d to path as CSV or Parquet, by the extension (.csv or
// .parquet). The file is created or truncated; if writing fails, it is
// removed rather than left half written.
func WriteFile(path string, d *Dataset) (err error) {
	ext, err := extension(path)
	if err != nil {
		return err
	}
	if err := d.Validate(); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			err = fmt.Errorf("%s: %w", path, err)
		}
	}()
	bw := bufio.NewWriterSize(f, 256<<10)
	if ext == ".csv" {
		err = WriteCSV(bw, d)
	} else {
		err = WriteParquet(bw, d)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

func extension(path string) (string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".csv" && ext != ".parquet" {
		return "", &FormatError{File: path, Msg: fmt.Sprintf("unknown file type %q; want .csv or .parquet", filepath.Ext(path))}
	}
	return ext, nil
}
