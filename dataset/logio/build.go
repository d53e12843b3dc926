package logio

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/internal/rules"
)

// maxID bounds step indices, state ids and action ids: 2^31 - 1.
const maxID = math.MaxInt32

// rec is one parsed row's scalars and structure; its vectors are the last
// rows of the builder's columns.
type rec struct {
	reward, lb, lt float64
	t, state       int32 // state is -1 for vector states
	action         int32 // -1 for vector actions
	// next is the next-state id; for vector states 0 if the row gives
	// its next-state vector (rowExtra.next). -1 if the row gives none.
	next int32
	// ntp is 0 if the row gives next_target_prob_k (rowExtra.ntp), -1
	// if not.
	ntp int32
	// terminal is 1 if the row's terminal column is 1 (the step ends in
	// the absorbing state), 2 if its truncated column is 1 (the episode
	// was cut off here: terminal 0 for the dataset.Dataset, but its last row),
	// 0 otherwise; truncated is the truncated column's value, which
	// addRow folds into terminal.
	terminal, truncated int8
	ep                  int32 // episode index, in order of first appearance
	row                 int32 // row number for error messages
}

// builder collects validated rows from a reader and assembles a dataset.Dataset.
// Readers check every value as they parse it (see the check functions
// below); the builder checks what needs more than one row: the steps of
// each episode and the next states.
//
// Every value goes straight into the dataset.Dataset's columns, in file order,
// so a log is held once. While the rows come episode after episode with
// t = 0, 1, 2, ... (the order of every export seen so far) that order is
// the dataset.Dataset's: the builder checks each row against the one before it
// and closes an episode when the next begins, keeping no per-row record.
// From the first row that breaks that order on, it keeps a rowMeta per
// row (rebuilding those of the rows before from the episodes closed), and
// finish sorts the rows by (episode, t) and gathers the columns in that
// order.
type builder struct {
	file string
	lay  *layout
	d    *dataset.Dataset // the columns, in file order
	n    int              // rows added
	// expect, if set, estimates the rows of the whole log (0: no
	// estimate), for grow.
	expect func() int

	ids     []string         // episode ids by index
	idIndex map[string]int32 // id -> index
	last    []byte           // id of the previous row
	lastEp  int32

	// states, actions number the labels of categorical columns (nil for
	// columns of ids).
	states, actions *labeler

	// inOrder stays true while the rows come in the dataset.Dataset's order; prev
	// is then the last row added, whose episode is open.
	inOrder bool
	prev    pendingRow
	// structErr is the first error of the log's structure found while in
	// order (a next state that differs from the next row's, ...); it is
	// reported after the rows' own errors, as a sorting reader would.
	structErr error
	// errAt is the index of the row structErr is about, errRow a copy of
	// it as it was pending, so that leaving the order puts it back among
	// the rows to sort, where the sorted checks find it again in their
	// own order.
	errAt     int
	errRow    pendingRow
	maxState  int32 // the largest state id (and next-state id) seen in order
	maxRow    int32 // where it is
	maxCol    string
	maxAction int32
	maxActRow int32 // where maxAction is
	// lastAdded is the episode, t and row of the last row added, in or
	// out of order.
	lastAdded struct{ ep, t, row int32 }

	// Episodes read from the row order (layout.derive): the t of the
	// next row, whether the last row ended its episode, and the id being
	// formatted.
	deriveT     int32
	deriveEnded bool
	deriveID    []byte
	// cut holds, for the episodes closed in order, whether a truncated
	// flag ended them, so that leaving the order keeps the check that
	// such a row is its episode's last.
	cut []bool

	// Out of order: one rowMeta per row in file order, the next-state
	// vectors given (StateDim each, indexed by rowMeta.next) and the
	// next_target_prob_k given (K each, indexed by rowMeta.ntp).
	meta []rowMeta
	nobs []float64
	ntps []float64
}

// pendingRow is the last row added while in order: what checking it
// against the next row, or closing its episode, needs.
type pendingRow struct {
	ep, t, row, next int32
	terminal         int8
	nextVec          []float64 // the next-state vector, if given (next = 0)
	ntp              []float64 // next_target_prob_k, if given (hasNTP)
	hasNTP           bool
}

// rowMeta is what sorting and checking a row out of order needs.
type rowMeta struct {
	t, ep, row, next, ntp int32 // next, ntp as in rec, indices into builder.nobs, ntps for vectors
	terminal              int8
}

