package logio

import (
	"fmt"
	"strings"

	"github.com/ihope-ope/ihope/dataset"
)

// FormatError reports a log that breaks the log contract (see the package
// documentation). Every reader in this package refuses a bad log with
// exactly one *FormatError, for the first problem it finds; the problems
// of a header come together, one a line after a first line that counts
// them, with Column "".
//
// Row is counted as a spreadsheet shows a CSV file: the header is row 1 and
// the first data row is row 2. In a Parquet file, which has no header row,
// the first record is row 1. Row is 0 when the problem is not tied to a row
// (an empty file, a Parquet schema) and Column is "" when it is not tied to
// a column (a row with the wrong number of fields).
type FormatError struct {
	File   string // the name given to the reader, usually the path
	Row    int    // 1-based row, 0 if not applicable
	Column string // column name, "" if not applicable
	Msg    string // what is wrong, readable on its own
}

// NoRows reports whether the error says a file holds no data rows (a
// header alone, or a Parquet file of 0 rows): an empty shard, which a
// stream of shards skips.
func (e *FormatError) NoRows() bool { return strings.HasPrefix(e.Msg, noRows) }

// noRows starts the message of a file without data rows.
const noRows = "no data rows"

// Error formats the error as, for example,
//
//	logs.csv: row 7, column "behavior_prob": 0 is outside (0, 1]
func (e *FormatError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	switch {
	case e.Row > 0 && e.Column != "":
		fmt.Fprintf(&b, "row %d, column %s: ", e.Row, dataset.Quote(e.Column))
	case e.Row > 0:
		fmt.Fprintf(&b, "row %d: ", e.Row)
	case e.Column != "":
		fmt.Fprintf(&b, "column %s: ", dataset.Quote(e.Column))
	}
	b.WriteString(e.Msg)
	return b.String()
}

// quote returns a field's text quoted for an error message, shortened if
// it is long so that one bad field cannot flood a terminal.
func quote(b []byte) string { return dataset.Quote(b) }

// maxNameLen is the longest column name a hint names in a flag; a longer
// one is told to be renamed (dataset.Quote cuts it in the message).
const maxNameLen = dataset.MaxQuoted

// num formats a float for an error message (shortest exact form).
