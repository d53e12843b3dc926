package policy

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ReadCSV reads a tabular policy in the authors' format: a header
// "state,p0,p1,...", then one row per state with the state id first.
// States must be listed as 0, 1, 2, ... in order.
func ReadCSV(r io.Reader) (*Tabular, error) {
	cr := csv.NewReader(bufio.NewReader(r))
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
	var probs [][]float64
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("policy csv: %w", err)
		}
		s, err := strconv.Atoi(rec[0])
		if err != nil || s != len(probs) {
			return nil, fmt.Errorf("policy csv: row %d: state %q, want %d", line, rec[0], len(probs))
		}
		row := make([]float64, len(rec)-1)
		for a := range row {
			v, err := strconv.ParseFloat(rec[a+1], 64)
			if err != nil {
				return nil, fmt.Errorf("policy csv: row %d column %s: %q is not a number", line, header[a+1], rec[a+1])
			}
			row[a] = v
		}
		if err := CheckRow(row); err != nil {
			return nil, fmt.Errorf("policy csv: %s", err.(*RowError).at(fmt.Sprintf("row %d (state %d)", line, s)))
		}
		probs = append(probs, row)
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