// newBuilder returns a builder for rows laid out as lay; rows, if
// positive, is the number of rows the file holds (Parquet says), so the
// columns are allocated once.
func newBuilder(file string, lay *layout, rows int) *builder {
	d := &dataset.Dataset{StateDim: lay.stateDim, ActionDim: lay.actionDim, Start: []int{0}}
	n := max(rows, 0)
	d.Reward, d.LogTarget = make([]float64, 0, n), make([]float64, 0, n)
	if lay.behavior {
		d.LogBehavior = make([]float64, 0, n)
	}
	if lay.stateDim == 0 {
		d.State = make([]int32, 0, n)
	} else {
		d.Obs = make([]float64, 0, n*lay.stateDim)
	}
	if lay.actionDim == 0 {
		d.Action = make([]int32, 0, n)
	} else {
		d.ActionVec = make([]float64, 0, n*lay.actionDim)
	}
	if lay.targetK > 0 {
		d.TargetProbs = make([]float64, 0, n*lay.targetK)
	}
	b := &builder{file: file, lay: lay, d: d, idIndex: map[string]int32{}, lastEp: -1, inOrder: true,
		maxState: -1, maxAction: -1,
		prev: pendingRow{nextVec: make([]float64, lay.stateDim), ntp: make([]float64, lay.targetK)}}
	if lay.labelState {
		b.states = newLabeler()
	}
	if lay.labelAction {
		b.actions = newLabeler()
	}
	return b
}

// labeler numbers the labels of a categorical column as they come;
// finish renumbers them in sorted order.
type labeler struct {
	ids    map[string]int32
	labels []string
}

func newLabeler() *labeler { return &labeler{ids: map[string]int32{}} }

// id returns the number of a label, giving it one if it is new. A label
// already seen costs a map lookup without allocation.
func (l *labeler) id(b []byte) int32 {
	if id, ok := l.ids[string(b)]; ok {
		return id
	}
	id := int32(len(l.labels))
	s := string(b)
	l.labels = append(l.labels, s)
	l.ids[s] = id
	return id
}

// sorted returns the labels in sorted order and, by the number id gave a
// label, its place in that order.
func (l *labeler) sorted() (labels []string, perm []int32) {
	labels = slices.Clone(l.labels)
	slices.Sort(labels)
	perm = make([]int32, len(labels))
	for i, s := range labels {
		perm[l.ids[s]] = int32(i)
	}
	return labels, perm
}

// extend appends n zero values to a column and returns them.
func extend(s *[]float64, n int) []float64 {
	if n == 0 {
		return nil
	}
	*s = append(*s, make([]float64, n)...)
	return (*s)[len(*s)-n:]
}

// vectors starts a row: it appends the row's state vector, action vector
// and target distribution to the columns (zero, for the reader to fill;
// nil where the layout has none).
func (b *builder) vectors() (obs, act, tp []float64) {
	d := b.d
	if len(d.Reward) == cap(d.Reward) {
		b.grow()
	}
	return extend(&d.Obs, b.lay.stateDim), extend(&d.ActionVec, b.lay.actionDim), extend(&d.TargetProbs, b.lay.targetK)
}

// grow makes room in every column for the rows expect foresees, or
// without an estimate doubles it (at least 4096 rows), so that a log
// whose length is not known before (CSV) is copied about once in all,
// against about four times by append's growth of large slices.
func (b *builder) grow() {
	d, lay := b.d, b.lay
	n := max(2*cap(d.Reward), 4096)
	if b.expect != nil {
		if e := b.expect(); e > cap(d.Reward) {
			n = max(e, cap(d.Reward)+cap(d.Reward)/4, 4096)
		}
	}
	d.Reward, d.LogTarget = regrow(d.Reward, n), regrow(d.LogTarget, n)
	d.LogBehavior, d.State, d.Action = regrow(d.LogBehavior, n), regrow(d.State, n), regrow(d.Action, n)
	d.Obs, d.ActionVec = regrow(d.Obs, n*lay.stateDim), regrow(d.ActionVec, n*lay.actionDim)
	d.TargetProbs = regrow(d.TargetProbs, n*lay.targetK)
}

// regrow returns s with room for n values in all (grow's, for n - len(s)
// more); nil stays nil, a column the layout does not have.
func regrow[T any](s []T, n int) []T {
	if s == nil {
		return nil
	}
	return slices.Grow(s, n-len(s))
}

// episode returns the index of the episode with the given id, creating
// it if new. Consecutive rows of one episode cost a bytes comparison.
func (b *builder) episode(id []byte) int32 {
	if b.lastEp >= 0 && bytes.Equal(id, b.last) {
		return b.lastEp
	}
	ep, ok := b.idIndex[string(id)]
	if !ok {
		ep = int32(len(b.ids))
		s := string(id)
		b.ids = append(b.ids, s)
		b.idIndex[s] = ep
	}
	b.last = append(b.last[:0], id...)
	b.lastEp = ep
	return ep
}

