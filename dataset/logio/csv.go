package logio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/internal/rules"
)

// ReadCSV reads a log in the CSV form of the log contract (see the package
// documentation) from r; name is used in error messages, usually the path.
//
// The input is read once, streaming; fields may be quoted as in RFC 4180.
// A bad log is refused with one *FormatError; a failing reader gives its
// own error, wrapped with the name. Read reads TSV, gzip-compressed text
// and logs whose columns need mapping.
func ReadCSV(r io.Reader, name string) (*dataset.Dataset, error) {
	d, _, err := readDelimited(r, 0, name, CSV, nil)
	return d, err
}

// readDelimited reads the CSV or TSV form (f's separator) from r, through
// o (nil for the contract as it is); size is the number of bytes r holds,
// if known (0 if not), from which the columns are sized.
func readDelimited(r io.Reader, size int64, name string, f Format, o *ReadOptions) (*dataset.Dataset, *Labels, error) {
	sc := newCSVScanner(r, f.sep())
	if head, _ := sc.r.Peek(sniffLen); len(head) > 0 {
		if l, ok := sniff(head); ok {
			return nil, nil, notTextError(name, f, l)
		}
	}
	header, err := sc.next()
	if errors.Is(err, io.EOF) {
		return nil, nil, &FormatError{File: name, Msg: "empty file: want a header row and data rows"}
	}
	if err != nil {
		return nil, nil, sc.wrap(err, name, nil)
	}
	if sc.blank {
		return nil, nil, &FormatError{File: name, Row: 1, Msg: "the header row is empty"}
	}
	if len(header) == 1 {
		if err := delimiterError(name, f, header[0]); err != nil {
			return nil, nil, err
		}
	}
	names := make([]string, len(header))
	for j, h := range header {
		names[j] = string(h)
	}
	lay, err := newLayout(name, names, 1, o)
	if err != nil {
		return nil, nil, err
	}
	b := newBuilder(name, lay, 0)
	if size > 0 {
		b.expect = func() int { return sc.expectRows(size) }
	}
	p := csvRowParser{b: b, lay: lay, names: names, x: newRowExtra(lay)}
	blankRow := 0 // first empty line after the last data row
	for {
		fields, err := sc.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, sc.wrap(err, name, names)
		}
		if sc.blank {
			if blankRow == 0 {
				blankRow = sc.row
			}
			continue
		}
		if blankRow != 0 {
			return nil, nil, &FormatError{File: name, Row: blankRow, Msg: "empty line between data rows"}
		}
		if len(fields) != len(names) {
			if !sc.newline && len(fields) < len(names) {
				return nil, nil, &FormatError{File: name, Row: sc.row,
					Msg: fmt.Sprintf("truncated last line: %d of %d fields and no line end (is the file complete?)", len(fields), len(names))}
			}
			return nil, nil, &FormatError{File: name, Row: sc.row,
				Msg: fmt.Sprintf("%d fields, but the header has %d", len(fields), len(names))}
		}
		if sc.row > math.MaxInt32 {
			return nil, nil, &FormatError{File: name, Row: sc.row, Msg: "too many rows"}
		}
		if err := p.parse(fields, int32(sc.row)); err != nil {
			if repeatsHeader(fields, names) {
				return nil, nil, &FormatError{File: name, Row: sc.row, Msg: "the header row again (two files joined with both headers?): keep the first header only"}
			}
			return nil, nil, err
		}
	}
	if b.n == 0 {
		return nil, nil, &FormatError{File: name, Msg: noRows + " after the header"}
	}
	return b.finish()
}

// csvRowParser checks and converts the fields of one data row.
type csvRowParser struct {
	b     *builder
	lay   *layout
	names []string
	x     *rowExtra // the current row's optional vectors
}

