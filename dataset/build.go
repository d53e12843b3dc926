package dataset

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// maxID bounds step indices, state ids and action ids: 2^31 - 1.
const maxID = math.MaxInt32

// rec is one parsed row, kept compact until all rows are read and sorted.
type rec struct {
	reward, lb, lt float64
	t, state       int32 // state is -1 for vector states
	action         int32 // -1 for vector actions
	// next is the next-state id, or for vector states the index of the
	// next-state vector in builder.nobs; -1 if the row gives none.
	next int32
	// ntp is the index of the row's next_target_prob_k values in
	// builder.ntp, -1 if the row gives none.
	ntp int32
	// terminal is 1 if the row's terminal column is 1 (the step ends in
	// the absorbing state), 0 otherwise.
	terminal int8
	ep       int32 // episode index, in order of first appearance
	row      int32 // row number for error messages
	idx      int32 // position in the file (index of its vectors in obs, act)
}

// builder collects validated rows from a reader and assembles a Dataset.
// Readers check every value as they parse it (see the check functions
// below); finish checks what needs all rows: the steps of each episode
// and the next states.
type builder struct {
	file string
	lay  *layout

	recs chunks[rec]     // rows in file order
	obs  chunks[float64] // state vectors, one per row in file order
	act  chunks[float64] // action vectors, one per row in file order
	nobs chunks[float64] // next-state vectors given in the log
	tp   chunks[float64] // target_prob_k, one row per row in file order
	ntp  chunks[float64] // next_target_prob_k given in the log

	ids     []string         // episode ids by index
	idIndex map[string]int32 // id -> index
	last    []byte           // id of the previous row
	lastEp  int32

	// inOrder stays true while the rows come episode after episode with
	// t = 0, 1, 2, ...; then finish need not sort.
	inOrder bool

	// states, actions number the labels of categorical columns (nil for
	// columns of ids).
	states, actions *labeler
}