// add stores a row whose fields and within-row rules have been checked;
// its vectors are the last rows of the columns (vectors), and x holds the
// next-state vector and next_target_prob_k it gives (r.next, r.ntp).
func (b *builder) add(r rec, x *rowExtra) error {
	if b.n >= math.MaxInt32 {
		return &FormatError{File: b.file, Row: int(r.row), Msg: "too many rows (at most 2^31 - 1)"}
	}
	// A row that repeats the step of the row before it is an error
	// whatever the order, so it is reported now rather than after every
	// row is read and sorted (10 million copies of one row took 1.2 GB
	// to be told "row 3: duplicate step"). An error of the rows before
	// it, found in order, comes first, as the sorted checks would give it.
	if b.n > 0 && r.ep == b.lastAdded.ep && r.t == b.lastAdded.t {
		if b.structErr != nil {
			return b.structErr
		}
		return b.fail(r.row, "t", "duplicate step: episode %s has t = %d on row %d too", dataset.Quote(b.ids[r.ep]), r.t, b.lastAdded.row)
	}
	b.lastAdded.ep, b.lastAdded.t, b.lastAdded.row = r.ep, r.t, r.row
	d := b.d
	d.Reward, d.LogTarget = append(d.Reward, r.reward), append(d.LogTarget, r.lt)
	if d.LogBehavior != nil {
		d.LogBehavior = append(d.LogBehavior, r.lb)
	}
	if b.lay.stateDim == 0 {
		d.State = append(d.State, r.state)
	}
	if b.lay.actionDim == 0 {
		d.Action = append(d.Action, r.action)
	}
	if r.action > b.maxAction {
		b.maxAction, b.maxActRow = r.action, r.row
	}
	if b.inOrder && !b.continues(r) {
		b.leaveOrder()
	}
	if b.inOrder {
		b.step(r, x)
	} else {
		b.keep(r, x)
	}
	b.n++
	return nil
}

// continues reports whether r is the next row in the dataset.Dataset's order:
// the next step of the open episode, or step 0 of a new one (any step of
// the first, in a shard, which may continue the previous shard's).
func (b *builder) continues(r rec) bool {
	if b.n == 0 {
		return r.t == 0 || b.lay.shard
	}
	p := &b.prev
	switch {
	case r.row != p.row+1:
		return false // rows numbered apart; leave it to the sort
	case r.ep == p.ep:
		return r.t == p.t+1
	default:
		return int(r.ep) == len(b.ids)-1 && r.ep > p.ep && r.t == 0
	}
}

// step adds row r in order: it checks the row before against r, or closes
// that row's episode if r begins a new one, and keeps r as prev.
func (b *builder) step(r rec, x *rowExtra) {
	d, p := b.d, &b.prev
	switch {
	case b.n == 0:
		if b.lay.shard {
			d.Origin = &dataset.Origin{FirstT: int(r.t), Rows: []int{int(r.row)}}
		}
	case r.ep == p.ep:
		b.checkLink(r)
	default:
		b.closeEpisode()
		if d.Origin != nil {
			d.Origin.Rows = append(d.Origin.Rows, int(r.row))
		}
	}
	if r.state > b.maxState {
		b.maxState, b.maxRow, b.maxCol = r.state, r.row, "state"
	}
	*p = pendingRow{ep: r.ep, t: r.t, row: r.row, next: r.next, terminal: r.terminal, nextVec: p.nextVec, ntp: p.ntp, hasNTP: r.ntp >= 0}
	if r.next >= 0 && b.lay.stateDim > 0 {
		copy(p.nextVec, x.next)
	}
	if p.hasNTP {
		copy(p.ntp, x.ntp)
	}
}

// checkLink checks prev, a row that turns out not to be its episode's
// last, against r, the row after it: no next_target_prob_k, no terminal,
// and a next state, if given, that is r's state. The first failure is
// kept in structErr.
func (b *builder) checkLink(r rec) {
	p := &b.prev
	if b.structErr != nil {
		return
	}
	defer func() {
		if b.structErr != nil {
			b.errAt, b.errRow = b.n-1, *p
			b.errRow.nextVec, b.errRow.ntp = slices.Clone(p.nextVec), slices.Clone(p.ntp)
		}
	}()
	var obs []float64 // r's state vector
	if sd := b.lay.stateDim; sd > 0 {
		obs = b.d.Obs[b.n*sd : (b.n+1)*sd]
	}
	b.structErr = b.linkError(p.row, p.ep, p.hasNTP, p.terminal, p.next, p.nextVec, r.t, r.row, r.state, obs)
}

// linkError checks a row that is not its episode's last (row, of episode
// ep) against the row after it (step nxT at nxRow): no
// next_target_prob_k, no terminal flag, and a next state, if given
// (next >= 0: the id, or with vector states nextVec), equal to the next
// row's (nxState, or the vector nxObs). It returns nil if they agree.
func (b *builder) linkError(row, ep int32, hasNTP bool, terminal int8, next int32, nextVec []float64, nxT, nxRow, nxState int32, nxObs []float64) error {
	switch {
	case hasNTP:
		return b.fail(row, "next_target_prob_0", "given on a row that is not the last of episode %s (t = %d follows on row %d); "+
			"next_target_prob_k give the target's action distribution at the state after an episode's last row, and are empty elsewhere",
			dataset.Quote(b.ids[ep]), nxT, nxRow)
	case terminal == 2:
		return b.fail(row, "truncated", "is 1 on a row that is not the last of episode %s (t = %d follows on row %d); "+
			"a truncated step is where the episode was cut off, so it is the episode's last row", dataset.Quote(b.ids[ep]), nxT, nxRow)
	case terminal != 0:
		return b.fail(row, "terminal", "is 1 on a row that is not the last of episode %s (t = %d follows on row %d); "+
			"a terminal step ends its episode in the absorbing state, so it is the episode's last row", dataset.Quote(b.ids[ep]), nxT, nxRow)
	case next < 0:
	case b.lay.stateDim == 0:
		if next != nxState {
			return b.fail(row, "next_state", "next_state %d differs from the state %d of the next step of episode %s (row %d)",
				next, nxState, dataset.Quote(b.ids[ep]), nxRow)
		}
	default:
		return b.nextMismatch(row, ep, nextVec, nxObs, nxRow)
	}
	return nil
}

