package logio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/internal/rules"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// ReadParquet reads a log in the Parquet form of the log contract (see the
// package documentation) from r, which holds size bytes; name is used in
// error messages, usually the path.
//
// Columns are flat (no groups or lists) and named as in the CSV form.
// Integer columns (t, state, action, next_state) may be INT32 or INT64, or
// FLOAT or DOUBLE holding whole numbers; real columns may be any of these
// four; episode may be a string (BYTE_ARRAY) or an integer. Columns may be
// optional, but a null counts as an empty value: it is refused everywhere
// except in next_state and next_target_prob_k. Row numbers in errors count
// records from 1.
// Columns are read in batches, so memory beyond the dataset stays small.
func ReadParquet(r io.ReaderAt, size int64, name string) (*dataset.Dataset, error) {
	d, _, err := readParquet(r, size, name, nil)
	return d, err
}

// readParquet reads the Parquet form through o (nil for the contract as
// it is). Ignored columns are not read.
func readParquet(r io.ReaderAt, size int64, name string, o *ReadOptions) (d *dataset.Dataset, labels *Labels, err error) {
	if msg := checkParquetFrame(r, size); msg != "" {
		head := make([]byte, min(size, sniffLen))
		if n, _ := r.ReadAt(head, 0); n == len(head) && !bytes.HasPrefix(head, []byte("PAR1")) {
			if what := describe(head); what != "" {
				msg += "; " + what
			}
		}
		return nil, nil, &FormatError{File: name, Msg: "not a readable Parquet file: " + msg}
	}
	chk, msg := newPQChecker(r, size)
	switch {
	case strings.Contains(msg, notRead):
		return nil, nil, &FormatError{File: name, Msg: msg}
	case msg != "":
		return nil, nil, &FormatError{File: name, Msg: "damaged Parquet file: " + msg}
	}
	defer chk.close()
	// parquet-go may panic on a damaged file that passed the checks;
	// report it as damaged.
	defer func() {
		if p := recover(); p != nil {
			d, labels, err = nil, nil, &FormatError{File: name, Msg: fmt.Sprintf("damaged Parquet file: %v", p)}
		}
	}()
	f, err := parquet.OpenFile(r, size, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return nil, nil, &FormatError{File: name, Msg: "not a readable Parquet file: " + err.Error()}
	}
	top := f.Root().Columns()
	names := make([]string, len(top))
	for j, c := range top {
		names[j] = c.Name()
	}
	lay, err := newLayout(name, names, 0, o)
	if err != nil {
		return nil, nil, err
	}
	var cols []*pqColumn // the columns read
	var leaf []int       // their leaf columns' indices in a row group
	var info []pqColumnInfo
	for j, c := range top {
		if lay.cols[j].role == roleIgnore {
			continue
		}
		if !c.Leaf() {
			return nil, nil, &FormatError{File: name, Column: c.Name(), Msg: "nested column (a group, list or map); the log contract has flat columns, one value per row"}
		}
		if c.Repeated() {
			return nil, nil, &FormatError{File: name, Column: c.Name(), Msg: "repeated column; the log contract has flat columns, one value per row"}
		}
		pc, msg := newPQColumn(&lay.cols[j], c.Type())
		if msg != "" {
			return nil, nil, &FormatError{File: name, Column: names[j], Msg: msg}
		}
		cols = append(cols, pc)
		leaf = append(leaf, c.Index())
		if !mendLZ4(c) {
			return nil, nil, &FormatError{File: name, Column: names[j], Msg: "compressed with LZ4_RAW, which this build of ihope cannot read (its parquet-go misreads it); write the file with ZSTD or Snappy"}
		}
		info = append(info, pqColumnInfo{kind: c.Type().Kind(), maxDef: c.MaxDefinitionLevel()})
	}

	b := newBuilder(name, lay, int(min(f.NumRows(), math.MaxInt32)))
	p := pqRowParser{b: b, lay: lay, x: newRowExtra(lay)}
	base := int64(0) // rows in earlier row groups
	for g, rg := range f.RowGroups() {
		n := rg.NumRows()
		if err := checkChunks(chk, g, n, cols, leaf, info, name); err != nil {
			return nil, nil, err
		}
		chunks := rg.ColumnChunks()
		for i, c := range cols {
			c.vr = parquet.NewColumnChunkValueReader(chunks[leaf[i]])
		}
		err := readBatches(cols, n, name, func(m int, off int64) error {
			for i := range m {
				row := base + off + int64(i) + 1
				if row > math.MaxInt32 {
					return &FormatError{File: name, Row: int(row), Msg: "too many rows"}
				}
				if err := p.parse(cols, i, int32(row)); err != nil {
					return err
				}
			}
			return nil
		})
		closeAll(cols)
		if err != nil {
			return nil, nil, err
		}
		base += n
	}
	return b.finish()
}

