package policy

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Draws is a policy over real actions known only by actions drawn from it
// at given states: what a user can give for a target policy that lives in
// another program (a network in Python, say), which ihope cannot run.
// The value models (fqe, dr) need E_{a~pi}[q(s', a)] at every next state;
// one draw per state is an unbiased estimate of it, and q is linear in its
// coefficients for the linear model, so its fit stays consistent (the
// draws' noise averages out over the steps). Several draws at one state
// are kept and Sample picks one uniformly.
//
// A state is matched by the exact bits of its vector: the states of the
// draws file must be written as the log writes them (the same decimal
// strings parse to the same float64). LogProb is unknown (NaN): Draws is
// not a density, and the importance weights read the logged
// target_prob/target_logprob instead.
type Draws struct {
	stateDim, actionDim int
	at                  map[string][]float64 // state bits -> draws, actionDim each
	max                 int
}

var _ Continuous = (*Draws)(nil)

// NewDraws returns the policy of the given draws: actions[i] drawn at
// states[i]. Every state has stateDim entries and every action actionDim,
// all finite.
func NewDraws(states, actions [][]float64) (*Draws, error) {
	if len(states) == 0 || len(states) != len(actions) {
		return nil, fmt.Errorf("policy: draws: %d states and %d actions", len(states), len(actions))
	}
	p := &Draws{stateDim: len(states[0]), actionDim: len(actions[0]), at: map[string][]float64{}}
	if p.stateDim == 0 || p.actionDim == 0 {
		return nil, errors.New("policy: draws: empty state or action vectors")
	}
	for i, s := range states {
		a := actions[i]
		if len(s) != p.stateDim || len(a) != p.actionDim {
			return nil, fmt.Errorf("policy: draws: draw %d has %d state and %d action components, want %d and %d", i, len(s), len(a), p.stateDim, p.actionDim)
		}
		for _, v := range append(s[:len(s):len(s)], a...) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("policy: draws: draw %d holds %v", i, v)
			}
		}
		k := bitsKey(s)
		p.at[k] = append(p.at[k], a...)
		p.max = max(p.max, len(p.at[k])/p.actionDim)
	}
	return p, nil
}

// ActionDim is the length of an action vector.
func (p *Draws) ActionDim() int { return p.actionDim }

// StateDim is the length of a state vector.
func (p *Draws) StateDim() int { return p.stateDim }

// MaxPerState is the largest number of draws given at one state.
func (p *Draws) MaxPerState() int { return p.max }

// Has reports whether a draw was given at obs.
func (p *Draws) Has(obs []float64) bool {
	_, ok := p.at[bitsKey(obs)]
	return ok
}

// LogProb is NaN: the density of the policy is not known.
func (p *Draws) LogProb(obs, action []float64) float64 { return math.NaN() }

// Sample returns a draw given at obs (one chosen by rng if several), newly
// allocated. At a state without draws it returns NaNs, so that whatever
// needed one is NaN rather than silently wrong: callers check the states
// they need with Has (ihope estimate names the first one missing).
func (p *Draws) Sample(rng *rand.Rand, obs []float64) []float64 {
	d, ok := p.at[bitsKey(obs)]
	if !ok {
		nan := make([]float64, p.actionDim)
		for k := range nan {
			nan[k] = math.NaN()
		}
		return nan
	}
	k := len(d) / p.actionDim
	i := 0
	if k > 1 {
		i = rng.IntN(k)
	}
	return append([]float64(nil), d[i*p.actionDim:(i+1)*p.actionDim]...)
}

// bitsKey is the exact bits of a vector, as a map key.
func bitsKey(v []float64) string {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		if x == 0 {
			x = 0 // -0 and +0 are one state
		}
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return string(b)
}

// ReadDrawsCSV reads draws from CSV (or TSV if name ends in .tsv or
// .tsv.gz; gzip-compressed if it ends in .gz): a header of state_0 …
// state_{d-1} and action_0 … action_{m-1} in any order (episode and t
// columns, if any, are ignored), then one row per draw. name is used in
// messages, which give the row and column.
func ReadDrawsCSV(r io.Reader, name string) (*Draws, error) {
	lower := strings.ToLower(name)
	if strings.HasSuffix(lower, ".gz") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		r = zr
		lower = strings.TrimSuffix(lower, ".gz")
	}
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	if strings.HasSuffix(lower, ".tsv") {
		cr.Comma = '\t'
	}
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	stateCol, actionCol := map[int]int{}, map[int]int{}
	for j, h := range header {
		if h == "episode" || h == "t" {
			continue // where the draw was made, as a log's export has it: not needed
		}
		var cols map[int]int
		rest, ok := strings.CutPrefix(h, "state_")
		if ok {
			cols = stateCol
		} else if rest, ok = strings.CutPrefix(h, "action_"); ok {
			cols = actionCol
		} else {
			return nil, fmt.Errorf("%s: row 1, column %q: unknown column; want state_0, state_1, ... and action_0, action_1, ...", name, h)
		}
		k, err := strconv.Atoi(rest)
		if err != nil || k < 0 || strconv.Itoa(k) != rest {
			return nil, fmt.Errorf("%s: row 1, column %q: unknown column; want state_0, state_1, ... and action_0, action_1, ...", name, h)
		}
		if _, dup := cols[k]; dup {
			return nil, fmt.Errorf("%s: row 1, column %q: duplicate column", name, h)
		}
		cols[k] = j
	}
	for _, c := range []struct {
		prefix string
		cols   map[int]int
	}{{"state_", stateCol}, {"action_", actionCol}} {
		if len(c.cols) == 0 {
			return nil, fmt.Errorf("%s: row 1, column %q: required column is missing", name, c.prefix+"0")
		}
		for k := range len(c.cols) {
			if _, ok := c.cols[k]; !ok {
				return nil, fmt.Errorf("%s: row 1, column %q: column is missing (vector columns are numbered from 0 without gaps)", name, c.prefix+strconv.Itoa(k))
			}
		}
	}
	var states, actions [][]float64
	for row := 2; ; row++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: row %d: %w", name, row, err)
		}
		read := func(cols map[int]int, prefix string) ([]float64, error) {
			v := make([]float64, len(cols))
			for k := range v {
				f := rec[cols[k]]
				x, err := strconv.ParseFloat(f, 64)
				if err != nil || strings.ContainsAny(f, "_xX") || math.IsNaN(x) || math.IsInf(x, 0) {
					return nil, fmt.Errorf("%s: row %d, column %q: %q is not a finite number", name, row, prefix+strconv.Itoa(k), f)
				}
				v[k] = x
			}
			return v, nil
		}
		s, err := read(stateCol, "state_")
		if err != nil {
			return nil, err
		}
		a, err := read(actionCol, "action_")
		if err != nil {
			return nil, err
		}
		states, actions = append(states, s), append(actions, a)
	}
	if len(states) == 0 {
		return nil, fmt.Errorf("%s: no draws after the header", name)
	}
	return NewDraws(states, actions)
}