// nextMismatch returns the error of a next-state vector given on a row
// that differs from the state of the next step (at row nxRow), or nil.
func (b *builder) nextMismatch(row, ep int32, given, want []float64, nxRow int32) error {
	for k, v := range given {
		if v != want[k] {
			return b.fail(row, "next_state_"+strconv.Itoa(k), "%s differs from state_%d = %s of the next step of episode %s (row %d)",
				rules.Num(v), k, rules.Num(want[k]), dataset.Quote(b.ids[ep]), nxRow)
		}
	}
	return nil
}

// closeEpisode ends prev's episode at prev, in order: its id, its end,
// and what its last row says of the state after it.
func (b *builder) closeEpisode() {
	d, p := b.d, &b.prev
	d.IDs = append(d.IDs, b.ids[p.ep])
	d.Start = append(d.Start, b.n)
	if b.lay.terminal {
		d.Terminal = append(d.Terminal, p.terminal == 1)
		b.cut = append(b.cut, p.terminal == 2)
	}
	if K := b.lay.targetK; K > 0 {
		d.HasFinalTarget = append(d.HasFinalTarget, p.hasNTP)
		if p.hasNTP {
			d.FinalTargetProbs = append(d.FinalTargetProbs, p.ntp...)
		} else {
			extend(&d.FinalTargetProbs, K)
		}
	}
	d.HasFinal = append(d.HasFinal, p.next >= 0)
	switch {
	case b.lay.stateDim == 0:
		d.FinalState = append(d.FinalState, p.next)
		if p.next > b.maxState {
			b.maxState, b.maxRow, b.maxCol = p.next, p.row, "next_state"
		}
	case p.next >= 0:
		d.FinalObs = append(d.FinalObs, p.nextVec...)
	default:
		extend(&d.FinalObs, b.lay.stateDim)
	}
}

// keep records row r out of order.
func (b *builder) keep(r rec, x *rowExtra) {
	m := rowMeta{t: r.t, ep: r.ep, row: r.row, next: r.next, ntp: -1, terminal: r.terminal}
	if sd := b.lay.stateDim; sd > 0 && r.next >= 0 {
		m.next = int32(len(b.nobs) / sd)
		b.nobs = append(b.nobs, x.next...)
	}
	if r.ntp >= 0 {
		m.ntp = int32(len(b.ntps) / b.lay.targetK)
		b.ntps = append(b.ntps, x.ntp...)
	}
	b.meta = append(b.meta, m)
}

// leaveOrder switches to keeping a rowMeta per row: it closes the open
// episode and rebuilds the rows' records from the episodes closed. Rows
// within an episode have been checked against each other, so only an
// episode's last row keeps its next state, next_target_prob_k and
// terminal flag, which a row of the same episode found later checks.
func (b *builder) leaveOrder() {
	d := b.d
	b.inOrder = false
	if b.n == 0 {
		return
	}
	b.closeEpisode()
	sd, K := b.lay.stateDim, b.lay.targetK
	b.meta = make([]rowMeta, 0, b.n+b.n/4)
	for e := range d.IDs {
		lo, hi := d.Start[e], d.Start[e+1]
		t0 := 0
		if e == 0 && d.Origin != nil {
			t0 = d.Origin.FirstT
		}
		first := b.prev.row - int32(b.n-1) // rows are numbered one apart in order
		for j := lo; j < hi; j++ {
			b.meta = append(b.meta, rowMeta{t: int32(t0 + j - lo), ep: int32(e), row: first + int32(j), next: -1, ntp: -1})
		}
		m := &b.meta[hi-1]
		if d.Terminal != nil && d.Terminal[e] {
			m.terminal = 1
		}
		if e < len(b.cut) && b.cut[e] {
			m.terminal = 2
		}
		if d.HasFinal[e] {
			if sd == 0 {
				m.next = d.FinalState[e]
			} else {
				m.next = int32(len(b.nobs) / sd)
				b.nobs = append(b.nobs, d.FinalObs[e*sd:(e+1)*sd]...)
			}
		}
		if K > 0 && d.HasFinalTarget[e] {
			m.ntp = int32(len(b.ntps) / K)
			b.ntps = append(b.ntps, d.FinalTargetProbs[e*K:(e+1)*K]...)
		}
	}
	if b.structErr != nil {
		p, m := &b.errRow, &b.meta[b.errAt]
		m.next, m.terminal = p.next, p.terminal
		if sd > 0 && p.next >= 0 {
			m.next = int32(len(b.nobs) / sd)
			b.nobs = append(b.nobs, p.nextVec...)
		}
		if p.hasNTP {
			m.ntp = int32(len(b.ntps) / K)
			b.ntps = append(b.ntps, p.ntp...)
		}
		b.structErr = nil
	}
	d.IDs, d.Start, d.HasFinal, d.FinalState, d.FinalObs = nil, []int{0}, nil, nil, nil
	d.Terminal, d.HasFinalTarget, d.FinalTargetProbs, d.Origin = nil, nil, nil, nil
	b.cut = nil
}

