package ope

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"strconv"

	"github.com/ihope-ope/ihope/dataset"
	"golang.org/x/sync/errgroup"
)

// Summer is implemented by the estimators whose statistics are sums over
// episodes, so that they can be computed over a stream of shards, on many
// machines, and merged (package stream): naive, the IS and WIS variants,
// bch-tabular, and the tabular forms of model-based, fqe, mwl, dualdice
// and mql (CountSums); in two passes (TwoPassSums) bch-kernel, fqe's
// linear learner and the learners that train on a sample of episodes
// (SampleSums: bch-neural, the neural forms of fqe, mwl, dualdice, mql).
type Summer interface {
	Estimator
	// NewSums returns empty statistics for discount gamma in copies
	// copies: copy 0 is the data itself, copy c >= 1 bootstrap resample
	// c-1 (see Sums).
	NewSums(gamma float64, copies int) (Sums, error)
}

// Sums are an estimator's sufficient statistics over the episodes added
// so far, kept in several copies at once: copy 0 weighs every episode
// once and gives the estimate; copy c >= 1 weighs each episode by its
// multiplicity in bootstrap resample c-1 (PoissonCount), so B resamples
// are B more weighted copies of the same sums, filled in the same pass.
//
// Every Sums is a pointer to a struct of exported fields, so
// encoding/json and encoding/gob move it between processes exactly
// (floats as Floats: JSON writes infinities as strings). Merge is
// associative and commutative up to the order of floating-point
// summation. The in-memory Estimate of an estimator whose sums take one
// pass (naive, the IS family, bch-tabular, the tabular value models and
// minimax forms) is their fold over the log's episodes, one copy
// (foldSums); the two-pass learners' in-memory fit is their second pass
// (kernelloss.SecondPass) over features fixed by the whole log.
type Sums interface {
	// Add adds episode e of d, with multiplicity mult[c] in copy c
	// (len(mult) is the number of copies; mult[0] is 1). The episode must
	// be whole: an episode split across shards is joined before it is
	// added (package stream).
	Add(d *dataset.Dataset, e int, mult []int) error
	// Merge adds o's sums, which must come from the same estimator,
	// discount and number of copies.
	Merge(o Sums) error
	// Finish returns the estimate of copy c and, for c = 0, what its
	// weights look like. Result.Weights is nil: the per-unit weights are
	// not kept. Finish does not change the sums and is safe for
	// concurrent calls (package stream finishes the resamples in
	// parallel).
	Finish(c int) (Result, WeightSummary, error)
}

// BlockSums are Sums that can also add an episode in blocks of steps,
// each with its own multiplicities: the Poisson block bootstrap of one
// long episode, whose resamples weigh blocks, not episodes (BlockCounts).
// Adding an episode as one block is Add.
type BlockSums interface {
	Sums
	// AddBlocks adds episode e of d cut into blocks of length steps (the
	// last may be shorter): block b, steps b length to (b+1) length - 1,
	// with multiplicity mult(b)[c] in copy c, each step keeping its place
	// in the episode.
	AddBlocks(d *dataset.Dataset, e, length int, mult func(b int) []int) error
}

// SumsInterval is the (1 - alpha) interval of the B bootstrap copies of
// s (copies 1 to B), their final solves run in parallel (one per CPU):
// IntervalOf their estimates, a non-finite estimate counted as a failed
// resample.
func SumsInterval(name string, s Sums, B int, alpha float64) Interval {
	values, errs := copyEstimates(name, s, B, runtime.GOMAXPROCS(0))
	return IntervalOf(values, errs, alpha)
}

// copyEstimates finishes copies 1 to B of s on up to workers goroutines:
// the estimates, with errs[r] set (and values[r] NaN) where copy r+1
// fails or is not finite.
func copyEstimates(name string, s Sums, B, workers int) (values []float64, errs []error) {
	values, errs = make([]float64, B), make([]error, B)
	var g errgroup.Group
	g.SetLimit(max(1, workers))
	for r := range B {
		g.Go(func() error {
			res, _, err := s.Finish(r + 1)
			values[r], errs[r] = finite(name, res.Value, err)
			return nil
		})
	}
	g.Wait()
	return values, errs
}

// finite turns a non-finite estimate into an error; on any error the
// value is NaN.
func finite(name string, v float64, err error) (float64, error) {
	if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
		err = fmt.Errorf("%s: the estimate is %v", name, v)
	}
	if err != nil {
		return math.NaN(), err
	}
	return v, nil
}

// SumsRead returns why the sums s of estimator name cannot read logs
// like d as its Estimate does, or nil: the tabular forms' counts
// (CountSums) on real states or actions, a trained model's sums
// (SampleSums) on discrete states. Terminal episodes, which no sums read
// (the estimators pad them to the log's horizon), are the callers' to
// refuse, each in its own words. The stream (stream.Applies) and
// Bootstrap ask it before they use sums.
func SumsRead(name string, s Sums, d *dataset.Dataset) error {
	if _, ok := s.(CountSums); ok && !(d.Discrete() && d.ActionDim == 0) {
		return fmt.Errorf("%s streams in its tabular form only, which needs discrete states and actions", name)
	}
	if ss, ok := s.(*SampleSums); ok && d.Discrete() {
		return fmt.Errorf("%s needs real-valued states", ss.Form())
	}
	return nil
}

