package ope

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ratio"
)

var _ TwoPassSums = (*SampleSums)(nil)

// DefaultReservoir is the number of steps of the sample a stream trains
// a learner that trains (bch-neural, the neural forms of fqe, mwl,
// dualdice and mql) on when the estimator's Reservoir is 0.
const DefaultReservoir = 200_000

// sampleSalt separates the sample's keys from other uses of the seed.
const sampleSalt = 0x7265736572766f69 // "reservoi"

// episodeKey is the sampling key of the episode with the given id: a
// fixed hash of the seed and the id (poissonKey's FNV-1a, mixed again).
func episodeKey(seed uint64, id string) uint64 {
	return fmix64(poissonKey(seed, id) ^ sampleSalt)
}

// ReservoirEpisodes returns the episodes of d that a stream over d's
// episodes samples for a learner that trains (SampleSums), in the order
// the sample holds them: the episodes of smallest key (episodeKey(seed,
// id), a fixed hash), in increasing order of key, up to the first whose
// steps bring the total to at least steps. Empty episodes are left out.
// The sample is a uniform draw of whole episodes without replacement,
// and the same whatever the order the episodes come in or how they are
// split among shards and machines.
func ReservoirEpisodes(d *dataset.Dataset, seed uint64, steps int) []int {
	type ek struct {
		key uint64
		e   int
	}
	var all []ek
	for e := range d.NumEpisodes() {
		if d.Len(e) > 0 {
			all = append(all, ek{episodeKey(seed, d.IDs[e]), e})
		}
	}
	sort.Slice(all, func(a, b int) bool { return all[a].key < all[b].key })
	var out []int
	total := 0
	for _, x := range all {
		if total >= steps {
			break
		}
		out = append(out, x.e)
		total += d.Len(x.e)
	}
	return out
}

type sampledEpisode struct {
	key uint64
	d   *dataset.Dataset // the episode alone
}

// sampleModel is what a learner that trains plugs into SampleSums: its
// own statistics of the first pass (if any), the training on the sample,
// the evaluation of one episode, and the estimate from the per-copy sums.
type sampleModel interface {
	// form names the estimator in the form that streams this way
	// ("bch-neural", "fqe with the neural value learner", ...).
	form() string
	// first adds episode e of d to the model's own statistics of the
	// first pass (bch-neural: the largest log gamma^t beta), mergeFirst
	// merges another's.
	first(d *dataset.Dataset, e int) error
	mergeFirst(o sampleModel)
	// fit trains on the sample d and returns how many sums and maxima
	// per episode the second pass keeps per copy.
	fit(d *dataset.Dataset) (sums, maxima int, err error)
	// episode evaluates the trained model at every step of d, one whole
	// episode alone, and writes the episode's sums into sum and its
	// maxima (of quantities >= 0) into max, both zero on entry; the
	// statistics of copy 0 alone (which weighs every episode once) it
	// adds to its own fields.
	episode(d *dataset.Dataset, sum, max []float64) error
	// mergeSecond merges another's statistics of copy 0 (a second pass
	// of the same trained model).
	mergeSecond(o sampleModel) error
	// finish returns copy c's estimate from its sums and maxima over its
	// episodes.
	finish(c int, sum, max []float64, episodes int64) (Result, WeightSummary, error)
}

// blockModel is a sampleModel whose sums are sums over steps, so that an
// episode's blocks can be summed apart (SampleSums.AddBlocks): prepare
// evaluates the model at every step of the one-episode d, steps adds
// steps [a, b) of it as episode adds a whole episode.
type blockModel interface {
	sampleModel
	prepare(d *dataset.Dataset) error
	steps(d *dataset.Dataset, a, b int, sum, max []float64)
}

