package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Float is a float64 that survives JSON: finite values are numbers,
// NaN and infinities (an importance-sampling estimate can overflow) are
// the strings "NaN", "+Inf" and "-Inf".
type Float float64

// MarshalJSON encodes f as a number or, if not finite, a string.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return json.Marshal(v)
}

// UnmarshalJSON decodes what MarshalJSON writes.
func (f *Float) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("bad number %q", s)
		}
		*f = Float(v)
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = Float(v)
	return nil
}

// Record is one estimator's result in one cell.
type Record struct {
	Estimator string `json:"estimator"`
	// Estimate is NaN when the estimator failed; Error then says why.
	Estimate Float `json:"estimate"`
	// SqError is (Estimate - Truth)^2, Truth the line's truth of the
	// record's Estimand (Line.Truths) when it has one, the line's Truth
	// otherwise.
	SqError Float  `json:"sq_error"`
	Error   string `json:"error,omitempty"`
	// Estimand, if set, is the quantity the estimate targets ("horizon",
	// "long-run"), for lines that hold the truth of more than one.
	Estimand string `json:"estimand,omitempty"`
	// Low and High, if set, are the estimate's interval, and Interval
	// says how it was computed ("bootstrap", "wald").
	Low      *Float `json:"low,omitempty"`
	High     *Float `json:"high,omitempty"`
	Interval string `json:"interval,omitempty"`
	// Collapsed says that the estimate's weights collapse onto a few
	// units (ope.WeightSummaryWarnings), as ihope estimate warns.
	Collapsed bool `json:"collapsed,omitempty"`
	// BootstrapBias is the bootstrap resamples' mean minus the estimate
	// and BootstrapFailures the resamples that failed, of Resamples,
	// where the interval is the bootstrap's: what ihope estimate's
	// diagnostics read (ope.Distrust).
	BootstrapBias     *Float `json:"bootstrap_bias,omitempty"`
	BootstrapFailures int    `json:"bootstrap_failures,omitempty"`
	Resamples         int    `json:"resamples,omitempty"`
}

// Line is one cell of the results file: one JSON object per line.
type Line struct {
	Experiment string `json:"experiment"`
	Panel      string `json:"panel"`
	Setting    string `json:"setting"`
	XName      string `json:"x_name"`
	X          Float  `json:"x"`
	Tick       string `json:"x_tick,omitempty"`
	Seed       int    `json:"seed"`

	Truth       Float  `json:"truth"`
	TruthSE     Float  `json:"truth_se"`
	TruthMethod string `json:"truth_method,omitempty"`
	// Truths, if set, holds the exact truth of every estimand the
	// records may target, by name (Record.Estimand); Truth is then the
	// truth of the estimand asked for.
	Truths map[string]Float `json:"truths,omitempty"`

	Records []Record           `json:"records,omitempty"`
	Metrics map[string]Float   `json:"metrics,omitempty"`
	Vectors map[string][]Float `json:"vectors,omitempty"`
}

// Key returns the cell's identity, panel/setting/seed.
func (l *Line) Key() string { return CellKey(l.Panel, l.Setting, l.Seed) }

// CellKey returns the identity of a cell.
func CellKey(panel, setting string, seed int) string {
	return panel + "/" + setting + "/" + strconv.Itoa(seed)
}

// TruthOf returns the truth a record is scored against: the line's truth
// of the record's estimand if the line holds one, its Truth otherwise.
func (l *Line) TruthOf(r *Record) float64 {
	if v, ok := l.Truths[r.Estimand]; ok && r.Estimand != "" {
		return float64(v)
	}
	return float64(l.Truth)
}

// Covers reports whether a record's interval holds the truth it is
// scored against, to within 1e-9 max(1, |truth|): an exact model of a
// deterministic world gives a zero-width interval at the truth, which
// rounding would otherwise miss. ok is false when the record has no
// interval.
func (l *Line) Covers(r *Record) (covered, ok bool) {
	if r.Low == nil || r.High == nil || r.Error != "" {
		return false, false
	}
	v := l.TruthOf(r)
	tol := 1e-9 * math.Max(1, math.Abs(v))
	return float64(*r.Low)-tol <= v && v <= float64(*r.High)+tol, true
}

