package stream

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/ope"
)

// Config says what a Stats accumulates.
type Config struct {
	// Estimators are the names of the estimators to compute, each one
	// whose statistics are sums (Streamable).
	Estimators []string
	// Gamma is the discount, in (0, 1].
	Gamma float64
	// Resamples is the number B of Poisson bootstrap resamples (0: no
	// intervals); Seed seeds them (ope.PoissonCount) and Alpha gives
	// (1 - Alpha) intervals (0: 0.05).
	Resamples int
	Seed      uint64
	Alpha     float64
	// Options builds the estimators (their settings: Options.Tabular
	// for bch-tabular).
	Options ope.Options
	// Notes are the caller's words on what it left out of Estimators and
	// why (ihope estimate's default set: "fqe: not run: ..."); Finish
	// puts them first in Results.Warnings, so that they travel with the
	// statistics (to ihope-beam's workers and its report).
	Notes []string
}

// Streamable returns the names of the registered estimators whose
// statistics are sums over episodes, in registry order.
func Streamable() []string {
	var out []string
	for _, e := range ope.Registry() {
		if s, ok := e.New(ope.Options{}).(ope.Summer); ok {
			if _, err := s.NewSums(1, 1); err == nil {
				out = append(out, e.Name)
			}
		}
	}
	return out
}

// Movable returns nil if the named estimator's statistics, built with
// options o, can move between processes (MarshalBinary), as a cluster's
// workers need, and otherwise why not, naming the form that cannot:
// the second pass of a learner that trains (ope.SampleSums: bch-neural,
// the neural forms of fqe, mwl, dualdice and mql) holds networks trained
// in the process, which have no encoding.
func Movable(name string, o ope.Options) error {
	s, err := New(Config{Estimators: []string{name}, Gamma: 1, Options: o})
	if err != nil {
		return err
	}
	if _, err := s.MarshalBinary(); err != nil {
		form := name
		if ss, ok := s.sums[0].(*ope.SampleSums); ok {
			form = ss.Form()
		}
		return fmt.Errorf("%s cannot run on a cluster: %w", form, err)
	}
	return nil
}

// Applies returns nil if the named estimator applies to logs like d
// with options o (ope.Entry.Applies) and streams on them, and otherwise
// why not: the learners that stream in their tabular form only
// (model-based, fqe; ope.CountSums) need discrete states and actions;
// on real states (o.RealStates is set from d) mwl, dualdice and mql
// stream in their kernel form; and the neural forms chosen by o's
// ValueModel or RatioModel (ope.SampleSums) need real states.
func Applies(name string, d *dataset.Dataset, o ope.Options) error {
	o.RealStates = d.StateDim > 0
	en, ok := ope.Lookup(name)
	if !ok {
		return fmt.Errorf("unknown estimator %q: choose from %s", name, strings.Join(Streamable(), ", "))
	}
	if err := en.Applies(d, o); err != nil {
		return err
	}
	sm, ok := en.New(o).(ope.Summer)
	if !ok {
		return fmt.Errorf("%s cannot stream: its fit needs every step at once", name)
	}
	sums, err := sm.NewSums(1, 1)
	if err != nil {
		return err
	}
	return ope.SumsRead(name, sums, d)
}

// Stats are the sufficient statistics of the configured estimators over
// the episodes added so far, with their bootstrap copies, and the data's
// summary. Add episodes with Add (whole episodes: Reader joins those
// that continue across shards), combine partial Stats with Merge, move
// them between processes with MarshalBinary or MarshalJSON, and finish
// with Finish.
type Stats struct {
	cfg  Config
	sums []ope.Sums
	// errs holds, per estimator, why it stopped (an estimator that fails
	// on some episode, say for a non-finite reward, fails alone, as it
	// does in memory).
	errs []string
	// leader[k] is the index of the estimator whose counts estimator k
	// shares (ope.CountSums: the tabular learners keep the same counts,
	// filled once), -1 for an estimator with its own sums.
	leader []int
	sum    dataset.Summarizer
	// Discrete and the sizes of the data, from the first episodes added.
	shape shape
	mult  []int
	// blocked is set once AddBlocks has cut an episode into blocks: its
	// blocks are the bootstrap's units, so one episode has intervals.
	blocked bool
}

