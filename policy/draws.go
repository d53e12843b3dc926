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

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
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
	maxPerState         int
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
		p.maxPerState = max(p.maxPerState, len(p.at[k])/p.actionDim)
	}
	return p, nil
}

// ActionDim is the length of an action vector.
func (p *Draws) ActionDim() int { return p.actionDim }

// StateDim is the length of a state vector.
func (p *Draws) StateDim() int { return p.stateDim }

// MaxPerState is the largest number of draws given at one state.
func (p *Draws) MaxPerState() int { return p.maxPerState }

// Has reports whether a draw was given at obs.
func (p *Draws) Has(obs []float64) bool {
	_, ok := p.at[bitsKey(obs)]
	return ok
}

// LogProb is NaN: the density of the policy is not known.
func (p *Draws) LogProb(obs, action []float64) float64 { return math.NaN() }

// Sample returns a draw given at obs (one chosen by rng if several), newly
// allocated. At a state without draws it returns NaNs, so that whatever
// needed one is NaN rather than silently wrong: Check says first whether
// the draws cover a log.
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

// Check reports whether p covers the logs d: the same state and action
// dimensions, and a draw at every state where a value model reads the
// target's actions (dataset.Dataset.TargetStates). The error names the
// first state without one by episode and t, or says that none matched
// (states rounded or reformatted).
func (p *Draws) Check(d *dataset.Dataset) error {
	if p.stateDim != d.StateDim || p.actionDim != d.ActionDim {
		return fmt.Errorf("draws of %d-dimensional states and %d-dimensional actions, but the log's are %d and %d", p.stateDim, p.actionDim, d.StateDim, d.ActionDim)
	}
	missing, all, first := 0, 0, ""
	d.TargetStates(func(obs []float64, e, t int, final bool) bool {
		all++
		if !p.Has(obs) {
			if missing++; first == "" {
				first = fmt.Sprintf("the state of episode %q, t = %d", d.IDs[e], t)
				if final {
					first = fmt.Sprintf("the next state after the last step of episode %q", d.IDs[e])
				}
			}
		}
		return true
	})
	switch {
	case missing == 0:
		return nil
	case missing == all:
		return fmt.Errorf("none of the log's %d states has a target draw: were the states rounded or reformatted? They must be written as in the log, bit for bit (the shortest exact form, as ihope writes them, or 17 significant digits)", all)
	}
	plural := "s"
	if missing == 1 {
		plural = ""
	}
	return fmt.Errorf("no target draw at %s (%d state%s of the log without one; the states must be written as in the log, bit for bit)", first, missing, plural)
}

// WriteDraws writes, in the text format f (CSV or TSV, gzip-compressed or
// not), one action drawn from pi at every state of d where a value model
// reads the target's actions (dataset.Dataset.TargetStates), in the form
// ReadDraws reads: numbers in their shortest exact form, so that the
// states match the log's bit for bit.
func WriteDraws(w io.Writer, f logio.Format, d *dataset.Dataset, pi Continuous, rng *rand.Rand) error {
	sep, zipped, err := drawsFormat(f)
	if err != nil {
		return err
	}
	var zw *gzip.Writer
	if zipped {
		zw = gzip.NewWriter(w)
		w = zw
	}
	bw := bufio.NewWriter(w)
	for k := range d.StateDim {
		fmt.Fprintf(bw, "state_%d%c", k, sep)
	}
	for k := range d.ActionDim {
		if k > 0 {
			bw.WriteByte(sep)
		}
		fmt.Fprintf(bw, "action_%d", k)
	}
	bw.WriteByte('\n')
	d.TargetStates(func(obs []float64, _, _ int, _ bool) bool {
		for _, v := range obs {
			bw.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			bw.WriteByte(sep)
		}
		for k, v := range pi.Sample(rng, obs) {
			if k > 0 {
				bw.WriteByte(sep)
			}
			bw.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		bw.WriteByte('\n')
		return true
	})
	if err := bw.Flush(); err != nil {
		return err
	}
	if zw != nil {
		return zw.Close()
	}
	return nil
}

// drawsFormat returns the separator of a draws file's format and whether
// it is gzip-compressed; Parquet is refused.
func drawsFormat(f logio.Format) (sep byte, zipped bool, err error) {
	switch f {
	case logio.CSV:
		return ',', false, nil
	case logio.TSV:
		return '\t', false, nil
	case logio.CSVGzip:
		return ',', true, nil
	case logio.TSVGzip:
		return '\t', true, nil
	}
	return 0, false, fmt.Errorf("policy: draws are CSV or TSV, plain or gzip-compressed, not %q", f)
}

// ReadDraws reads draws in the text format f (CSV or TSV, gzip-compressed
// or not): a header of state_0 … state_{d-1} and action_0 …
// action_{m-1} in any order (episode and t columns, if any, are ignored),
// then one row per draw. Numbers follow the log contract
// (logio.ParseNumber). name is used in messages, which give the row and
// column.
func ReadDraws(r io.Reader, f logio.Format, name string) (*Draws, error) {
	sep, zipped, err := drawsFormat(f)
	if err != nil {
		return nil, err
	}
	if zipped {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		r = zr
	}
	br := bufio.NewReader(r)
	logio.SkipBOM(br)
	cr := csv.NewReader(br)
	cr.Comma = rune(sep)
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	stateCol, actionCol := map[int]int{}, map[int]int{}
	for j, h := range header {
		if h == "episode" || h == "t" {
			continue // where the draw was made, as a log's export has it: not needed
		}
		cols := stateCol
		rest, ok := strings.CutPrefix(h, "state_")
		if !ok {
			cols = actionCol
			rest, ok = strings.CutPrefix(h, "action_")
		}
		k, err := strconv.Atoi(rest)
		if !ok || err != nil || k < 0 || strconv.Itoa(k) != rest {
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
				x, err := logio.ParseNumber(rec[cols[k]])
				if err != nil {
					return nil, fmt.Errorf("%s: row %d, column %q: %v", name, row, prefix+strconv.Itoa(k), err)
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