func newBuilder(file string, lay *layout) *builder {
	b := &builder{file: file, lay: lay, idIndex: map[string]int32{}, lastEp: -1, inOrder: true,
		recs: chunks[rec]{w: 1}, obs: chunks[float64]{w: lay.stateDim},
		act: chunks[float64]{w: lay.actionDim}, nobs: chunks[float64]{w: lay.stateDim},
		tp: chunks[float64]{w: lay.targetK}, ntp: chunks[float64]{w: lay.targetK}}
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

// chunkBits sets the size of the chunks that hold rows: 2^16 rows.
const chunkBits = 16

// chunks stores rows of w values in chunks of 2^chunkBits rows, so that a
// growing log is never copied to a larger array (which would need twice
// the memory). The first chunk grows as needed so that small logs stay
// small; the others are allocated at full size.
type chunks[T any] struct {
	w int
	c [][]T
	n int // number of rows
}

// add appends a zero row and returns it.
func (s *chunks[T]) add() []T {
	ci := s.n >> chunkBits
	if ci == len(s.c) {
		var c []T
		if ci > 0 {
			c = make([]T, 0, s.w<<chunkBits)
		}
		s.c = append(s.c, c)
	}
	c := &s.c[ci]
	*c = append(*c, make([]T, s.w)...)
	s.n++
	return (*c)[len(*c)-s.w : len(*c) : len(*c)]
}

// row returns row i.
func (s *chunks[T]) row(i int) []T {
	c := s.c[i>>chunkBits]
	off := (i & (1<<chunkBits - 1)) * s.w
	return c[off : off+s.w : off+s.w]
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

// add appends a row whose fields have been checked one by one; its
// vectors are the last rows of b.obs and b.act. It tracks whether the rows
// are still in episode order.
func (b *builder) add(r rec) error {
	n := b.recs.n
	if n >= math.MaxInt32 {
		return &FormatError{File: b.file, Row: int(r.row), Msg: "too many rows (at most 2^31 - 1)"}
	}
	if b.inOrder && n > 0 {
		p := &b.recs.row(n - 1)[0]
		switch {
		case r.ep == p.ep:
			b.inOrder = r.t == p.t+1
		case int(r.ep) == len(b.ids)-1 && r.ep > p.ep:
			b.inOrder = r.t == 0
		default:
			b.inOrder = false
		}
	} else if n == 0 {
		b.inOrder = r.t == 0
	}
	r.idx = int32(n)
	b.recs.add()[0] = r
	return nil
}

// fail returns a FormatError at a row and a contract column, named as
// the file names it.
func (b *builder) fail(row int32, col, format string, args ...any) error {
	return &FormatError{File: b.file, Row: int(row), Column: b.lay.name(col), Msg: fmt.Sprintf(format, args...)}
}

// finish sorts the rows by (episode, t), checks that every episode's t runs
// 0, 1, 2, ... and that next states given on inner rows agree with the
// following row, and builds the Dataset.
func (b *builder) finish() (*Dataset, *Labels, error) {
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
	return d, labels, nil
}

// build checks the rows read and assembles the Dataset, with the
// labeler's numbers for labels.
func (b *builder) build() (*Dataset, error) {
	n := b.recs.n
	if n == 0 {
		return nil, &FormatError{File: b.file, Msg: "no data rows"}
	}
	at := func(i int) *rec { return &b.recs.row(i)[0] }
	if !b.inOrder {
		recs := make([]rec, 0, n)
		for _, c := range b.recs.c {
			recs = append(recs, c...)
		}
		b.recs = chunks[rec]{}
		at = func(i int) *rec { return &recs[i] }
		slices.SortStableFunc(recs, func(x, y rec) int {
			if c := cmp.Compare(x.ep, y.ep); c != 0 {
				return c
			}
			return cmp.Compare(x.t, y.t)
		})
		for i := range recs {
			r := &recs[i]
			if i == 0 || r.ep != recs[i-1].ep {
				if r.t != 0 {
					return nil, b.fail(r.row, "t", "episode %q starts at t = %d; t must start at 0", b.ids[r.ep], r.t)
				}
				continue
			}
			p := &recs[i-1]
			switch {
			case r.t == p.t:
				return nil, b.fail(r.row, "t", "duplicate step: episode %q has t = %d on row %d too", b.ids[r.ep], r.t, p.row)
			case r.t > p.t+1:
				if r.t == p.t+2 {
					return nil, b.fail(r.row, "t", "gap in episode %q: t jumps from %d to %d (t = %d is missing)", b.ids[r.ep], p.t, r.t, p.t+1)
				}
				return nil, b.fail(r.row, "t", "gap in episode %q: t jumps from %d to %d (t = %d ... %d are missing)", b.ids[r.ep], p.t, r.t, p.t+1, r.t-1)
			}
		}
	}

	lay := b.lay
	sd, ad := lay.stateDim, lay.actionDim
	d := &Dataset{StateDim: sd, ActionDim: ad, IDs: make([]string, 0, len(b.ids)), Start: make([]int, 1, len(b.ids)+1),
		Reward: make([]float64, n), LogTarget: make([]float64, n), HasFinal: make([]bool, 0, len(b.ids))}
	if lay.behavior {
		d.LogBehavior = make([]float64, n)
	}
	if lay.terminal {
		d.Terminal = make([]bool, 0, len(b.ids))
	}
	if sd == 0 {
		d.State = make([]int32, n)
		d.FinalState = make([]int32, 0, len(b.ids))
	} else {
		d.Obs = make([]float64, 0, n*sd)
		d.FinalObs = make([]float64, 0, len(b.ids)*sd)
	}
	if ad == 0 {
		d.Action = make([]int32, n)
	} else {
		d.ActionVec = make([]float64, 0, n*ad)
	}
	K := lay.targetK
	if K > 0 {
		d.TargetProbs = make([]float64, 0, n*K)
		d.FinalTargetProbs = make([]float64, 0, len(b.ids)*K)
		d.HasFinalTarget = make([]bool, 0, len(b.ids))
	}
	maxState, maxAction := int32(-1), int32(-1)
	var maxRow int32 // where the largest state id is, for the error below
	maxCol := ""
	var nx *rec
	for i := range n {
		r := nx
		if i == 0 {
			r = at(0)
		}
		nx = nil
		if i+1 < n {
			nx = at(i + 1)
		}
		d.Reward[i], d.LogTarget[i] = r.reward, r.lt
		if d.LogBehavior != nil {
			d.LogBehavior[i] = r.lb
		}
		if sd == 0 {
			d.State[i] = r.state
		} else {
			d.Obs = append(d.Obs, b.obs.row(int(r.idx))...)
		}
		if ad == 0 {
			d.Action[i] = r.action
		} else {
			d.ActionVec = append(d.ActionVec, b.act.row(int(r.idx))...)
		}
		if K > 0 {
			d.TargetProbs = append(d.TargetProbs, b.tp.row(int(r.idx))...)
		}
		if r.state > maxState {
			maxState, maxRow, maxCol = r.state, r.row, "state"
		}
		maxAction = max(maxAction, r.action)
		last := nx == nil || nx.ep != r.ep
		if !last && r.ntp >= 0 {
			return nil, b.fail(r.row, "next_target_prob_0", "given on a row that is not the last of episode %q (t = %d follows on row %d); "+
				"next_target_prob_k give the target's action distribution at the state after an episode's last row, and are empty elsewhere",
				b.ids[r.ep], nx.t, nx.row)
		}
		if !last && r.terminal != 0 {
			return nil, b.fail(r.row, "terminal", "is 1 on a row that is not the last of episode %q (t = %d follows on row %d); "+
				"a terminal step ends its episode in the absorbing state, so it is the episode's last row", b.ids[r.ep], nx.t, nx.row)
		}
		if last && d.Terminal != nil {
			d.Terminal = append(d.Terminal, r.terminal != 0)
		}
		if last && K > 0 {
			d.HasFinalTarget = append(d.HasFinalTarget, r.ntp >= 0)
			if r.ntp >= 0 {
				d.FinalTargetProbs = append(d.FinalTargetProbs, b.ntp.row(int(r.ntp))...)
			} else {
				d.FinalTargetProbs = append(d.FinalTargetProbs, make([]float64, K)...)
			}
		}
		switch {
		case !last:
			// The next state is the next row's; one given must agree.
			if r.next < 0 {
				break
			}
			if sd == 0 {
				if r.next != nx.state {
					return nil, b.fail(r.row, "next_state", "next_state %d differs from the state %d of the next step of episode %q (row %d)",
						r.next, nx.state, b.ids[r.ep], nx.row)
				}
				break
			}
			given, want := b.nobs.row(int(r.next)), b.obs.row(int(nx.idx))
			for k, v := range given {
				if v != want[k] {
					return nil, b.fail(r.row, fmt.Sprintf("next_state_%d", k), "%s differs from state_%d = %s of the next step of episode %q (row %d)",
						num(v), k, num(want[k]), b.ids[r.ep], nx.row)
				}
			}
		case sd == 0:
			d.HasFinal = append(d.HasFinal, r.next >= 0)
			d.FinalState = append(d.FinalState, r.next)
			if r.next > maxState {
				maxState, maxRow, maxCol = r.next, r.row, "next_state"
			}
		default:
			d.HasFinal = append(d.HasFinal, r.next >= 0)
			if r.next >= 0 {
				d.FinalObs = append(d.FinalObs, b.nobs.row(int(r.next))...)
			} else {
				d.FinalObs = append(d.FinalObs, make([]float64, sd)...)
			}
		}
		if last {
			d.IDs = append(d.IDs, b.ids[r.ep])
			d.Start = append(d.Start, i+1)
		}
	}
	if sd == 0 {
		// Discrete states are indexed densely (the tabular ratio solver
		// allocates per state id), so ids far beyond the data's size would
		// cost memory for nothing.
		if limit := max(1<<22, 64*int64(n)); int64(maxState) >= limit {
			return nil, b.fail(maxRow, maxCol, "state id %d is far larger than the data (%d rows): ihope indexes discrete states densely, so renumber them 0, 1, 2, ... (ids below %d are accepted)", maxState, n, limit)
		}
		d.NumStates = int(maxState) + 1
	}
	if ad == 0 {
		// Every action id is below K (addRow checks each row), so with
		// target_prob_k columns NumActions = K >= 1 + the largest id.
		d.NumActions = max(int(maxAction)+1, K)
	}
	return d, nil
}

// The check functions below hold the value rules of the log contract, so
// that the CSV and Parquet readers agree. Each returns "" for a good value
// or a message for a FormatError.

// checkReal checks a reward or a state or action vector component.
func checkReal(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN is not allowed"
	case math.IsInf(v, 1):
		return "+Inf is not allowed"
	case math.IsInf(v, -1):
		return "-Inf is not allowed"
	}
	return ""
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
	if msg := checkReal(v); msg != "" {
		return 0, msg
	}
	if v != math.Trunc(v) {
		return 0, fmt.Sprintf("%s is not an integer; %s is a non-negative integer", num(v), noun)
	}
	if v < 0 {
		return 0, fmt.Sprintf("%s is negative; %s is a non-negative integer", num(v), noun)
	}
	if v > maxID {
		return 0, fmt.Sprintf("%s is too large; %s is at most %d", num(v), noun, maxID)
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
			return 0, checkReal(v)
		}
		switch {
		case r == roleBehavior && discrete && !(v > 0 && v <= 1):
			return 0, num(v) + " is outside (0, 1]"
		case r == roleBehavior && !discrete && !(v > 0):
			return 0, num(v) + " is not a positive density"
		case r == roleTarget && discrete && !(v >= 0 && v <= 1):
			return 0, num(v) + " is outside [0, 1]"
		case r == roleTarget && !discrete && !(v >= 0):
			return 0, num(v) + " is a negative density"
		}
		return math.Log(v), ""
	default: // log-probabilities
		switch {
		case math.IsInf(v, 1):
			return 0, "+Inf is not allowed"
		case math.IsInf(v, -1) && r == roleBehaviorLn:
			return 0, "-Inf is not allowed: the behavior policy must give every logged action a positive probability"
		case discrete && v > 0:
			return 0, num(v) + " is above 0, but a probability is at most 1"
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
	if msg := checkReal(v); msg != "" {
		return 0, msg
	}
	return 0, num(v) + " is neither 0 nor 1; terminal is 1 on an episode's last row if it ended in a terminal state, else 0"
}

// checkProb checks one value of a target_prob_k or next_target_prob_k
// column: a probability in [0, 1].
func checkProb(v float64) string {
	if msg := checkReal(v); msg != "" {
		return msg
	}
	if !(v >= 0 && v <= 1) {
		return num(v) + " is outside [0, 1]"
	}
	return ""
}

// probTol is the tolerance of the rules on a target's action distribution:
// its sum is 1, and it agrees with the logged action's target probability,
// both within probTol (absolute, on probabilities).
const probTol = 1e-6

// checkDistribution checks that the values of a distribution over the
// actions (each already in [0, 1]) sum to 1 within probTol, the one sum
// the readers, Validate and SetTargetPolicy all compute.
func checkDistribution(p []float64) (sum float64, ok bool) {
	for _, v := range p {
		sum += v
	}
	return sum, math.Abs(sum-1) <= probTol
}

// sumText formats a sum of probabilities for a message: 12 significant
// digits, enough to show a miss of 1e-6 and few enough to hide rounding
// (0.2 + 0.7 shows as 0.9).
func sumText(v float64) string { return strconv.FormatFloat(v, 'g', 12, 64) }

// agrees reports whether a logged log-probability of the logged action,
// lt, agrees with p, the action's entry in the target's distribution.
func agrees(lt, p float64) bool { return math.Abs(math.Exp(lt)-p) <= probTol }

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

// addRow adds a parsed row whose fields have been checked one by one and
// checks the rules within the row: a next-state vector or
// next_target_prob_k given whole or not at all (the first missing
// component is named with the reader's word for a missing value, missing:
// CSV "empty value", Parquet "empty value (null)"), next_target_prob_k only
// with a next state, target_prob_k (the last row of b.tp) and
// next_target_prob_k each summing to 1, the logged action among them, and
// target_prob or target_logprob agreeing with target_prob_{a_t}, which
// gives LogTarget when they are absent.
func (b *builder) addRow(r rec, x *rowExtra, missing string) error {
	lay := b.lay
	if x.nextGiven > 0 {
		if x.nextGiven < lay.stateDim {
			return b.fail(r.row, fmt.Sprintf("next_state_%d", x.nextMissing),
				"%s, but other next_state columns of this row are given; give all or none", missing)
		}
		r.next = int32(b.nobs.n)
		copy(b.nobs.add(), x.next)
	}
	K := lay.targetK
	if K == 0 {
		return b.add(r)
	}
	tp := b.tp.row(b.tp.n - 1)
	if sum, ok := checkDistribution(tp); !ok {
		return b.fail(r.row, "target_prob_0", "%s sum to %s; the target's action distribution sums to 1 (within 1e-6)",
			span("target_prob", K), sumText(sum))
	}
	if int(r.action) >= K {
		return b.fail(r.row, "action", "action %d has no target probability: the log gives %s (K = %d); "+
			"give target_prob_k for every action id k (K = 1 + the largest action id, or more)", r.action, span("target_prob", K), K)
	}
	p := tp[r.action]
	switch {
	case lay.target == "":
		r.lt = math.Log(p) // 0 gives -Inf: the target never takes a_t
	case !agrees(r.lt, p):
		given := fmt.Sprintf("%s %s", lay.target, num(x.target))
		if lay.targetLn {
			given += fmt.Sprintf(" (probability %s)", num(math.Exp(r.lt)))
		}
		return b.fail(r.row, lay.target, "%s disagrees with target_prob_%d = %s, the target probability of the logged action %d "+
			"(they must agree within 1e-6)", given, r.action, num(p), r.action)
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
		if sum, ok := checkDistribution(x.ntp); !ok {
			return b.fail(r.row, "next_target_prob_0", "%s sum to %s; the target's action distribution sums to 1 (within 1e-6)",
				span("next_target_prob", K), sumText(sum))
		}
		r.ntp = int32(b.ntp.n)
		copy(b.ntp.add(), x.ntp)
	}
	return b.add(r)
}