// shape is what the shards must agree on.
type shape struct {
	Set                 bool
	StateDim, ActionDim int
	Behavior            bool
	TargetProbs         bool // the target's whole distribution (target_prob_k)
}

// New returns empty statistics.
func New(cfg Config) (*Stats, error) {
	if !(cfg.Gamma > 0 && cfg.Gamma <= 1) {
		return nil, fmt.Errorf("stream: discount %v outside (0, 1]", cfg.Gamma)
	}
	if cfg.Resamples < 0 {
		return nil, fmt.Errorf("stream: %d resamples", cfg.Resamples)
	}
	if cfg.Alpha == 0 {
		cfg.Alpha = 0.05
	}
	if len(cfg.Estimators) == 0 {
		return nil, errors.New("stream: no estimators")
	}
	s := &Stats{cfg: cfg, mult: make([]int, cfg.Resamples+1)}
	for _, name := range cfg.Estimators {
		en, ok := ope.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("unknown estimator %q: choose from %s", name, strings.Join(Streamable(), ", "))
		}
		sm, ok := en.New(cfg.Options).(ope.Summer)
		if !ok {
			return nil, fmt.Errorf("%s cannot stream: its fit needs every step at once (a model trained or solved on the whole log); the estimators that stream are %s", name, strings.Join(Streamable(), ", "))
		}
		sums, err := sm.NewSums(cfg.Gamma, cfg.Resamples+1)
		if err != nil {
			return nil, err
		}
		s.sums = append(s.sums, sums)
	}
	s.errs = make([]string, len(s.sums))
	s.share()
	return s, nil
}

// share gives every ope.CountSums the counts of the first one of the
// same settings (the leader), so that Add fills them once.
func (s *Stats) share() {
	s.leader = make([]int, len(s.sums))
	for k, sm := range s.sums {
		s.leader[k] = -1
		cs, ok := sm.(ope.CountSums)
		if !ok {
			continue
		}
		for j := range k {
			if l, ok := s.sums[j].(ope.CountSums); ok && s.leader[j] < 0 && l.Counts().Shares(cs.Counts()) {
				cs.SetCounts(l.Counts())
				s.leader[k] = j
				break
			}
		}
	}
}

// relink gives the followers their leader's counts again (after a
// decode, which reads each sums alone).
func (s *Stats) relink() {
	for k, j := range s.leader {
		if j >= 0 {
			s.sums[k].(ope.CountSums).SetCounts(s.sums[j].(ope.CountSums).Counts())
		}
	}
}

// Config returns the configuration the statistics were made with.
func (s *Stats) Config() Config { return s.cfg }

// FirstPass reports whether some estimator's sums still need their
// first pass over the log (ope.TwoPassSums: bch-kernel, whose features
// are fixed by statistics of the whole log): then every episode goes to
// AddFirst, then EndFirst, then every episode again to Add. Statistics
// without such sums need one pass (Add only).
func (s *Stats) FirstPass() bool {
	for k, sm := range s.sums {
		if tp, ok := sm.(ope.TwoPassSums); ok && s.errs[k] == "" && tp.FirstPass() {
			return true
		}
	}
	return false
}

// AddFirst adds the whole episodes lo to hi-1 of d to the first pass of
// the sums that need one (FirstPass).
func (s *Stats) AddFirst(d *dataset.Dataset, lo, hi int) error {
	if err := s.checkEpisodes(d, lo, hi); err != nil {
		return err
	}
	for k, sm := range s.sums {
		tp, ok := sm.(ope.TwoPassSums)
		if !ok || s.errs[k] != "" || !tp.FirstPass() {
			continue
		}
		for e := lo; e < hi; e++ {
			if err := tp.AddFirst(d, e); err != nil {
				s.errs[k] = err.Error()
				break
			}
		}
	}
	return nil
}