// SampleSums are the statistics of an estimator whose learner trains a
// model (networks) and so cannot be summed: bch-neural, and the neural
// forms of fqe (--value-model neural), mwl and dualdice (--ratio-model
// neural) and mql (--value-model neural). The first pass keeps a sample
// of whole episodes (ReservoirEpisodes: whole episodes, because the
// learners' losses start every episode at its first state — the
// discounted losses weigh step t by gamma^t, the value and pair-ratio
// losses draw their start states from the episodes' first — and a step
// sampled alone would lose its episode's start and its t), and EndFirst
// trains the learner on it as a dataset: the in-memory fit on that
// sample. The second pass evaluates the model at every step of the log
// and keeps, per copy, the sums (and maxima) of the in-memory
// estimator's final formula with that model, so that Finish gives the
// in-memory estimate of the model fitted on the sample and evaluated on
// the whole log: for bch-neural sum q w_k r and sum q w_k per network
// (sampleRatio), for mwl and dualdice sum w r, sum w and the number of
// transitions (samplePair), for fqe and mql sum g0 v(s_0) with the
// maxima that the bound on a diverged model needs (sampleValue).
//
// The bootstrap copies keep the model trained on the sample (as the
// in-memory bootstrap keeps its model, FittedSums, unless --refit): their
// interval is the evaluation's sampling spread, not the fit's. The statistics hold
// a trained model, which has no encoding: they do not move between
// processes (MarshalBinary fails), so ihope-beam does not run these
// estimators.
type SampleSums struct {
	name      string
	gamma     float64
	reservoir int
	seed      uint64
	copies    int
	model     sampleModel
	// First pass.
	sample []sampledEpisode
	steps  int // in the sample
	// Second pass.
	trained                 bool
	sum, max                [][]float64 // copy x the model's per-episode sums, maxima
	count                   []int64     // episodes, per copy
	epSum, epMax            []float64
	sampleEps, sampleLength int
}

// newSampleSums returns empty sums of the estimator name whose learner
// m trains, on a sample of about reservoir steps (DefaultReservoir if
// not positive) drawn with seed.
func newSampleSums(name string, m sampleModel, gamma float64, copies, reservoir int, seed uint64) *SampleSums {
	if reservoir <= 0 {
		reservoir = DefaultReservoir
	}
	return &SampleSums{name: name, gamma: gamma, reservoir: reservoir, seed: seed, copies: copies, model: m,
		count: make([]int64, copies)}
}

// Form names the estimator in the form whose sums these are, for
// messages: "bch-neural", "fqe with the neural value learner", "mwl in
// its neural form", ...
func (s *SampleSums) Form() string { return s.model.form() }

// FirstPass implements TwoPassSums.
func (s *SampleSums) FirstPass() bool { return !s.trained }

// AddFirst implements TwoPassSums: the episode joins the sample if its
// key is among the smallest.
func (s *SampleSums) AddFirst(d *dataset.Dataset, e int) error {
	if s.trained {
		return fmt.Errorf("%s: the first pass has ended", s.name)
	}
	if err := s.model.first(d, e); err != nil {
		return err
	}
	lo, hi := d.Span(e)
	if hi == lo {
		return nil
	}
	s.offer(episodeKey(s.seed, d.IDs[e]), func() *dataset.Dataset { return d.Subset([]int{e}) }, hi-lo)
	return nil
}

// offer adds an episode of key and n steps to the sample if its key is
// among the smallest, then drops the largest keys the sample does not
// need (see ReservoirEpisodes).
func (s *SampleSums) offer(key uint64, episode func() *dataset.Dataset, n int) {
	k := len(s.sample)
	if s.steps >= s.reservoir && k > 0 && key > s.sample[k-1].key {
		return
	}
	i := sort.Search(k, func(i int) bool { return s.sample[i].key > key })
	s.sample = slices.Insert(s.sample, i, sampledEpisode{key, episode()})
	s.steps += n
	for len(s.sample) > 1 {
		last := s.sample[len(s.sample)-1]
		if s.steps-last.d.NumSteps() < s.reservoir {
			break
		}
		s.steps -= last.d.NumSteps()
		s.sample = s.sample[:len(s.sample)-1]
	}
}

// EndFirst implements TwoPassSums: it trains the learner on the sample.
func (s *SampleSums) EndFirst() error {
	if s.trained {
		return nil
	}
	if len(s.sample) == 0 {
		return fmt.Errorf("%s: no episodes", s.name)
	}
	parts := make([]*dataset.Dataset, len(s.sample))
	for i, x := range s.sample {
		parts[i] = x.d
	}
	d, err := dataset.Concat(parts)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	ns, nm, err := s.model.fit(d)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	s.sampleEps, s.sampleLength = len(parts), d.NumSteps()
	s.endWith(ns, nm)
	return nil
}