func (p *csvRowParser) parse(fields [][]byte, row int32) error {
	b, lay := p.b, p.lay
	r := rec{state: -1, action: -1, next: -1, ntp: -1, row: row}
	x := p.x
	x.reset()
	obs, act, tp := b.vectors()
	discrete := lay.discreteActions()
	for j, f := range fields {
		c := &lay.cols[j]
		var msg string
		switch c.role {
		case roleEpisode:
			if len(f) == 0 {
				msg = "empty value"
				break
			}
			r.ep = b.episode(f)
		case roleT, roleState, roleAction:
			var v int32
			v, msg = parseIndex(f, indexNoun[c.role])
			switch c.role {
			case roleT:
				r.t = v
			case roleState:
				r.state = v
			default:
				r.action = v
			}
			if msg != "" && c.role != roleT {
				msg += labelHint(msg, c.role)
			}
		case roleNext:
			if len(f) > 0 {
				r.next, msg = parseIndex(f, indexNoun[c.role])
				if msg != "" {
					msg += labelHint(msg, c.role)
				}
			}
		case roleStateLabel:
			r.state, msg = label(b.states, f)
		case roleActionLabel:
			r.action, msg = label(b.actions, f)
		case roleNextLabel:
			if len(f) > 0 {
				r.next = b.states.id(f)
			}
		case roleStateK, roleActionK, roleReward:
			var v float64
			v, msg = parseReal(f)
			if msg == "" {
				msg = rules.Real(v)
			}
			switch c.role {
			case roleStateK:
				obs[c.k] = v
			case roleActionK:
				act[c.k] = v
			default:
				r.reward = v
			}
		case roleNextK:
			if len(f) == 0 {
				miss(&x.nextMissing, c.k)
				break
			}
			x.nextGiven++
			x.next[c.k], msg = parseReal(f)
			if msg == "" {
				msg = rules.Real(x.next[c.k])
			}
		case roleBehavior, roleBehaviorLn, roleTarget, roleTargetLn:
			var v float64
			v, msg = parseReal(f)
			if c.role == roleTarget || c.role == roleTargetLn {
				x.target = v
			}
			if msg == "" {
				v, msg = logProb(v, c.role, discrete)
			}
			if c.role == roleBehavior || c.role == roleBehaviorLn {
				r.lb = v
			} else {
				r.lt = v
			}
		case roleTerminal:
			r.terminal, msg = parseTerminal(f)
		case roleTruncated:
			r.truncated, msg = parseTerminal(f)
		case roleTargetK:
			tp[c.k], msg = parseReal(f)
			if msg == "" {
				msg = rules.Prob(tp[c.k])
			}
		case roleNextTarget:
			if len(f) == 0 {
				miss(&x.ntpMissing, c.k)
				break
			}
			x.ntpGiven++
			x.ntp[c.k], msg = parseReal(f)
			if msg == "" {
				msg = rules.Prob(x.ntp[c.k])
			}
		}
		if msg != "" {
			return &FormatError{File: b.file, Row: int(row), Column: c.name, Msg: msg}
		}
	}
	return b.addRow(r, x, "empty value")
}

// labelHint is what a message about a state or action that is not a
// number adds: they may be labels.
func labelHint(msg string, r role) string {
	if !strings.HasSuffix(msg, " is not a number") {
		return ""
	}
	c := "state"
	if r == roleAction {
		c = "action"
	}
	return fmt.Sprintf(" (if the %ss are labels, read them with --categorical %[1]s)", c)
}

// label returns the number of a label field.
func label(l *labeler, f []byte) (int32, string) {
	if len(f) == 0 {
		return 0, "empty value"
	}
	return l.id(f), ""
}

// ParseNumber parses a number field as the log reader does: Go's literal
// syntax that strconv.ParseFloat also reads (1_000, 0x1p-2) is refused,
// and so are NaN and infinities. Other readers of ihope's text files (a
// policy table, target draws) use it so that one rule holds for all.
func ParseNumber(f string) (float64, error) {
	v, msg := parseReal([]byte(f))
	if msg == "" {
		msg = rules.Real(v)
	}
	if msg != "" {
		return 0, errors.New(msg)
	}
	return v, nil
}