// EndFirst ends the first pass: the sums that had one fix their
// features. (On a cluster: merge the first passes, end them once, and
// start every worker's second pass from the ended statistics.)
func (s *Stats) EndFirst() error {
	for k, sm := range s.sums {
		if tp, ok := sm.(ope.TwoPassSums); ok && s.errs[k] == "" && tp.FirstPass() {
			if err := tp.EndFirst(); err != nil {
				s.errs[k] = err.Error()
			}
		}
	}
	return nil
}

// checkEpisodes checks a shard's columns and refuses episodes that end
// in a terminal state.
func (s *Stats) checkEpisodes(d *dataset.Dataset, lo, hi int) error {
	if err := s.check(d); err != nil {
		return err
	}
	for e := lo; e < hi; e++ {
		if d.IsTerminal(e) {
			// Reader.Each names the shard and, where Origin has lost it
			// (an episode carried over from its shard), the row where the
			// episode begins.
			err := &logio.FormatError{Column: "terminal",
				Msg: fmt.Sprintf("episode %q (beginning on this row) ends in a terminal state: episodic logs do not stream yet (the estimators pad terminal episodes with the absorbing state to the log's longest episode, known only at the end); estimate them from one file", d.IDs[e])}
			if d.Origin != nil && e < len(d.Origin.Rows) {
				err.Row = d.Origin.Rows[e]
			}
			return err
		}
	}
	return nil
}

// Add adds the whole episodes lo to hi-1 of d (after the first pass, if
// FirstPass said one was needed). Episodes that end in a terminal state
// are refused: the estimators pad them with the absorbing state to the
// log's longest episode (ope's absorbing), a length known only at the
// end of the stream.
func (s *Stats) Add(d *dataset.Dataset, lo, hi int) error {
	if s.FirstPass() {
		return errors.New("stream: the first pass has not ended (AddFirst every episode, then EndFirst)")
	}
	if err := s.checkEpisodes(d, lo, hi); err != nil {
		return err
	}
	s.sum.Add(d, lo, hi)
	mult := s.mult
	for e := lo; e < hi; e++ {
		mult[0] = 1
		ope.PoissonCounts(s.cfg.Seed, d.IDs[e], mult[1:])
		for k, sm := range s.sums {
			if s.errs[k] != "" || s.leader[k] >= 0 {
				continue
			}
			if err := sm.Add(d, e, mult); err != nil {
				s.errs[k] = err.Error()
				// The followers fail with it, under their own names.
				why := err
				if u := errors.Unwrap(err); u != nil {
					why = u
				}
				for f, l := range s.leader {
					if l == k && s.errs[f] == "" {
						s.errs[f] = s.cfg.Estimators[f] + ": " + why.Error()
					}
				}
			}
		}
	}
	return nil
}

// AddBlocks adds episode e of d, as Add does, cut into blocks of length
// steps, each block with its own Poisson(1) multiplicity in every copy
// (ope.BlockCounts): the Poisson block bootstrap of one long episode.
// Every estimator's sums must add blocks (ope.BlockSums).
func (s *Stats) AddBlocks(d *dataset.Dataset, e, length int) error {
	if s.FirstPass() {
		return errors.New("stream: the first pass has not ended (AddFirst every episode, then EndFirst)")
	}
	if err := s.checkEpisodes(d, e, e+1); err != nil {
		return err
	}
	s.sum.Add(d, e, e+1)
	s.blocked = true
	mult := s.mult
	blockMult := func(b int) []int {
		mult[0] = 1
		ope.BlockCounts(s.cfg.Seed, d.IDs[e], b, mult[1:])
		return mult
	}
	for k, sm := range s.sums {
		if s.errs[k] != "" || s.leader[k] >= 0 {
			continue
		}
		bs, ok := sm.(ope.BlockSums)
		if !ok {
			s.errs[k] = s.cfg.Estimators[k] + ": its statistics cannot be cut into blocks of an episode"
			continue
		}
		if err := bs.AddBlocks(d, e, length, blockMult); err != nil {
			s.errs[k] = err.Error()
		}
	}
	return nil
}