// checkParquetFrame checks the magic numbers and the footer length of a
// Parquet file before parquet-go trusts the length and allocates it.
func checkParquetFrame(r io.ReaderAt, size int64) string {
	if size < 12 {
		return fmt.Sprintf("%d bytes is too short", size)
	}
	var head [4]byte
	var tail [8]byte
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return err.Error()
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil && !errors.Is(err, io.EOF) {
		return err.Error()
	}
	if string(head[:]) == "PAR1" && string(tail[4:]) != "PAR1" {
		return "it starts as a Parquet file but does not end as one: truncated (is the file complete?)"
	}
	if string(head[:]) != "PAR1" || string(tail[4:]) != "PAR1" {
		return "no PAR1 magic number at its start and end"
	}
	footer := int64(binary.LittleEndian.Uint32(tail[:4]))
	if footer+12 > size {
		return fmt.Sprintf("its footer claims %d bytes but the file has %d (truncated or damaged?)", footer, size)
	}
	return ""
}

// pqBatch is the number of rows converted at a time.
const pqBatch = 4096

// checkChunks checks the column chunks of row group g (n rows) before
// parquet-go reads them, side by side on two goroutines, each with its own
// scratch buffers; the first column in file order that fails is reported,
// as one goroutine would.
func checkChunks(chk *pqChecker, g int, n int64, cols []*pqColumn, leaf []int, info []pqColumnInfo, name string) error {
	msgs := make([]string, len(cols))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range min(2, len(cols)) {
		c := chk
		if w > 0 {
			c = &pqChecker{r: chk.r, size: chk.size, dataEnd: chk.dataEnd, md: chk.md}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w > 0 {
				defer c.close()
			}
			i := -1
			defer func() { // as readParquet does on its own goroutine
				if p := recover(); p != nil && i >= 0 && i < len(cols) {
					msgs[i] = fmt.Sprint(p)
				}
			}()
			for i = int(next.Add(1) - 1); i < len(cols); i = int(next.Add(1) - 1) {
				msgs[i] = c.checkChunk(&c.md.RowGroups[g].Columns[leaf[i]], n, info[i])
				if info[i].kind == parquet.Boolean {
					cols[i].bools, cols[i].nextBool = append(cols[i].bools[:0], c.bools...), 0
				}
			}
		}()
	}
	wg.Wait()
	// A damaged chunk is reported before one ihope cannot read as it is.
	for i, msg := range msgs {
		if msg != "" && !strings.Contains(msg, notRead) {
			return &FormatError{File: name, Column: cols[i].col.name, Msg: fmt.Sprintf("damaged Parquet file: row group %d: %s", g, msg)}
		}
	}
	for i, msg := range msgs {
		if msg != "" {
			return &FormatError{File: name, Column: cols[i].col.name, Msg: fmt.Sprintf("row group %d: %s", g, msg)}
		}
	}
	return nil
}

