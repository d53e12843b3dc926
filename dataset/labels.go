package dataset

import (
	"bufio"
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
	bw := bufio.NewWriter(w)
	buf := []byte("column,id,label\n")
	for _, c := range []struct {
		name   string
		labels []string
	}{{"state", l.State}, {"action", l.Action}} {
		for id, s := range c.labels {
			buf = append(buf, c.name...)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(id), 10)
			buf = append(buf, ',')
			buf = appendField(buf, s, ',')
			buf = append(buf, '\n')
			if len(buf) > 32<<10 {
				if _, err := bw.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	return bw.Flush()
}