// SkipBOM skips a UTF-8 byte-order mark at the start of r (Excel's "CSV
// UTF-8" writes one), as the log reader does.
func SkipBOM(r *bufio.Reader) {
	if b, err := r.Peek(3); err == nil && string(b) == "\xef\xbb\xbf" {
		r.Discard(3)
	}
}

// parseReal parses a float field. NaN and infinities parse (the callers
// refuse them with a clearer message).
func parseReal(f []byte) (float64, string) {
	if len(f) == 0 {
		return 0, "empty value"
	}
	// strconv.ParseFloat also reads Go's literal syntax, underscores
	// between digits ("1_000") and hexadecimal floats ("0x1p-2"), which no
	// exporter writes and which would turn a typo into a number.
	if bytes.ContainsAny(f, "_xX") {
		return 0, quote(f) + " is not a number"
	}
	// string(f) does not escape, so for short fields Go converts it on the
	// stack: no allocation per field.
	v, err := strconv.ParseFloat(string(f), 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, quote(f) + " is out of the range of a float64"
		}
		return 0, quote(f) + " is not a number"
	}
	return v, ""
}

// parseTerminal parses a terminal field: 0 or 1 (or a float equal to
// them), or true or false in any case, as pandas writes a bool column.
func parseTerminal(f []byte) (int8, string) {
	switch {
	case bytes.EqualFold(f, []byte("true")):
		return 1, ""
	case bytes.EqualFold(f, []byte("false")):
		return 0, ""
	}
	v, msg := parseReal(f)
	if msg != "" {
		if len(f) > 0 {
			msg = quote(f) + " is not 0, 1, true or false"
		}
		return 0, msg
	}
	return terminalFlag(v)
}

// parseIndex parses a non-negative integer field: digits, or any number
// that is a whole number ("3.0", "3e2").
func parseIndex(f []byte, noun string) (int32, string) {
	if len(f) == 0 {
		return 0, "empty value"
	}
	if len(f) <= 10 {
		v := int64(0)
		ok := true
		for _, c := range f {
			if c < '0' || c > '9' {
				ok = false
				break
			}
			v = v*10 + int64(c-'0')
		}
		if ok {
			if msg := checkIndex(v, noun); msg != "" {
				return 0, msg
			}
			return int32(v), ""
		}
	}
	v, msg := parseReal(f)
	if msg != "" {
		return 0, msg
	}
	return floatIndex(v, noun)
}

// csvScanner splits CSV input into records. Unquoted records (the usual
// case) are returned as slices of the read buffer without copying; records
// with quotes are unescaped into a buffer of the scanner. The returned
// fields are valid until the next call.
type csvScanner struct {
	r      *bufio.Reader
	sep    byte // the field separator
	fields [][]byte
	long   []byte // a line longer than the read buffer
	out    []byte // unescaped fields of a quoted record
	ends   []int

	row     int   // row number of the last record (the header is row 1)
	read    int64 // bytes of the lines read
	newline bool  // whether the last record ended with a line end
	blank   bool  // whether the last record was an empty line
}

// scanError is a quoting error in field col (0-based) of a record.
type scanError struct {
	row, col int
	msg      string
}

func (e *scanError) Error() string { return e.msg }

// newCSVScanner returns a scanner of records whose fields are separated
// by sep: ',' for CSV, '\t' for TSV (quoted as in CSV).
func newCSVScanner(r io.Reader, sep byte) *csvScanner {
	return &csvScanner{r: bufio.NewReaderSize(r, 256<<10), sep: sep}
}

// wrap turns a scanning error into a FormatError (names may be nil while
// reading the header) or wraps a read error with the file name.
func (sc *csvScanner) wrap(err error, file string, names []string) error {
	var fe *FormatError
	if errors.As(err, &fe) { // from the reader: a damaged gzip stream
		return err
	}
	var se *scanError
	if errors.As(err, &se) {
		col := ""
		if se.col >= 0 && se.col < len(names) {
			col = names[se.col]
		}
		return &FormatError{File: file, Row: se.row, Column: col, Msg: se.msg}
	}
	return fmt.Errorf("%s: %w", file, err)
}