// endWith ends the first pass of a model trained with ns sums and nm
// maxima per copy.
func (s *SampleSums) endWith(ns, nm int) {
	s.trained, s.sample = true, nil
	s.sum, s.max = make([][]float64, s.copies), make([][]float64, s.copies)
	for c := range s.copies {
		s.sum[c], s.max[c] = make([]float64, ns), make([]float64, nm)
	}
	s.epSum, s.epMax = make([]float64, ns), make([]float64, nm)
}

// FittedSums returns the second pass's statistics of the model the
// estimator fitted on all of d in res (Estimate's Result) with the given
// copies, ready for Add or AddBlocks over d's episodes: the bootstrap
// that keeps the in-memory fit and resamples only its evaluation (the
// stream's SampleSums, trained on the whole log rather than a sample).
// It reports false for an estimator whose learner does not train
// (its sums refit the final solve on every copy, which costs little) or
// for a Result without its fitted model.
//
// bch-kernel does not train, but a fit with a value test (DensityRatio's
// ValueTest) has a fitted value its sums need: for it FittedSums returns
// its KernelRatioSums after the first pass over d, the value test added
// to the features (ratio.KernelFeatures.WithValue), so that every copy
// re-solves the loss the estimate solved, the features and the value
// fixed by the whole log.
func FittedSums(est Estimator, res Result, d *dataset.Dataset, gamma float64, copies int) (Sums, bool, error) {
	e, ok := est.(DensityRatio)
	if !ok || res.fitted == nil {
		return nil, false, nil
	}
	if kt, ok := res.fitted.(*kernelTest); ok {
		return kernelTestedSums(e, kt, d, gamma, copies)
	}
	m, ok := res.fitted.(ratio.Model)
	if !ok {
		return nil, false, nil
	}
	if err := checkSumsArgs(e.Name(), gamma, copies); err != nil {
		return nil, false, err
	}
	s := newSampleRatioSums(e, gamma, copies)
	sr := s.model.(*sampleRatio)
	for ep := range d.NumEpisodes() {
		if err := sr.first(d, ep); err != nil {
			return nil, false, err
		}
	}
	ns, nm := sr.use(m)
	s.sampleEps, s.sampleLength = d.NumEpisodes(), d.NumSteps()
	s.endWith(ns, nm)
	return s, true, nil
}

// Add implements Sums (the second pass): the model's sums and maxima of
// the episode, added to every copy k times (k its multiplicity there).
func (s *SampleSums) Add(d *dataset.Dataset, e int, mult []int) error {
	if !s.trained {
		return fmt.Errorf("%s: the first pass has not ended (it trains the model the second pass evaluates)", s.name)
	}
	if d.Len(e) == 0 {
		return nil
	}
	clear(s.epSum)
	clear(s.epMax)
	if err := s.model.episode(d.Subset([]int{e}), s.epSum, s.epMax); err != nil {
		return err
	}
	s.addCopies(mult)
	return nil
}

// AddBlocks implements BlockSums for the models that can sum an
// episode's blocks (bch-neural's); the others fail.
func (s *SampleSums) AddBlocks(d *dataset.Dataset, e, length int, mult func(b int) []int) error {
	bm, ok := s.model.(blockModel)
	if !ok {
		return fmt.Errorf("%s: its statistics cannot be cut into blocks of an episode", s.model.form())
	}
	if !s.trained {
		return fmt.Errorf("%s: the first pass has not ended (it trains the model the second pass evaluates)", s.name)
	}
	if length <= 0 {
		return fmt.Errorf("%s: blocks of %d steps", s.name, length)
	}
	sub := d.Subset([]int{e})
	T := sub.NumSteps()
	if T == 0 {
		return nil
	}
	if err := bm.prepare(sub); err != nil {
		return err
	}
	for b, a := 0, 0; a < T; b, a = b+1, a+length {
		clear(s.epSum)
		clear(s.epMax)
		bm.steps(sub, a, min(a+length, T), s.epSum, s.epMax)
		s.addCopies(mult(b))
	}
	return nil
}