// check refuses a shard whose columns differ from the first one's.
func (s *Stats) check(d *dataset.Dataset) error {
	return s.checkShape(shape{Set: true, StateDim: d.StateDim, ActionDim: d.ActionDim, Behavior: d.HasBehavior(), TargetProbs: d.HasTargetProbs()})
}

// checkShape refuses columns got that differ from the first shard's.
func (s *Stats) checkShape(got shape) error {
	if !s.shape.Set {
		s.shape = got
		return nil
	}
	if got != s.shape {
		return fmt.Errorf("the shards disagree on their columns: %s, where the first shards have %s", got, s.shape)
	}
	return nil
}

func (sh shape) String() string {
	st, ac, b := "discrete states", "discrete actions", "behavior probabilities"
	if sh.StateDim > 0 {
		st = fmt.Sprintf("%d state columns", sh.StateDim)
	}
	if sh.ActionDim > 0 {
		ac = fmt.Sprintf("%d action columns", sh.ActionDim)
	}
	if !sh.Behavior {
		b = "no " + b
	}
	tp := "the target's whole distribution (target_prob_k)"
	if !sh.TargetProbs {
		tp = "not " + tp
	}
	return st + ", " + ac + ", " + b + ", " + tp
}

// Merge adds o's statistics to s, as if o's episodes were added after
// s's. Both must have the same configuration.
func (s *Stats) Merge(o *Stats) error {
	if fmt.Sprint(s.cfg.Estimators) != fmt.Sprint(o.cfg.Estimators) || s.cfg.Gamma != o.cfg.Gamma ||
		s.cfg.Resamples != o.cfg.Resamples || s.cfg.Seed != o.cfg.Seed {
		return errors.New("stream: cannot merge statistics of different configurations")
	}
	if o.shape.Set {
		if err := s.checkShape(o.shape); err != nil {
			return err
		}
	}
	for k := range s.sums {
		switch {
		case s.errs[k] != "":
		case o.errs[k] != "":
			s.errs[k] = o.errs[k]
		case s.leader[k] >= 0: // merged with its leader's counts
		default:
			if err := s.sums[k].Merge(o.sums[k]); err != nil {
				return err
			}
		}
	}
	s.sum.Merge(&o.sum)
	return nil
}

// Estimate is one estimator's result over the stream.
type Estimate struct {
	Name string
	Unit ope.Unit
	// Result is the estimate (Weights nil), Weights what its weights
	// look like; Err, if not nil, why there is no estimate.
	Result  ope.Result
	Weights ope.WeightSummary
	Err     error
	// Interval is the Poisson bootstrap's (nil without resamples).
	Interval *ope.Interval
}

// Results are what Finish returns.
type Results struct {
	Estimates []Estimate
	// Summary describes the data; StateDim is 0 for discrete states.
	Summary  dataset.Summary
	StateDim int
	// Behavior reports whether the logs carry behavior probabilities.
	Behavior bool
	Config   Config
	// Warnings are Config.Notes, then what Finish left out: the
	// intervals of a single episode.
	Warnings []string
}

// OneEpisodeWarning is Results' warning for a stream of a
// single episode with resamples: no intervals.
const OneEpisodeWarning = "one episode: no intervals (the Poisson bootstrap resamples whole episodes, and one episode resampled is itself or nothing); log several episodes, or give the log as one file for the block bootstrap"

