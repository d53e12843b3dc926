package logio

import (
	"encoding/csv"
	"io"
	"strconv"
)

// Labels are the labels of categorical columns (ReadOptions.Categorical):
// State[id] is the label of state id (state and next_state share one
// numbering), Action[id] the label of action id. A column read as ids
// has none (nil). Ids follow the labels' sorted (byte) order, so the same
// labels get the same ids in any file and any row order.
type Labels struct {
	State, Action []string
}

// WriteCSV writes the labels as CSV with the header column,id,label and
// one row per label, the states first:
//
//	column,id,label
//	state,0,home
//	state,1,work
//	action,0,left
func (l *Labels) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"column", "id", "label"})
	for _, c := range []struct {
		name   string
		labels []string
	}{{"state", l.State}, {"action", l.Action}} {
		for id, s := range c.labels {
			cw.Write([]string{c.name, strconv.Itoa(id), s})
		}
	}
	cw.Flush()
	return cw.Error()
}
