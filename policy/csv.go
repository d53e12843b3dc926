package policy

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/ihope-ope/ihope/dataset/logio"
)

// ReadCSV reads a tabular policy in the authors' format: a header
// "state,p0,p1,...", then one row per state with the state id first.
// The rows may come in any order, but every state 0, 1, ..., S-1 must
// have exactly one (S-1 the largest id); a UTF-8 byte-order mark before
// the header (Excel's "CSV UTF-8") is skipped. Numbers follow the log
// contract: Go's literal syntax (1_000, 0x1p-2) is refused.
func ReadCSV(r io.Reader) (*Tabular, error) {
	br := bufio.NewReader(r)
	logio.SkipBOM(br)
	cr := csv.NewReader(br)
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("policy csv: header: %w", err)
	}
	if len(header) < 2 || header[0] != "state" {
		return nil, fmt.Errorf("policy csv: header %q, want state,p0,p1,...", header)
	}
	for a, h := range header[1:] {
		if h != "p"+strconv.Itoa(a) {
			return nil, fmt.Errorf("policy csv: column %d is %q, want p%d", a+2, h, a)
		}
	}
	rows := map[int][]float64{} // by state id, checked for gaps at the end
	lines := map[int]int{}      // the row of each state
	maxState := -1
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("policy csv: %w", err)
		}
		s, err := strconv.Atoi(rec[0])
		if err != nil || s < 0 || strconv.Itoa(s) != rec[0] {
			return nil, fmt.Errorf("policy csv: row %d: state %q is not a state id (0, 1, 2, ...)", line, rec[0])
		}
		if first, ok := lines[s]; ok {
			return nil, fmt.Errorf("policy csv: row %d: state %d again (first on row %d)", line, s, first)
		}
		row := make([]float64, len(rec)-1)
		for a := range row {
			v, err := logio.ParseNumber(rec[a+1])
			if err != nil {
				return nil, fmt.Errorf("policy csv: row %d column %s: %v", line, header[a+1], err)
			}
			row[a] = v
		}
		if err := CheckRow(row); err != nil {
			return nil, fmt.Errorf("policy csv: %s", err.(*RowError).at(fmt.Sprintf("row %d (state %d)", line, s)))
		}
		rows[s], lines[s] = row, line
		maxState = max(maxState, s)
	}
	// Every id below the largest has a row: with as many rows as ids,
	// none is missing (ids are distinct), and a gap is found without
	// allocating up to an id far beyond the file (a typo of 1000000000).
	if maxState+1 != len(rows) {
		for s := 0; ; s++ {
			if _, ok := rows[s]; !ok {
				return nil, fmt.Errorf("policy csv: no row for state %d (states 0 ... %d must each have one)", s, maxState)
			}
		}
	}
	probs := make([][]float64, len(rows))
	for s, row := range rows {
		probs[s] = row
	}
	t, err := NewTabular(probs)
	if err != nil {
		return nil, fmt.Errorf("policy csv: %w", err)
	}
	return t, nil
}

// WriteCSV writes t in the format ReadCSV reads, with every probability
// printed exactly (shortest round-trip form).
func (t *Tabular) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("state")
	for a := 0; a < t.nA; a++ {
		fmt.Fprintf(bw, ",p%d", a)
	}
	bw.WriteByte('\n')
	for s := 0; s < t.nS; s++ {
		bw.WriteString(strconv.Itoa(s))
		for _, v := range t.Row(s) {
			bw.WriteByte(',')
			bw.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