// Finish returns every estimator's estimate and, with resamples, its
// interval: the estimators' own final solves on the sums.
func (s *Stats) Finish() (*Results, error) {
	if s.sum.S.Episodes == 0 {
		return nil, errors.New("stream: no episodes")
	}
	out := &Results{Summary: s.sum.Summary(), StateDim: s.shape.StateDim, Behavior: s.shape.Behavior, Config: s.cfg,
		Warnings: slices.Clone(s.cfg.Notes)}
	B := s.cfg.Resamples
	if B > 0 && s.sum.S.Episodes < 2 && !s.blocked {
		out.Warnings = append(out.Warnings, OneEpisodeWarning)
		B = 0
	}
	for k, sm := range s.sums {
		en, _ := ope.Lookup(s.cfg.Estimators[k])
		est := Estimate{Name: en.Name, Unit: en.Unit}
		if s.errs[k] != "" {
			est.Err = errors.New(s.errs[k])
			out.Estimates = append(out.Estimates, est)
			continue
		}
		est.Result, est.Weights, est.Err = sm.Finish(0)
		if est.Err == nil && (math.IsNaN(est.Result.Value) || math.IsInf(est.Result.Value, 0)) {
			est.Err = fmt.Errorf("%s: the estimate is %v", en.Name, est.Result.Value)
		}
		if est.Err == nil && B > 0 {
			iv := ope.SumsInterval(en.Name, sm, B, s.cfg.Alpha)
			est.Interval = &iv
		}
		out.Estimates = append(out.Estimates, est)
	}
	return out, nil
}

// wire is the encoded form of Stats.
type wire struct {
	Config  json.RawMessage // Config as JSON, whole: every option travels (TestOptionsTravel)
	Shape   shape
	Errs    []string
	Sums    []json.RawMessage // JSON form only
	Summary wireSummary
}

// wireSummary is dataset.Summarizer with its floats in a form JSON
// keeps (infinities and NaN).
type wireSummary struct {
	S               dataset.Summary
	MeanReward      ope.Float
	MaxLogRatio     ope.Float
	FirstLargeRatio ope.Float
	States, Actions []bool
	MeanR, MaxLR    ope.Float
	MinR, MaxR      ope.Float
	TargetMass      [][]float64 `json:",omitempty"`
	Logged          [][]bool    `json:",omitempty"`
	TargetSteps     int         `json:",omitempty"`
	Started         bool
}

func (s *Stats) wire() (wire, error) {
	z := s.sum
	sum := wireSummary{S: z.S, MeanReward: ope.Float(z.S.MeanReward), MaxLogRatio: ope.Float(z.S.MaxLogRatio),
		FirstLargeRatio: ope.Float(z.S.FirstLarge.Ratio), States: z.States, Actions: z.Actions,
		MeanR: ope.Float(z.MeanR), MaxLR: ope.Float(z.MaxLR), MinR: ope.Float(z.MinR), MaxR: ope.Float(z.MaxR),
		TargetMass: z.TargetMass, Logged: z.Logged, TargetSteps: z.TargetSteps, Started: z.Started}
	sum.S.MeanReward, sum.S.MaxLogRatio, sum.S.FirstLarge.Ratio = 0, 0, 0
	cfg, err := encodeConfig(s.cfg)
	if err != nil {
		return wire{}, err
	}
	return wire{Config: cfg, Shape: s.shape, Errs: s.errs, Summary: sum}, nil
}

// encodeConfig encodes the configuration whole, as JSON: every option
// travels to the workers without a field copied by hand (ope.Options
// tags what cannot travel json:"-"; TestOptionsTravel checks the rest).
func encodeConfig(c Config) (json.RawMessage, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("stream: options: %w", err)
	}
	return b, nil
}

// decodeConfig decodes what encodeConfig encoded.
func decodeConfig(b json.RawMessage) (Config, error) {
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return Config{}, fmt.Errorf("stream: options: %w", err)
	}
	return c, nil
}