// readBatches reads n rows of the columns in batches of pqBatch and calls
// parse on each (m rows, the first at offset off of the row group), which
// reads them through the columns' cur values. A goroutine decodes the
// next batch into the columns' other buffers while parse works: parquet
// decoding (decompression, conversion) and the checks of the rows run on
// two cores. A panic of parquet-go's on that goroutine comes back as an
// error, as on the caller's.
func readBatches(cols []*pqColumn, n int64, name string, parse func(m int, off int64) error) error {
	type batch struct {
		m   int
		off int64
		buf int
		err error
	}
	full := make(chan batch, 1)
	free := make(chan int, 2)
	free <- 0
	free <- 1
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(full)
		defer func() {
			if p := recover(); p != nil {
				full <- batch{err: &FormatError{File: name, Msg: fmt.Sprintf("damaged Parquet file: %v", p)}}
			}
		}()
		for off := int64(0); off < n; off += pqBatch {
			var buf int
			select {
			case buf = <-free:
			case <-done:
				return
			}
			m := int(min(pqBatch, n-off))
			for _, c := range cols {
				if err := c.fill(m, &c.bufs[buf]); err != nil {
					full <- batch{err: &FormatError{File: name, Column: c.col.name, Msg: "cannot read the column: " + err.Error()}}
					return
				}
			}
			select {
			case full <- batch{m: m, off: off, buf: buf}:
			case <-done:
				return
			}
		}
	}()
	for bt := range full {
		if bt.err != nil {
			return bt.err
		}
		for _, c := range cols {
			c.cur = &c.bufs[bt.buf]
		}
		if err := parse(bt.m, bt.off); err != nil {
			return err
		}
		free <- bt.buf
	}
	return nil
}

func closeAll(cols []*pqColumn) {
	for _, c := range cols {
		if c.vr != nil {
			c.vr.Close()
			c.vr = nil
		}
	}
}

// pqColumn reads one column in batches and converts its values, into
// one of two buffers while the rows of the other are parsed (readBatches).
type pqColumn struct {
	col      *column
	kind     parquet.Kind
	unsigned bool
	vr       parquet.ColumnChunkValueReader
	vals     []parquet.Value
	bufs     [2]pqValues
	cur      *pqValues // the batch being parsed

	// labels reports that the values are read as text: episode ids, and
	// the labels of categorical columns.
	labels bool

	// bools are a BOOLEAN column's values in its row group, not null, as
	// pqcheck decoded them (appendBooleans says why), a bit each; the next
	// value read is bit nextBool.
	bools    []byte
	nextBool int
}

// pqValues are a batch of a column's values, converted.
type pqValues struct {
	null []bool
	i    []int64   // integer kinds
	f    []float64 // float kinds
	text []byte    // episode ids and labels, ends[k] is the end of the k-th
	ends []int
}

// newPQColumn checks that a column's type suits its role.
func newPQColumn(col *column, t parquet.Type) (*pqColumn, string) {
	c := &pqColumn{col: col, kind: t.Kind(), vals: make([]parquet.Value, pqBatch)}
	c.labels = col.role == roleEpisode || col.role == roleStateLabel || col.role == roleActionLabel || col.role == roleNextLabel
	plainNumber := true
	if lt := t.LogicalType(); lt != nil && lt.Value != nil {
		it, isInt := lt.Value.(*format.IntType)
		plainNumber = isInt
		c.unsigned = isInt && !it.IsSigned
	}
	switch {
	case c.labels && c.kind == parquet.ByteArray:
	case (c.kind == parquet.Int32 || c.kind == parquet.Int64) && plainNumber,
		c.kind == parquet.Boolean && (col.role == roleTerminal || col.role == roleTruncated): // as true/false in CSV
		for k := range c.bufs {
			c.bufs[k].i = make([]int64, pqBatch)
		}
	case (c.kind == parquet.Float || c.kind == parquet.Double) && plainNumber && !c.labels:
		for k := range c.bufs {
			c.bufs[k].f = make([]float64, pqBatch)
		}
	default:
		want := "a number (INT32, INT64, FLOAT or DOUBLE)"
		switch {
		case c.labels:
			want = "a string or an integer"
		case col.role == roleT || col.role == roleState || col.role == roleAction || col.role == roleNext:
			want = "an integer (INT32 or INT64, or FLOAT or DOUBLE holding whole numbers)"
			if c.kind == parquet.ByteArray && col.role != roleT {
				want += labelHint(" is not a number", col.role)
			}
		case col.role == roleTerminal || col.role == roleTruncated:
			want = "BOOLEAN, or 0 or 1 as an integer (INT32 or INT64) or a FLOAT or DOUBLE"
		}
		return nil, fmt.Sprintf("has type %s, want %s", typeName(t), want)
	}
	for k := range c.bufs {
		c.bufs[k].null = make([]bool, pqBatch)
	}
	return c, ""
}