// line returns the next raw line including its '\n', if any.
func (sc *csvScanner) line() ([]byte, error) {
	line, err := sc.r.ReadSlice('\n')
	sc.read += int64(len(line))
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	sc.long = append(sc.long[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		if len(sc.long) > maxLine {
			return nil, &scanError{sc.row + 1, -1, fmt.Sprintf("line longer than %d MiB; is this a CSV file?", maxLine>>20)}
		}
		line, err = sc.r.ReadSlice('\n')
		sc.read += int64(len(line))
		sc.long = append(sc.long, line...)
	}
	return sc.long, err
}

// expectRows estimates the data rows of a text of size bytes from the
// mean length of the lines read and of those already in the read buffer
// (about 4,000 lines of a usual log at the first row), with 3% to spare:
// sizing the columns once instead of doubling them saves both the copies
// and the fresh memory of the columns left behind.
func (sc *csvScanner) expectRows(size int64) int {
	buf, _ := sc.r.Peek(sc.r.Buffered())
	buf = buf[:bytes.LastIndexByte(buf, '\n')+1] // whole lines
	lines := int64(sc.row + bytes.Count(buf, []byte{'\n'}))
	n := int64(len(buf)) + sc.read
	if lines == 0 || n == 0 {
		return 0
	}
	rows := size*lines/n - 1 // less the header
	return int(min(rows+rows/32+16, math.MaxInt32))
}

// maxLine bounds the length of a line, so that a file without line ends
// cannot exhaust memory.
const maxLine = 64 << 20

// next returns the fields of the next record, or io.EOF.
func (sc *csvScanner) next() ([][]byte, error) {
	line, err := sc.line()
	if len(line) == 0 {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, err
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	sc.row++
	if sc.row == 1 {
		line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a UTF-8 byte-order mark
		if len(line) == 0 {
			return nil, io.EOF
		}
	}
	if bytes.IndexByte(line, '"') >= 0 {
		return sc.quoted(line)
	}
	sc.newline = line[len(line)-1] == '\n'
	if sc.newline {
		line = line[:len(line)-1]
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
	}
	sc.blank = len(line) == 0
	sc.fields = sc.fields[:0]
	for {
		i := bytes.IndexByte(line, sc.sep)
		if i < 0 {
			sc.fields = append(sc.fields, line)
			return sc.fields, nil
		}
		sc.fields = append(sc.fields, line[:i])
		line = line[i+1:]
	}
}

// quoted parses a record that holds a double quote, reading more lines if
// a quoted field spans them.
func (sc *csvScanner) quoted(line []byte) ([][]byte, error) {
	sc.out, sc.ends = sc.out[:0], sc.ends[:0]
	sc.blank = false
	startRow := sc.row
	// atEnd reports whether line[i:] is a line end or nothing.
	atEnd := func(line []byte, i int) bool {
		rest := line[i:]
		return len(rest) == 0 || string(rest) == "\n" || string(rest) == "\r\n"
	}
	i := 0
	for col := 0; ; col++ {
		if i < len(line) && line[i] == '"' {
			i++
			for {
				q := bytes.IndexByte(line[i:], '"')
				if q < 0 {
					// The field goes on in the next line.
					sc.out = append(sc.out, line[i:]...)
					if len(sc.out) > maxLine {
						return nil, &scanError{startRow, col, fmt.Sprintf("quoted field longer than %d MiB; is a closing quote missing?", maxLine>>20)}
					}
					var err error
					line, err = sc.line()
					i = 0
					if len(line) == 0 {
						if err == nil || errors.Is(err, io.EOF) {
							return nil, &scanError{startRow, col, "unterminated quoted field (is the file complete?)"}
						}
						return nil, err
					}
					if err != nil && !errors.Is(err, io.EOF) {
						return nil, err
					}
					continue
				}
				sc.out = append(sc.out, line[i:i+q]...)
				i += q + 1
				if i < len(line) && line[i] == '"' { // "" is an escaped quote
					sc.out = append(sc.out, '"')
					i++
					continue
				}
				break
			}
			sc.ends = append(sc.ends, len(sc.out))
			switch {
			case i < len(line) && line[i] == sc.sep:
				i++
				continue
			case atEnd(line, i):
				sc.newline = i < len(line)
				return sc.split(), nil
			default:
				return nil, &scanError{sc.row, col, fmt.Sprintf("unexpected %q after a closing quote", line[i])}
			}
		}
		// An unquoted field.
		j := bytes.IndexByte(line[i:], sc.sep)
		end := len(line)
		if j >= 0 {
			end = i + j
		} else {
			sc.newline = end > 0 && line[end-1] == '\n'
			if sc.newline {
				end--
				if end > i && line[end-1] == '\r' {
					end--
				}
			}
		}
		f := line[i:end]
		if bytes.IndexByte(f, '"') >= 0 {
			return nil, &scanError{sc.row, col, `a double quote in an unquoted field; quote the field and double the quote ("")`}
		}
		sc.out = append(sc.out, f...)
		sc.ends = append(sc.ends, len(sc.out))
		if j < 0 {
			return sc.split(), nil
		}
		i = end + 1
	}
}

// split returns the fields of sc.out delimited by sc.ends.
func (sc *csvScanner) split() [][]byte {
	sc.fields = sc.fields[:0]
	start := 0
	for _, e := range sc.ends {
		sc.fields = append(sc.fields, sc.out[start:e:e])
		start = e
	}
	return sc.fields
}

// WriteCSV writes d in the CSV form of the log contract: columns episode,
// t, state (or state_0 ...), action (or action_0 ...), reward,
// behavior_logprob (if d has behavior probabilities), target_logprob and
// next_state (or next_state_0 ...),
// which is filled on the last row of each episode that has a next state
// and empty elsewhere. A dataset with TargetProbs adds target_prob_0 ...
// target_prob_{K-1} (K = NumActions) after target_logprob, and, if some
// episode has HasFinalTarget, next_target_prob_0 ... after the next-state
// columns, filled on those episodes' last rows and empty elsewhere.
// Numbers are written in the shortest form that reads back exactly; a
// target log-probability of -Inf is written "-Inf".
//
// WriteCSV first checks d with Validate, so that whatever it writes,
// ReadCSV reads back as the same dataset.
func WriteCSV(w io.Writer, d *dataset.Dataset) error {
	if err := d.Validate(); err != nil {
		return err
	}
	return writeDelimited(w, d, ',')
}

// writeDelimited writes d as CSV with the field separator sep (',' for
// CSV, '\t' for TSV), without checking it first.
func writeDelimited(w io.Writer, d *dataset.Dataset, sep byte) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	sd, ad := d.StateDim, d.ActionDim
	buf := make([]byte, 0, 256)
	buf = append(append(append(buf, "episode"...), sep), 't')
	buf = appendNames(buf, sep, "state", sd)
	buf = appendNames(buf, sep, "action", ad)
	buf = appendNames(buf, sep, "reward", 0)
	if d.HasBehavior() {
		buf = appendNames(buf, sep, "behavior_logprob", 0)
	}
	buf = appendNames(buf, sep, "target_logprob", 0)
	K, nextK := targetColumns(d)
	if K > 0 {
		buf = appendNames(buf, sep, "target_prob", K)
	}
	buf = appendNames(buf, sep, "next_state", sd)
	if nextK {
		buf = appendNames(buf, sep, "next_target_prob", K)
	}
	if d.Terminal != nil {
		buf = appendNames(buf, sep, "terminal", 0)
	}
	buf = append(buf, '\n')
	for e := range d.NumEpisodes() {
		id := appendField(nil, d.IDs[e], sep)
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			buf = append(buf, id...)
			buf = append(buf, sep)
			buf = strconv.AppendInt(buf, int64(j-lo), 10)
			if sd == 0 {
				buf = appendState(buf, sep, int(d.State[j]), nil, 0)
			} else {
				buf = appendState(buf, sep, -1, d.ObsAt(j), sd)
			}
			if ad == 0 {
				buf = appendState(buf, sep, int(d.Action[j]), nil, 0)
			} else {
				buf = appendState(buf, sep, -1, d.ActionVecAt(j), ad)
			}
			buf = append(buf, sep)
			buf = strconv.AppendFloat(buf, d.Reward[j], 'g', -1, 64)
			if d.HasBehavior() {
				buf = append(buf, sep)
				buf = strconv.AppendFloat(buf, d.LogBehavior[j], 'g', -1, 64)
			}
			buf = append(buf, sep)
			buf = strconv.AppendFloat(buf, d.LogTarget[j], 'g', -1, 64)
			if K > 0 {
				buf = appendState(buf, sep, -1, d.TargetProbsAt(j), K)
			}
			switch {
			case j == hi-1 && d.HasFinal[e] && sd == 0:
				buf = appendState(buf, sep, int(d.FinalState[e]), nil, 0)
			case j == hi-1 && d.HasFinal[e]:
				v, _ := d.NextObs(e, j)
				buf = appendState(buf, sep, -1, v, sd)
			case sd == 0:
				buf = append(buf, sep)
			default:
				for range sd {
					buf = append(buf, sep)
				}
			}
			if nextK {
				if j == hi-1 && d.HasFinalTarget[e] {
					v, _ := d.NextTargetProbs(e, j)
					buf = appendState(buf, sep, -1, v, K)
				} else {
					for range K {
						buf = append(buf, sep)
					}
				}
			}
			if d.Terminal != nil {
				flag := byte('0')
				if j == hi-1 && d.Terminal[e] {
					flag = '1'
				}
				buf = append(buf, sep, flag)
			}
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

// targetColumns returns the number of target_prob_k columns a writer
// writes (0 without TargetProbs) and whether it writes next_target_prob_k
// (some episode has HasFinalTarget).
func targetColumns(d *dataset.Dataset) (K int, next bool) {
	if d.TargetProbs == nil {
		return 0, false
	}
	for _, h := range d.HasFinalTarget {
		next = next || h
	}
	return d.NumActions, next
}

// appendNames appends ",name" for an id or ",name_0,...,name_{n-1}",
// with sep for the comma.
func appendNames(buf []byte, sep byte, name string, n int) []byte {
	if n == 0 {
		return append(append(buf, sep), name...)
	}
	for k := range n {
		buf = append(append(buf, sep), name...)
		buf = append(buf, '_')
		buf = strconv.AppendInt(buf, int64(k), 10)
	}
	return buf
}

// appendState appends ",id" or the n components of vec, with sep for the
// comma.
func appendState(buf []byte, sep byte, id int, vec []float64, n int) []byte {
	if n == 0 {
		return strconv.AppendInt(append(buf, sep), int64(id), 10)
	}
	for _, v := range vec {
		buf = strconv.AppendFloat(append(buf, sep), v, 'g', -1, 64)
	}
	return buf
}

// appendField appends s as a field of a file separated by sep, quoted if
// it must be.
func appendField(buf []byte, s string, sep byte) []byte {
	needs := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == sep || c == '"' || c == '\n' || c == '\r' {
			needs = true
			break
		}
	}
	if !needs {
		return append(buf, s...)
	}
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			buf = append(buf, '"')
		}
		buf = append(buf, s[i])
	}
	return append(buf, '"')
}

// repeatsHeader reports whether a row's fields are the header's names.
func repeatsHeader(fields [][]byte, names []string) bool {
	for j, f := range fields {
		if string(f) != names[j] {
			return false
		}
	}
	return true
}