// TwoPassSums are Sums whose terms are features fixed by statistics of the
// whole log (bch-kernel: the states' scaling, the median bandwidth, the
// centres of the bumps, drawn from samples of the log). They are filled
// in two passes over the episodes: first AddFirst for every episode (or
// Merge of partial sums still in their first pass), then EndFirst, which
// fixes the features, then Add for every episode again, as for any Sums
// (Merge then adds the second pass's sums of partial sums made from the
// same ended first pass). Until EndFirst, Add and Finish fail.
type TwoPassSums interface {
	Sums
	// FirstPass reports whether EndFirst has not been called yet.
	FirstPass() bool
	// AddFirst adds episode e of d to the first pass.
	AddFirst(d *dataset.Dataset, e int) error
	// EndFirst ends the first pass.
	EndFirst() error
}

// WeightSummary describes an estimate's weights without keeping them:
// what KishESS and MaxShare give on Result.Weights, and their number.
type WeightSummary struct {
	ESS   float64
	Units int
	// MaxShare is the largest weight's share of the total, NaN where
	// the sums do not keep it.
	MaxShare float64
}

// SummarizeWeights returns the WeightSummary of weights w.
func SummarizeWeights(w []float64) WeightSummary {
	return WeightSummary{ESS: KishESS(w), Units: len(w), MaxShare: MaxShare(w)}
}

// Floats is a []float64 whose JSON form keeps infinities and NaN (as the
// strings "+Inf", "-Inf", "NaN"), which running maxima of log-weights
// need. Other values are written in the shortest form that reads back
// exactly.
type Floats []float64

// MarshalJSON implements json.Marshaler.
func (f Floats) MarshalJSON() ([]byte, error) {
	if f == nil {
		return []byte("null"), nil
	}
	b := []byte{'['}
	for i, x := range f {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsInf(x, 0) || math.IsNaN(x) {
			b = strconv.AppendQuote(b, strconv.FormatFloat(x, 'g', -1, 64))
			continue
		}
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *Floats) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*f = nil
		return nil
	}
	out := make(Floats, len(raw))
	for i, r := range raw {
		s := string(r)
		if len(s) > 0 && s[0] == '"' {
			if err := json.Unmarshal(r, &s); err != nil {
				return err
			}
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("ope: sums: %w", err)
		}
		out[i] = x
	}
	*f = out
	return nil
}

// grow returns f extended with zeros to length n (unchanged if longer).
func (f Floats) grow(n int) Floats {
	if len(f) >= n {
		return f
	}
	return append(f, make(Floats, n-len(f))...)
}

// fill sets every entry of f to x.
func (f Floats) fill(x float64) Floats {
	for i := range f {
		f[i] = x
	}
	return f
}

// shifted is a sum kept as exp(Shift) times the entries of a Floats: the
// running maximum of the log-terms added so far is the shift, so no term
// overflows or underflows before the final ratio. rescale moves the sums
// to a larger shift.
func rescale(sums []Floats, from, to float64) {
	if from == to || math.IsInf(from, -1) {
		return
	}
	f := math.Exp(from - to)
	for _, s := range sums {
		for i := range s {
			s[i] *= f
		}
	}
}

// mergeCheck returns an error unless o is a *T made with the same
// discount and number of copies (get reads them).
func mergeCheck[T any, P interface {
	*T
	Sums
}](name string, o Sums, gamma float64, copies int, get func(P) (float64, int)) (P, error) {
	t, ok := o.(P)
	if !ok {
		return nil, fmt.Errorf("%s: cannot merge sums of type %T", name, o)
	}
	g, c := get(t)
	if g != gamma || c != copies {
		return nil, fmt.Errorf("%s: cannot merge sums of gamma %v, %d copies into gamma %v, %d copies", name, g, c, gamma, copies)
	}
	return t, nil
}

// checkSumsArgs checks NewSums's arguments.
func checkSumsArgs(name string, gamma float64, copies int) error {
	if err := checkGamma(gamma); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if copies < 1 {
		return fmt.Errorf("%s: %d copies of the sums (want at least 1)", name, copies)
	}
	return nil
}

// Float is a float64 whose JSON form keeps infinities and NaN, as Floats.
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	b, err := Floats{float64(f)}.MarshalJSON()
	return b[1 : len(b)-1], err
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *Float) UnmarshalJSON(b []byte) error {
	var s Floats
	if err := s.UnmarshalJSON(append(append([]byte{'['}, b...), ']')); err != nil {
		return err
	}
	if len(s) != 1 {
		return fmt.Errorf("ope: sums: %s is not one number", b)
	}
	*f = Float(s[0])
	return nil
}

// raise moves the shift *shift up to x if x is larger, rescaling sums.
func raise(shift *Float, x float64, sums ...Floats) {
	if x > float64(*shift) {
		rescale(sums, float64(*shift), x)
		*shift = Float(x)
	}
}