// typeName describes a Parquet type for an error message.
func typeName(t parquet.Type) string {
	s := t.Kind().String()
	if lt := t.LogicalType(); lt != nil {
		if ls := lt.String(); ls != "" {
			s += " (" + ls + ")"
		}
	}
	return s
}

// fill reads the next n values of the column into v.
func (c *pqColumn) fill(n int, v *pqValues) error {
	v.text, v.ends = v.text[:0], v.ends[:0]
	for got, idle := 0, 0; got < n; {
		k, err := c.vr.ReadValues(c.vals[got:n])
		// An empty page yields no values; more empty reads than a column
		// chunk can hold pages would be a reader going round in circles.
		if idle++; k > 0 {
			idle = 0
		} else if idle > 1<<16 && err == nil {
			return errors.New("its pages yield no values")
		}
		// Convert at once: byte arrays point into the page, which the
		// next read may release.
		for i := got; i < got+k; i++ {
			c.convert(i, v)
		}
		got += k
		if got < n && err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("%d values missing", n-got)
			}
			return err
		}
	}
	return nil
}

func (c *pqColumn) convert(i int, out *pqValues) {
	v := &c.vals[i]
	out.null[i] = v.IsNull()
	if out.null[i] {
		if c.labels {
			out.ends = append(out.ends, len(out.text))
		}
		return
	}
	switch c.kind {
	case parquet.Boolean:
		out.i[i] = int64(c.bools[c.nextBool/8] >> (c.nextBool % 8) & 1)
		c.nextBool++
	case parquet.Int32:
		if c.unsigned {
			out.i[i] = int64(uint32(v.Int32()))
		} else {
			out.i[i] = int64(v.Int32())
		}
	case parquet.Int64:
		out.i[i] = v.Int64()
		if c.unsigned && out.i[i] < 0 {
			out.i[i] = math.MaxInt64 // above 2^63 - 1: too large for any use here
		}
	case parquet.Float:
		out.f[i] = float64(v.Float())
	case parquet.Double:
		out.f[i] = v.Double()
	}
	if c.labels {
		if c.kind == parquet.ByteArray {
			out.text = append(out.text, v.ByteArray()...)
		} else {
			out.text = strconv.AppendInt(out.text, out.i[i], 10)
		}
		out.ends = append(out.ends, len(out.text))
	}
}

// textAt returns value i of the batch being parsed, read as text.
func (c *pqColumn) textAt(i int) []byte {
	v := c.cur
	start := 0
	if i > 0 {
		start = v.ends[i-1]
	}
	return v.text[start:v.ends[i]]
}

// real returns value i of the batch being parsed as a float64.
func (c *pqColumn) real(i int) float64 {
	if v := c.cur; v.i != nil {
		return float64(v.i[i])
	}
	return c.cur.f[i]
}

// index returns value i of the batch being parsed as an index.
func (c *pqColumn) index(i int, noun string) (int32, string) {
	v := c.cur
	if v.i != nil {
		if msg := checkIndex(v.i[i], noun); msg != "" {
			return 0, msg
		}
		return int32(v.i[i]), ""
	}
	return floatIndex(v.f[i], noun)
}

// pqRowParser checks and converts one row of a batch.
type pqRowParser struct {
	b   *builder
	lay *layout
	x   *rowExtra // the current row's optional vectors
}