// addCopies adds the unit's sums and maxima (epSum, epMax) to every copy
// c mult[c] times.
func (s *SampleSums) addCopies(mult []int) {
	for c, k := range mult {
		if k == 0 {
			continue
		}
		s.count[c] += int64(k)
		fk := float64(k)
		for i, v := range s.epSum {
			s.sum[c][i] += fk * v
		}
		for i, v := range s.epMax {
			s.max[c][i] = math.Max(s.max[c][i], v)
		}
	}
}

// Merge implements Sums: samples with samples (first pass), and second
// passes of the same trained model.
func (s *SampleSums) Merge(o Sums) error {
	t, ok := o.(*SampleSums)
	if !ok || t.name != s.name || t.gamma != s.gamma || t.copies != s.copies || t.reservoir != s.reservoir || t.seed != s.seed {
		return fmt.Errorf("%s: cannot merge sums of another configuration", s.name)
	}
	if s.FirstPass() != t.FirstPass() {
		return fmt.Errorf("%s: cannot merge sums of the first pass with sums of the second", s.name)
	}
	if s.FirstPass() {
		for _, x := range t.sample {
			s.offer(x.key, func() *dataset.Dataset { return x.d }, x.d.NumSteps())
		}
		s.model.mergeFirst(t.model)
		return nil
	}
	if err := s.model.mergeSecond(t.model); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	for c := range s.copies {
		s.count[c] += t.count[c]
		for i, v := range t.sum[c] {
			s.sum[c][i] += v
		}
		for i, v := range t.max[c] {
			s.max[c][i] = math.Max(s.max[c][i], v)
		}
	}
	return nil
}

// errNoEncoding is why SampleSums do not move between processes.
var errNoEncoding = errors.New("its streamed statistics hold networks trained in this process, which have no encoding, so they cannot move between processes (ihope estimate --data runs it on one machine)")

// GobEncode refuses: see errNoEncoding.
func (s *SampleSums) GobEncode() ([]byte, error) { return nil, errNoEncoding }

// GobDecode refuses: see errNoEncoding.
func (s *SampleSums) GobDecode([]byte) error { return errNoEncoding }

// MarshalJSON refuses: see errNoEncoding.
func (s *SampleSums) MarshalJSON() ([]byte, error) { return nil, errNoEncoding }

// UnmarshalJSON refuses: see errNoEncoding.
func (s *SampleSums) UnmarshalJSON([]byte) error { return errNoEncoding }

// Finish implements Sums.
func (s *SampleSums) Finish(c int) (Result, WeightSummary, error) {
	if !s.trained {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: the first pass has not ended", s.name)
	}
	if s.count[c] == 0 {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: no episodes", s.name)
	}
	res, ws, err := s.model.finish(c, s.sum[c], s.max[c], s.count[c])
	if err != nil {
		return Result{}, WeightSummary{}, err
	}
	if c == 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: trained on a sample of %d episodes (%d steps) drawn in the stream's first pass (--reservoir), evaluated on every step; its bootstrap copies keep that model", s.name, s.sampleEps, s.sampleLength))
	}
	return res, ws, nil
}

// kernelTestedSums is FittedSums of a bch-kernel fit with the value test
// kt: its sums after the first pass over d, with the test.
func kernelTestedSums(e DensityRatio, kt *kernelTest, d *dataset.Dataset, gamma float64, copies int) (Sums, bool, error) {
	l, ok := e.Learner.(ratio.Kernel)
	if !ok {
		return nil, false, nil
	}
	if err := checkSumsArgs(e.Name(), gamma, copies); err != nil {
		return nil, false, err
	}
	s, err := newKernelRatioSums(l, gamma, copies)
	if err != nil {
		return nil, false, err
	}
	s.test = kt
	for ep := range d.NumEpisodes() {
		if err := s.AddFirst(d, ep); err != nil {
			return nil, false, err
		}
	}
	if err := s.EndFirst(); err != nil {
		return nil, false, err
	}
	return s, true, nil
}