// fail returns a FormatError at a row and a contract column, named as
// the file names it.
func (b *builder) fail(row int32, col, format string, args ...any) error {
	return &FormatError{File: b.file, Row: int(row), Column: b.lay.name(col), Msg: fmt.Sprintf(format, args...)}
}

// finish checks what needs all rows and returns the dataset.Dataset, its
// categorical columns' labels renumbered in sorted order.
func (b *builder) finish() (*dataset.Dataset, *Labels, error) {
	d, err := b.build()
	if err != nil {
		return nil, nil, err
	}
	d.Policy, d.Policies = b.lay.policy, b.lay.policies
	var labels *Labels
	if b.states != nil || b.actions != nil {
		labels = &Labels{}
	}
	if b.states != nil {
		var perm []int32
		labels.State, perm = b.states.sorted()
		for j, s := range d.State {
			d.State[j] = perm[s]
		}
		for e, s := range d.FinalState {
			if s >= 0 {
				d.FinalState[e] = perm[s]
			}
		}
		d.NumStates = len(labels.State)
	}
	if b.actions != nil {
		var perm []int32
		labels.Action, perm = b.actions.sorted()
		for j, a := range d.Action {
			d.Action[j] = perm[a]
		}
		d.NumActions = len(labels.Action)
	}
	if p := b.lay.fillTarget; p != nil {
		// No target columns: the target's probabilities are p's.
		if d.StateDim > 0 || d.ActionDim > 0 {
			return nil, nil, &FormatError{File: b.file, Row: 1, Msg: "the file has no target columns (target_prob, target_logprob or target_prob_0, ...), and a target policy file gives the probabilities of discrete states and actions only"}
		}
		if check := b.lay.beforeTarget; check != nil {
			if err := check(d); err != nil {
				return nil, nil, err
			}
		}
		if err := d.ReplaceTargetPolicy(p); err != nil {
			return nil, nil, fmt.Errorf("%s (no target columns; the target policy's probabilities): %w", b.file, err)
		}
	}
	return d, labels, nil
}

// build closes the log: in order, its last episode; out of order, it
// sorts the rows. Then it sizes the discrete spaces.
func (b *builder) build() (*dataset.Dataset, error) {
	n := b.n
	if n == 0 {
		return nil, &FormatError{File: b.file, Msg: noRows}
	}
	if b.structErr != nil {
		return nil, b.structErr
	}
	d := b.d
	if b.inOrder {
		b.closeEpisode()
	} else {
		var err error
		if d, err = b.sorted(); err != nil {
			return nil, err
		}
	}
	if d.StateDim == 0 {
		// Discrete states are indexed densely (the tabular ratio solver
		// allocates per state id), so ids far beyond the data's size would
		// cost memory for nothing.
		if limit := max(1<<22, 64*int64(n)); int64(b.maxState) >= limit {
			return nil, b.fail(b.maxRow, b.maxCol, "state id %d is far larger than the data (%d rows): ihope indexes discrete states densely, so renumber them 0, 1, 2, ... (ids below %d are accepted)", b.maxState, n, limit)
		}
		d.NumStates = int(b.maxState) + 1
	}
	if d.ActionDim == 0 {
		// Every action id is below K (addRow checks each row), so with
		// target_prob_k columns NumActions = K >= 1 + the largest id.
		// Action ids are indexed densely too (counts, tables and target
		// distributions have a cell per action id): the same bound as
		// the states' keeps a 2-row log with action 2,000,000,000 from
		// asking for gigabytes.
		if limit := max(1<<22, 64*int64(n)); int64(b.maxAction) >= limit {
			return nil, b.fail(b.maxActRow, "action", "action id %d is far larger than the data (%d rows): ihope indexes discrete actions densely, so renumber them 0, 1, 2, ... (ids below %d are accepted), or read them as labels with --categorical action", b.maxAction, n, limit)
		}
		d.NumActions = max(int(b.maxAction)+1, b.lay.targetK)
	}
	return d, nil
}