// fromWire rebuilds empty statistics of w's configuration, with its
// summary and errors.
func fromWire(w wire) (*Stats, error) {
	cfg, err := decodeConfig(w.Config)
	if err != nil {
		return nil, err
	}
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if len(w.Errs) != len(s.sums) {
		return nil, fmt.Errorf("stream: %d estimator errors for %d estimators", len(w.Errs), len(s.sums))
	}
	s.shape, s.errs = w.Shape, w.Errs
	z := &s.sum
	z.S, z.States, z.Actions, z.MeanR, z.MaxLR, z.Started = w.Summary.S, w.Summary.States, w.Summary.Actions,
		float64(w.Summary.MeanR), float64(w.Summary.MaxLR), w.Summary.Started
	z.S.MeanReward, z.S.MaxLogRatio = float64(w.Summary.MeanReward), float64(w.Summary.MaxLogRatio)
	z.S.FirstLarge.Ratio = float64(w.Summary.FirstLargeRatio)
	z.MinR, z.MaxR = float64(w.Summary.MinR), float64(w.Summary.MaxR)
	z.TargetMass, z.Logged, z.TargetSteps = w.Summary.TargetMass, w.Summary.Logged, w.Summary.TargetSteps
	return s, nil
}

// MarshalJSON encodes the statistics, every float exactly (infinities as
// strings, see ope.Floats).
func (s *Stats) MarshalJSON() ([]byte, error) {
	w, err := s.wire()
	if err != nil {
		return nil, err
	}
	for k := range s.sums {
		b, err := json.Marshal(s.wireSums(k))
		if err != nil {
			return nil, err
		}
		w.Sums = append(w.Sums, b)
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes what MarshalJSON encoded.
func (s *Stats) UnmarshalJSON(b []byte) error {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	t, err := fromWire(w)
	if err != nil {
		return err
	}
	if len(w.Sums) != len(t.sums) {
		return fmt.Errorf("stream: %d sums for %d estimators", len(w.Sums), len(t.sums))
	}
	for k, raw := range w.Sums {
		t.sums[k] = zero(t.sums[k])
		if err := json.Unmarshal(raw, t.sums[k]); err != nil {
			return fmt.Errorf("stream: %s: %w", t.cfg.Estimators[k], err)
		}
	}
	t.relink()
	*s = *t
	return nil
}

// MarshalBinary encodes the statistics with encoding/gob.
func (s *Stats) MarshalBinary() ([]byte, error) {
	w, err := s.wire()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := gob.NewEncoder(&buf)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	for k := range s.sums {
		if err := enc.Encode(s.wireSums(k)); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary decodes what MarshalBinary encoded.
func (s *Stats) UnmarshalBinary(b []byte) error {
	dec := gob.NewDecoder(bytes.NewReader(b))
	var w wire
	if err := dec.Decode(&w); err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	t, err := fromWire(w)
	if err != nil {
		return err
	}
	for k := range t.sums {
		t.sums[k] = zero(t.sums[k]) // gob leaves fields it does not send (zeros) as they are
		if err := dec.Decode(t.sums[k]); err != nil {
			return fmt.Errorf("stream: %s: %w", t.cfg.Estimators[k], err)
		}
	}
	t.relink()
	*s = *t
	return nil
}

// wireSums returns sums k as they are encoded: a follower's without the
// counts it shares with its leader (relink gives them back).
func (s *Stats) wireSums(k int) ope.Sums {
	if s.leader[k] < 0 {
		return s.sums[k]
	}
	v := reflect.New(reflect.TypeOf(s.sums[k]).Elem())
	v.Elem().Set(reflect.ValueOf(s.sums[k]).Elem())
	f := v.Interface().(ope.CountSums)
	f.SetCounts(nil)
	return f
}

// zero returns a new zero value of the sums' type.
func zero(s ope.Sums) ope.Sums {
	return reflect.New(reflect.TypeOf(s).Elem()).Interface().(ope.Sums)
}