// Metric returns a metric of the cell, NaN if it is missing.
func (l *Line) Metric(name string) float64 {
	if v, ok := l.Metrics[name]; ok {
		return float64(v)
	}
	return math.NaN()
}

// Vector returns a vector of the cell as float64s, nil if missing.
func (l *Line) Vector(name string) []float64 {
	v, ok := l.Vectors[name]
	if !ok {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// marshal encodes l as one line ending in '\n'. encoding/json sorts map
// keys, so equal lines encode to equal bytes.
func (l *Line) marshal() ([]byte, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// FileName returns the results file of an experiment in dir:
// NAME.jsonl, or NAME.quick.jsonl for the quick grid (Runner.Quick in
// package experiment) so that a quick run never mixes with a full one.
func FileName(dir, name string, quick bool) string {
	if quick {
		return filepath.Join(dir, name+".quick.jsonl")
	}
	return filepath.Join(dir, name+".jsonl")
}

// Read reads a results file. A last line without its newline or that
// does not parse is the trace of a killed run: it is dropped, and
// repaired reports that (the runner then truncates the file there). A bad
// line anywhere else is an error naming the line. A missing file gives no
// lines and no error.
func Read(path string) (lines []Line, repaired bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	lines, good, err := Parse(path, data)
	return lines, good < len(data), err
}

// Parse parses the contents of the results file path and returns the
// lines and the length of the prefix made of complete, valid lines (less
// than len(data) when the last line is torn). path only names the file
// in errors.
func Parse(path string, data []byte) (lines []Line, valid int, err error) {
	off, num := 0, 0
	for off < len(data) {
		num++
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 { // truncated last line
			return lines, off, nil
		}
		raw := data[off : off+end]
		if len(bytes.TrimSpace(raw)) == 0 {
			off += end + 1
			continue
		}
		var l Line
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil || l.Panel == "" || l.Setting == "" {
			if off+end+1 == len(data) { // a torn last line: drop it
				return lines, off, nil
			}
			if err == nil {
				err = errors.New("missing panel or setting")
			}
			return nil, 0, fmt.Errorf("%s:%d: not a results line: %v", path, num, err)
		}
		lines = append(lines, l)
		off += end + 1
	}
	return lines, off, nil
}

// Appender appends lines to a results file, one write per line, so a
// killed run leaves only whole lines (and at worst one torn last line,
// which Read drops).
type Appender struct {
	f *os.File
}

// OpenAppender opens path for appending, first truncating it to the
// valid prefix of its contents (validLen, as Parse returns it).
func OpenAppender(path string, validLen int64) (*Appender, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(validLen); err != nil {
		f.Close()
		return nil, fmt.Errorf("repair %s: %w", path, err)
	}
	if _, err := f.Seek(validLen, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return &Appender{f: f}, nil
}

// Append writes l as one line, with a single write.
func (a *Appender) Append(l *Line) error {
	b, err := l.marshal()
	if err != nil {
		return err
	}
	_, err = a.f.Write(b)
	return err
}

// Close closes the file.
func (a *Appender) Close() error { return a.f.Close() }

// WriteCanonical rewrites path atomically with lines in canonical order:
// the grid's order (panel, setting, seed) first, then any lines the grid
// does not know, sorted by key. An interrupted and resumed run thus ends
// with the same bytes as an uninterrupted one.
func WriteCanonical(path string, panels []Panel, lines []Line) error {
	rank := map[string]int{}
	i := 0
	for _, p := range panels {
		for _, s := range p.Settings {
			rank[p.Name+"/"+s.ID] = i
			i++
		}
	}
	sorted := slices.Clone(lines)
	slices.SortStableFunc(sorted, func(a, b Line) int {
		ra, oka := rank[a.Panel+"/"+a.Setting]
		rb, okb := rank[b.Panel+"/"+b.Setting]
		switch {
		case oka && okb && ra != rb:
			return ra - rb
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		case !oka && !okb:
			if c := strings.Compare(a.Panel+"/"+a.Setting, b.Panel+"/"+b.Setting); c != 0 {
				return c
			}
		}
		return a.Seed - b.Seed
	})
	var buf bytes.Buffer
	for k := range sorted {
		b, err := sorted[k].marshal()
		if err != nil {
			return err
		}
		buf.Write(b)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