func (p *pqRowParser) parse(cols []*pqColumn, i int, row int32) error {
	b, lay := p.b, p.lay
	r := rec{state: -1, action: -1, next: -1, ntp: -1, row: row}
	x := p.x
	x.reset()
	obs, act, tp := b.vectors()
	discrete := lay.discreteActions()
	for _, c := range cols {
		col := c.col
		var msg string
		if c.cur.null[i] {
			switch col.role {
			case roleNext, roleNextLabel:
			case roleNextK:
				miss(&x.nextMissing, col.k)
			case roleNextTarget:
				miss(&x.ntpMissing, col.k)
			default:
				msg = "empty value (null)"
			}
			if msg != "" {
				return &FormatError{File: b.file, Row: int(row), Column: col.name, Msg: msg}
			}
			continue
		}
		if c.labels {
			v := c.textAt(i)
			if len(v) == 0 {
				return &FormatError{File: b.file, Row: int(row), Column: col.name, Msg: "empty value"}
			}
			switch col.role {
			case roleEpisode:
				r.ep = b.episode(v)
			case roleActionLabel:
				r.action = b.actions.id(v)
			case roleStateLabel:
				r.state = b.states.id(v)
			default: // roleNextLabel
				r.next = b.states.id(v)
			}
			continue
		}
		switch col.role {
		case roleT:
			r.t, msg = c.index(i, indexNoun[col.role])
		case roleState:
			r.state, msg = c.index(i, indexNoun[col.role])
		case roleAction:
			r.action, msg = c.index(i, indexNoun[col.role])
		case roleNext:
			r.next, msg = c.index(i, indexNoun[col.role])
		case roleStateK:
			obs[col.k] = c.real(i)
			msg = rules.Real(c.real(i))
		case roleActionK:
			act[col.k] = c.real(i)
			msg = rules.Real(c.real(i))
		case roleReward:
			r.reward = c.real(i)
			msg = rules.Real(r.reward)
		case roleNextK:
			x.nextGiven++
			x.next[col.k] = c.real(i)
			msg = rules.Real(c.real(i))
		case roleBehavior, roleBehaviorLn:
			r.lb, msg = logProb(c.real(i), col.role, discrete)
		case roleTarget, roleTargetLn:
			x.target = c.real(i)
			r.lt, msg = logProb(c.real(i), col.role, discrete)
		case roleTerminal:
			r.terminal, msg = terminalFlag(c.real(i))
		case roleTruncated:
			r.truncated, msg = terminalFlag(c.real(i))
		case roleTargetK:
			tp[col.k] = c.real(i)
			msg = rules.Prob(tp[col.k])
		case roleNextTarget:
			x.ntpGiven++
			x.ntp[col.k] = c.real(i)
			msg = rules.Prob(x.ntp[col.k])
		}
		if msg != "" {
			return &FormatError{File: b.file, Row: int(row), Column: col.name, Msg: msg}
		}
	}
	return b.addRow(r, x, "empty value (null)")
}

// WriteParquet writes d in the Parquet form of the log contract, with the
// columns of WriteCSV in the same order: episode (string), t, state and
// action ids (INT64) or their vector components (DOUBLE), reward,
// behavior_logprob (if d has behavior probabilities) and target_logprob
// (DOUBLE), target_prob_k (DOUBLE) if
// d has TargetProbs, an optional (nullable) next_state (or next_state_0
// ...) that is set on the last row of each episode that has a next state
// and null elsewhere, and, as WriteCSV, optional next_target_prob_k set on
// the last row of each episode with HasFinalTarget. Pages are compressed
// with Snappy.
//
// WriteParquet first checks d with Validate, so that whatever it writes,
// ReadParquet reads back as the same dataset.
func WriteParquet(w io.Writer, d *dataset.Dataset) error {
	if err := d.Validate(); err != nil {
		return err
	}
	return writeParquet(w, d)
}