// sorted orders rows kept out of order by (episode, t), checks that every
// episode's t runs 0, 1, 2, ... and that each row's next state agrees with
// the row after it, and gathers the columns in that order.
func (b *builder) sorted() (*dataset.Dataset, error) {
	n, meta, src := b.n, b.meta, b.d
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	// Episodes in the natural order of their ids (dataset.NaturalLess): rows out
	// of order say nothing of an order of their episodes, and this one
	// depends only on the rows, so a shuffled log gives the estimates of
	// the same log written episode by episode with ids 0, 1, 2, ... (the
	// order of the logs ihope writes), whether it is read as one file or
	// as one shard. In a shard, an episode that continues from the shard
	// before (its first row here has t > 0) stays first, where the
	// stream's reader joins it.
	rank := make([]int32, len(b.ids))
	byID := make([]int32, len(b.ids))
	for i := range byID {
		byID[i] = int32(i)
	}
	keepFirst := false
	if b.lay.shard {
		minT := int32(math.MaxInt32)
		for i := range meta {
			if meta[i].ep == 0 {
				minT = min(minT, int32(meta[i].t))
			}
		}
		keepFirst = minT > 0
	}
	sortable := byID
	if keepFirst {
		sortable = byID[1:]
	}
	slices.SortFunc(sortable, func(x, y int32) int {
		if dataset.NaturalLess(b.ids[x], b.ids[y]) {
			return -1
		}
		return 1 // ids are distinct
	})
	for r, e := range byID {
		rank[e] = int32(r)
	}
	slices.SortStableFunc(perm, func(x, y int32) int {
		if c := cmp.Compare(rank[meta[x].ep], rank[meta[y].ep]); c != 0 {
			return c
		}
		return cmp.Compare(meta[x].t, meta[y].t)
	})
	for i, j := range perm {
		r := &meta[j]
		if i == 0 || r.ep != meta[perm[i-1]].ep {
			if r.t != 0 && !(b.lay.shard && r.ep == 0) {
				return nil, b.fail(r.row, "t", "episode %s starts at t = %d; t must start at 0", dataset.Quote(b.ids[r.ep]), r.t)
			}
			continue
		}
		p := &meta[perm[i-1]]
		switch {
		case r.t == p.t:
			return nil, b.fail(r.row, "t", "duplicate step: episode %s has t = %d on row %d too", dataset.Quote(b.ids[r.ep]), r.t, p.row)
		case r.t > p.t+1:
			where := ""
			if b.lay.shard {
				where = "; in a shard, an episode's rows run on without gaps, continuing only from the last rows of the shard before"
			}
			if r.t == p.t+2 {
				return nil, b.fail(r.row, "t", "gap in episode %s: t jumps from %d to %d (t = %d is missing)%s", dataset.Quote(b.ids[r.ep]), p.t, r.t, p.t+1, where)
			}
			return nil, b.fail(r.row, "t", "gap in episode %s: t jumps from %d to %d (t = %d ... %d are missing)%s", dataset.Quote(b.ids[r.ep]), p.t, r.t, p.t+1, r.t-1, where)
		}
	}

	lay := b.lay
	sd, ad, K := lay.stateDim, lay.actionDim, lay.targetK
	d := &dataset.Dataset{StateDim: sd, ActionDim: ad, IDs: make([]string, 0, len(b.ids)), Start: make([]int, 1, len(b.ids)+1),
		HasFinal: make([]bool, 0, len(b.ids))}
	d.Reward, d.LogTarget = gather(src.Reward, perm, 1), gather(src.LogTarget, perm, 1)
	d.LogBehavior = gather(src.LogBehavior, perm, 1)
	d.State, d.Action = gather(src.State, perm, 1), gather(src.Action, perm, 1)
	d.Obs, d.ActionVec, d.TargetProbs = gather(src.Obs, perm, sd), gather(src.ActionVec, perm, ad), gather(src.TargetProbs, perm, K)
	b.d = d
	if lay.terminal {
		d.Terminal = make([]bool, 0, len(b.ids))
	}
	if sd == 0 {
		d.FinalState = make([]int32, 0, len(b.ids))
	} else {
		d.FinalObs = make([]float64, 0, len(b.ids)*sd)
	}
	if K > 0 {
		d.FinalTargetProbs = make([]float64, 0, len(b.ids)*K)
		d.HasFinalTarget = make([]bool, 0, len(b.ids))
	}
	b.maxState = -1
	for i, j := range perm {
		r := &meta[j]
		var nx *rowMeta
		if i+1 < n {
			nx = &meta[perm[i+1]]
		}
		if lay.shard && (i == 0 || d.Start[len(d.Start)-1] == i) {
			if d.Origin == nil {
				d.Origin = &dataset.Origin{FirstT: int(r.t)}
			}
			d.Origin.Rows = append(d.Origin.Rows, int(r.row))
		}
		if sd == 0 && d.State[i] > b.maxState {
			b.maxState, b.maxRow, b.maxCol = d.State[i], r.row, "state"
		}
		last := nx == nil || nx.ep != r.ep
		if !last {
			var nextVec, nxObs []float64
			var nxState int32
			if sd == 0 {
				nxState = d.State[i+1]
			} else {
				nxObs = d.Obs[(i+1)*sd : (i+2)*sd]
				if r.next >= 0 {
					nextVec = b.nobs[int(r.next)*sd : int(r.next+1)*sd]
				}
			}
			if err := b.linkError(r.row, r.ep, r.ntp >= 0, r.terminal, r.next, nextVec, nx.t, nx.row, nxState, nxObs); err != nil {
				return nil, err
			}
		}
		if last && d.Terminal != nil {
			d.Terminal = append(d.Terminal, r.terminal == 1)
		}
		if last && K > 0 {
			d.HasFinalTarget = append(d.HasFinalTarget, r.ntp >= 0)
			if r.ntp >= 0 {
				d.FinalTargetProbs = append(d.FinalTargetProbs, b.ntps[int(r.ntp)*K:int(r.ntp+1)*K]...)
			} else {
				extend(&d.FinalTargetProbs, K)
			}
		}
		switch {
		case !last: // checked above
		case sd == 0:
			d.HasFinal = append(d.HasFinal, r.next >= 0)
			d.FinalState = append(d.FinalState, r.next)
			if r.next > b.maxState {
				b.maxState, b.maxRow, b.maxCol = r.next, r.row, "next_state"
			}
		default:
			d.HasFinal = append(d.HasFinal, r.next >= 0)
			if r.next >= 0 {
				d.FinalObs = append(d.FinalObs, b.nobs[int(r.next)*sd:int(r.next+1)*sd]...)
			} else {
				extend(&d.FinalObs, sd)
			}
		}
		if last {
			d.IDs = append(d.IDs, b.ids[r.ep])
			d.Start = append(d.Start, i+1)
		}
	}
	return d, nil
}