// writeParquet is WriteParquet without the check.
func writeParquet(w io.Writer, d *dataset.Dataset) error {
	sd, ad := d.StateDim, d.ActionDim
	var g orderedGroup
	id := func(name string) { g.add(name, parquet.Int(64)) }
	real := func(name string) { g.add(name, parquet.Leaf(parquet.DoubleType)) }
	g.add("episode", parquet.String())
	id("t")
	vectorNode(&g, "state", sd, false)
	vectorNode(&g, "action", ad, false)
	real("reward")
	if d.HasBehavior() {
		real("behavior_logprob")
	}
	real("target_logprob")
	K, nextK := targetColumns(d)
	if K > 0 {
		vectorNode(&g, "target_prob", K, false)
	}
	nextCol := vectorNode(&g, "next_state", sd, true)
	if nextK {
		vectorNode(&g, "next_target_prob", K, true)
	}
	if d.Terminal != nil {
		id("terminal")
	}

	pw := parquet.NewWriter(w, parquet.NewSchema("ihope", &g), parquet.Compression(&parquet.Snappy))
	const batch = 1024
	rows := make([]parquet.Row, 0, batch)
	width := len(g.fields)
	store := make([]parquet.Value, batch*width)
	flush := func() error {
		if _, err := pw.WriteRows(rows); err != nil {
			return err
		}
		rows = rows[:0]
		return nil
	}
	for e := range d.NumEpisodes() {
		idBytes := []byte(d.IDs[e])
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			k := len(rows)
			row := store[k*width : k*width : (k+1)*width]
			col := 0
			put := func(v parquet.Value, def int) {
				row = append(row, v.Level(0, def, col))
				col++
			}
			put(parquet.ByteArrayValue(idBytes), 0)
			put(parquet.Int64Value(int64(j-lo)), 0)
			if sd == 0 {
				put(parquet.Int64Value(int64(d.State[j])), 0)
			} else {
				for _, v := range d.ObsAt(j) {
					put(parquet.DoubleValue(v), 0)
				}
			}
			if ad == 0 {
				put(parquet.Int64Value(int64(d.Action[j])), 0)
			} else {
				for _, v := range d.ActionVecAt(j) {
					put(parquet.DoubleValue(v), 0)
				}
			}
			put(parquet.DoubleValue(d.Reward[j]), 0)
			if d.HasBehavior() {
				put(parquet.DoubleValue(d.LogBehavior[j]), 0)
			}
			put(parquet.DoubleValue(d.LogTarget[j]), 0)
			if K > 0 {
				for _, v := range d.TargetProbsAt(j) {
					put(parquet.DoubleValue(v), 0)
				}
			}
			hasNext := j == hi-1 && d.HasFinal[e]
			var nextObs []float64
			if hasNext && sd > 0 {
				nextObs, _ = d.NextObs(e, j)
			}
			for k := range nextCol {
				switch {
				case !hasNext:
					put(parquet.NullValue(), 0)
				case sd == 0:
					put(parquet.Int64Value(int64(d.FinalState[e])), 1)
				default:
					put(parquet.DoubleValue(nextObs[k]), 1)
				}
			}
			if nextK {
				v, ok := d.NextTargetProbs(e, j)
				for k := range K {
					if j == hi-1 && ok {
						put(parquet.DoubleValue(v[k]), 1)
					} else {
						put(parquet.NullValue(), 0)
					}
				}
			}
			if d.Terminal != nil {
				flag := int64(0)
				if j == hi-1 && d.Terminal[e] {
					flag = 1
				}
				put(parquet.Int64Value(flag), 0)
			}
			rows = append(rows, row)
			if len(rows) == batch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return pw.Close()
}

// vectorNode adds the column name (an INT64 id) or name_0 ... name_{n-1}
// (DOUBLE), optional if asked, and returns their names.
func vectorNode(g *orderedGroup, name string, n int, optional bool) []string {
	wrap := func(node parquet.Node) parquet.Node {
		if optional {
			return parquet.Optional(node)
		}
		return node
	}
	if n == 0 {
		g.add(name, wrap(parquet.Int(64)))
		return []string{name}
	}
	names := make([]string, n)
	for k := range n {
		names[k] = name + "_" + strconv.Itoa(k)
		g.add(names[k], wrap(parquet.Leaf(parquet.DoubleType)))
	}
	return names
}

// orderedGroup is a Parquet group whose columns keep the order in which
// they were added (parquet.Group sorts them by name).
type orderedGroup struct {
	parquet.Group
	fields []parquet.Field
}

func (g *orderedGroup) add(name string, node parquet.Node) {
	if g.Group == nil {
		g.Group = parquet.Group{}
	}
	g.Group[name] = node
	g.fields = append(g.fields, namedField{Node: node, name: name})
}

// Fields returns the columns in the order they were added.
func (g *orderedGroup) Fields() []parquet.Field { return g.fields }

// namedField is a field of an orderedGroup.
type namedField struct {
	parquet.Node
	name string
}

func (f namedField) Name() string { return f.name }

// Value is used only when writing Go structs, which WriteParquet does not.
func (f namedField) Value(base reflect.Value) reflect.Value { return reflect.Value{} }