// gather returns the rows of a column (w values a row) in the order perm
// gives, nil for a nil column.
func gather[T any](col []T, perm []int32, w int) []T {
	if col == nil || w == 0 {
		return nil
	}
	out := make([]T, len(perm)*w)
	for i, j := range perm {
		copy(out[i*w:(i+1)*w], col[int(j)*w:int(j+1)*w])
	}
	return out
}

// checkIndex checks a step index or an id: an integer in [0, 2^31 - 1].
// noun names it in the message ("a state id").
func checkIndex(v int64, noun string) string {
	switch {
	case v < 0:
		return fmt.Sprintf("%d is negative; %s is a non-negative integer", v, noun)
	case v > maxID:
		return fmt.Sprintf("%d is too large; %s is at most %d", v, noun, maxID)
	}
	return ""
}

// floatIndex converts a float holding an integer (3 or 3.0, as some tools
// write integer columns) to an index.
func floatIndex(v float64, noun string) (int32, string) {
	if msg := rules.Real(v); msg != "" {
		return 0, msg
	}
	if v != math.Trunc(v) {
		return 0, fmt.Sprintf("%s is not an integer; %s is a non-negative integer", rules.Num(v), noun)
	}
	if v < 0 {
		return 0, fmt.Sprintf("%s is negative; %s is a non-negative integer", rules.Num(v), noun)
	}
	if v > maxID {
		return 0, fmt.Sprintf("%s is too large; %s is at most %d", rules.Num(v), noun, maxID)
	}
	return int32(v), ""
}

// nouns for checkIndex, by role.
var indexNoun = [numRoles]string{
	roleT:      "the step index t",
	roleState:  "a state id",
	roleAction: "an action id",
	roleNext:   "a state id",
}

// logProb converts the value of a probability column (role roleBehavior,
// roleBehaviorLn, roleTarget or roleTargetLn) to a log-probability and
// checks it. With discrete actions the values are probabilities of the
// logged action; with vector actions they are densities, which may exceed
// 1. A target probability of 0 is allowed and gives -Inf: the target
// policy never takes that action.
func logProb(v float64, r role, discrete bool) (float64, string) {
	if math.IsNaN(v) {
		return 0, "NaN is not allowed"
	}
	switch r {
	case roleBehavior, roleTarget:
		if math.IsInf(v, 0) {
			return 0, rules.Real(v)
		}
		switch {
		case r == roleBehavior && discrete && !(v > 0 && v <= 1):
			return 0, rules.Num(v) + " is outside (0, 1]"
		case r == roleBehavior && !discrete && !(v > 0):
			return 0, rules.Num(v) + " is not a positive density"
		case r == roleTarget && discrete && !(v >= 0 && v <= 1):
			return 0, rules.Num(v) + " is outside [0, 1]"
		case r == roleTarget && !discrete && !(v >= 0):
			return 0, rules.Num(v) + " is a negative density"
		}
		return math.Log(v), ""
	default: // log-probabilities
		switch {
		case math.IsInf(v, 1):
			return 0, "+Inf is not allowed"
		case math.IsInf(v, -1) && r == roleBehaviorLn:
			return 0, "-Inf is not allowed: the behavior policy must give every logged action a positive probability"
		case discrete && v > 0:
			return 0, rules.Num(v) + " is above 0, but a probability is at most 1"
		}
		return v, ""
	}
}

// terminalFlag checks a value of the terminal column: 0 or 1.
func terminalFlag(v float64) (int8, string) {
	switch v {
	case 0:
		return 0, ""
	case 1:
		return 1, ""
	}
	if msg := rules.Real(v); msg != "" {
		return 0, msg
	}
	return 0, rules.Num(v) + " is neither 0 nor 1; terminal is 1 on an episode's last row if it ended in a terminal state, else 0"
}

// rowExtra holds what a reader gathered of one row's optional vectors:
// the next-state vector and next_target_prob_k, each given whole or not at
// all, and the raw value of target_prob or target_logprob for messages.
type rowExtra struct {
	next                   []float64
	nextGiven, nextMissing int // components given; the first one missing, -1 if none
	ntp                    []float64
	ntpGiven, ntpMissing   int
	target                 float64
}

func newRowExtra(lay *layout) *rowExtra {
	return &rowExtra{next: make([]float64, lay.stateDim), ntp: make([]float64, lay.targetK)}
}

// reset starts a row.
func (x *rowExtra) reset() { x.nextGiven, x.nextMissing, x.ntpGiven, x.ntpMissing = 0, -1, 0, -1 }

// miss records that vector component k is missing (empty or null).
func miss(first *int, k int) {
	if *first < 0 || k < *first {
		*first = k
	}
}

// deriveEpisode gives a row of a file without episode and t columns its
// episode and t (layout.derive): a new episode, with the next id 0, 1,
// 2, ..., after a row whose terminal or truncated flag is 1 (and after
// every row for one-step episodes, which end in a terminal state unless
// a flag says otherwise), else the next step of the row before's. A last
// episode without a flag is cut off, as the log contract reads an
// episode whose last terminal is 0.
func (b *builder) deriveEpisode(r *rec) {
	if b.n == 0 || b.deriveEnded {
		b.deriveID = strconv.AppendInt(b.deriveID[:0], int64(len(b.ids)), 10)
		b.deriveT = 0
		r.ep = b.episode(b.deriveID)
	} else {
		r.ep = b.lastEp
	}
	r.t = b.deriveT
	b.deriveT++
	if b.lay.derive == deriveOneStep {
		if b.lay.at[roleTerminal] < 0 && b.lay.at[roleTruncated] < 0 {
			r.terminal = 1
		}
		b.deriveEnded = true
		return
	}
	b.deriveEnded = r.terminal != 0
}

// addRow adds a parsed row whose fields have been checked one by one and
// checks the rules within the row: a next-state vector or
// next_target_prob_k given whole or not at all (the first missing
// component is named with the reader's word for a missing value, missing:
// CSV "empty value", Parquet "empty value (null)"), next_target_prob_k only
// with a next state, target_prob_k (the last row of the column) and
// next_target_prob_k each summing to 1, the logged action among them, and
// target_prob or target_logprob agreeing with target_prob_{a_t}, which
// gives LogTarget when they are absent.
func (b *builder) addRow(r rec, x *rowExtra, missing string) error {
	lay := b.lay
	if r.truncated != 0 {
		// Cut off, not terminal, even where terminal is 1 too: old gym's
		// done is 1 where a time limit cut an episode off, with
		// TimeLimit.truncated 1 beside it.
		r.terminal = 2
	}
	if lay.derive != deriveNone {
		b.deriveEpisode(&r)
	}
	if x.nextGiven > 0 {
		if x.nextGiven < lay.stateDim {
			return b.fail(r.row, fmt.Sprintf("next_state_%d", x.nextMissing),
				"%s, but other next_state columns of this row are given; give all or none", missing)
		}
		r.next = 0 // the vector is x.next
	}
	K := lay.targetK
	if K == 0 {
		return b.add(r, x)
	}
	tp := b.d.TargetProbs[len(b.d.TargetProbs)-K:]
	if sum, ok := rules.Distribution(tp); !ok {
		return b.fail(r.row, "target_prob_0", "%s sum to %s; the target's action distribution sums to 1 (within 1e-6)",
			span("target_prob", K), rules.SumText(sum))
	}
	if int(r.action) >= K {
		return b.fail(r.row, "action", "action %d has no target probability: the log gives %s (K = %d); "+
			"give target_prob_k for every action id k (K = 1 + the largest action id, or more)", r.action, span("target_prob", K), K)
	}
	p := tp[r.action]
	switch {
	case lay.target == "":
		r.lt = math.Log(p) // 0 gives -Inf: the target never takes a_t
	case !rules.Agrees(r.lt, p):
		given := fmt.Sprintf("%s %s", lay.target, rules.Num(x.target))
		if lay.targetLn {
			given += fmt.Sprintf(" (probability %s)", rules.Num(math.Exp(r.lt)))
		}
		return b.fail(r.row, lay.target, "%s disagrees with target_prob_%d = %s, the target probability of the logged action %d "+
			"(they must agree within 1e-6)", given, r.action, rules.Num(p), r.action)
	}
	if x.ntpGiven > 0 {
		switch {
		case x.ntpGiven < K:
			return b.fail(r.row, fmt.Sprintf("next_target_prob_%d", x.ntpMissing),
				"%s, but other next_target_prob columns of this row are given; give all or none", missing)
		case r.next < 0:
			return b.fail(r.row, "next_target_prob_0", "given, but the row gives no next state; "+
				"next_target_prob_k are the target's action distribution at the next state")
		}
		if sum, ok := rules.Distribution(x.ntp); !ok {
			return b.fail(r.row, "next_target_prob_0", "%s sum to %s; the target's action distribution sums to 1 (within 1e-6)",
				span("next_target_prob", K), rules.SumText(sum))
		}
		r.ntp = 0 // the distribution is x.ntp
	}
	return b.add(r, x)
}
