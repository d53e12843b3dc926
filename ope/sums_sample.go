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

var _ TwoPassSums = (*SampleRatioSums)(nil)

// DefaultReservoir is the number of steps of the sample a stream trains
// bch-neural on when DensityRatio.Reservoir is 0.
const DefaultReservoir = 200_000

// sampleSalt separates the sample's keys from other uses of the seed.
const sampleSalt = 0x7265736572766f69 // "reservoi"

// episodeKey is the sampling key of the episode with the given id: a
// fixed hash of the seed and the id (poissonKey's FNV-1a, mixed again).
func episodeKey(seed uint64, id string) uint64 {
	return fmix64(poissonKey(seed, id) ^ sampleSalt)
}

// ReservoirEpisodes returns the episodes of d that a stream over d's
// episodes samples for a learner that trains (SampleRatioSums), in the
// order the sample holds them: the episodes of smallest key
// (episodeKey(seed, id), a fixed hash), in increasing order of key, up to
// the first whose steps bring the total to at least steps. Empty episodes
// are left out. The sample is a uniform draw of whole episodes without
// replacement, and the same whatever the order the episodes come in or
// how they are split among shards and machines.
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

// SampleRatioSums are the statistics of a density-ratio estimator whose
// learner trains a model (bch-neural: networks) and so cannot be summed:
// the first pass keeps a sample of whole episodes (ReservoirEpisodes:
// whole episodes, because the discounted loss starts every episode with
// a transition into its first state, and a step sampled alone would lose
// its episode's start and its t), and EndFirst trains the learner on it,
// the in-memory fit on that sample. The second pass evaluates the model
// at every step of the log and sums, per member of the ensemble and per
// copy, sum_j q_j w_k(s_j) r_j and sum_j q_j w_k(s_j) (q_j = gamma^t
// beta_j exp(-MaxLogQ), MaxLogQ the first pass's largest log gamma^t
// beta): the ensemble's interquartile mean over members (DensityRatio)
// and the estimate are ratios of these sums, as in memory. For copy 0
// also the halves' sums (Result.Transient), sum_j q_j^2 w_k w_l (the
// Kish effective sample size, exact: w > 0), and for the largest weight
// the steps of largest q_j max_k w_k(s_j), exact for the 64 kept and
// bounded above by the next for the others.
//
// The bootstrap copies keep the model trained on the sample (the
// in-memory bootstrap retrains on every resample): their interval is the
// evaluation's sampling spread, not the training's. The statistics hold
// a trained model, which has no encoding: they do not move between
// processes (MarshalBinary fails), so ihope-beam does not run these
// estimators.
type SampleRatioSums struct {
	gamma     float64
	reservoir int
	seed      uint64
	learner   ratio.Learner
	copies    int
	// First pass.
	sample  []sampledEpisode
	steps   int // in the sample
	maxLogQ float64
	// Second pass.
	model        ratio.Model
	members      int
	num, den     [][]float64 // copy x member
	n1, d1       []float64
	n2, d2       []float64
	q2           []float64 // member x member
	count        []int64
	logSteps     int
	topQ, topW   []float64 // q and member ratios of the steps kept
	topB         []float64 // q max_k w_k of the steps kept
	outB         float64
	sampleEps    int
	sampleLength int
}

func newSampleRatioSums(e DensityRatio, gamma float64, copies int) *SampleRatioSums {
	n := e.Reservoir
	if n <= 0 {
		n = DefaultReservoir
	}
	return &SampleRatioSums{gamma: gamma, reservoir: n, seed: e.SampleSeed, learner: e.Learner, copies: copies,
		maxLogQ: math.Inf(-1), count: make([]int64, copies)}
}

func (s *SampleRatioSums) name() string { return "bch-" + s.learner.Name() }

// FirstPass implements TwoPassSums.
func (s *SampleRatioSums) FirstPass() bool { return s.model == nil }

// AddFirst implements TwoPassSums: the episode joins the sample if its
// key is among the smallest.
func (s *SampleRatioSums) AddFirst(d *dataset.Dataset, e int) error {
	if s.model != nil {
		return fmt.Errorf("%s: the first pass has ended", s.name())
	}
	if err := checkBehavior(s.name(), d); err != nil {
		return err
	}
	lo, hi := d.Span(e)
	lg := math.Log(s.gamma)
	for j := lo; j < hi; j++ {
		s.maxLogQ = math.Max(s.maxLogQ, d.LogRatio(j)+float64(j-lo)*lg)
	}
	if hi == lo {
		return nil
	}
	s.offer(episodeKey(s.seed, d.IDs[e]), func() *dataset.Dataset { return d.Subset([]int{e}) }, hi-lo)
	return nil
}

// offer adds an episode of key and n steps to the sample if its key is
// among the smallest, then drops the largest keys the sample does not
// need (see ReservoirEpisodes).
func (s *SampleRatioSums) offer(key uint64, episode func() *dataset.Dataset, n int) {
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
func (s *SampleRatioSums) EndFirst() error {
	if s.model != nil {
		return nil
	}
	if len(s.sample) == 0 {
		return fmt.Errorf("%s: no episodes", s.name())
	}
	parts := make([]*dataset.Dataset, len(s.sample))
	for i, x := range s.sample {
		parts[i] = x.d
	}
	d, err := dataset.Concat(parts)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name(), err)
	}
	m, err := s.learner.Fit(d, s.gamma)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name(), err)
	}
	s.model, s.sample = m, nil
	s.sampleEps, s.sampleLength = len(parts), d.NumSteps()
	s.members = 1
	if am, ok := m.(*ratio.EnsembleModel); ok {
		s.members = len(am.Members())
	}
	r := s.members
	s.num, s.den = make([][]float64, s.copies), make([][]float64, s.copies)
	for c := range s.copies {
		s.num[c], s.den[c] = make([]float64, r), make([]float64, r)
	}
	s.n1, s.d1, s.n2, s.d2 = make([]float64, r), make([]float64, r), make([]float64, r), make([]float64, r)
	s.q2 = make([]float64, r*r)
	return nil
}

// ratios returns every member's w at the steps of d (one member: the
// model's).
func (s *SampleRatioSums) ratios(d *dataset.Dataset) ([][]float64, error) {
	if am, ok := s.model.(ratio.Averaged); ok && s.members > 1 {
		_, ws, err := am.MemberRatios(d)
		return ws, err
	}
	w, err := s.model.StepRatios(d)
	return [][]float64{w}, err
}

// Add implements Sums (the second pass).
func (s *SampleRatioSums) Add(d *dataset.Dataset, e int, mult []int) error {
	name := s.name()
	if s.model == nil {
		return fmt.Errorf("%s: the first pass has not ended (it trains the model the second pass evaluates)", name)
	}
	if err := checkBehavior(name, d); err != nil {
		return err
	}
	lo, hi := d.Span(e)
	T := hi - lo
	if T == 0 {
		return nil
	}
	ws, err := s.ratios(d.Subset([]int{e}))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	r := s.members
	en, ed := make([]float64, r), make([]float64, r)
	lg := math.Log(s.gamma)
	half := T / 2
	for t := range T {
		j := lo + t
		q := math.Exp(d.LogRatio(j) + float64(t)*lg - s.maxLogQ)
		rw := d.Reward[j]
		top := 0.0
		for k, w := range ws {
			v := q * w[t]
			en[k] += v * rw
			ed[k] += v
			switch {
			case t < half:
				s.n1[k] += v * rw
				s.d1[k] += v
			case t >= T-half:
				s.n2[k] += v * rw
				s.d2[k] += v
			}
			for l := k; l < r; l++ {
				s.q2[k*r+l] += v * q * ws[l][t]
			}
			top = math.Max(top, v)
		}
		s.keep(q, top, ws, t)
	}
	s.logSteps += T
	for c, k := range mult {
		if k == 0 {
			continue
		}
		s.count[c] += int64(k)
		fk := float64(k)
		for m := range r {
			s.num[c][m] += fk * en[m]
			s.den[c][m] += fk * ed[m]
		}
	}
	return nil
}

// keep offers a step (q, its largest member weight b = q max_k w_k) to
// the kernelTop steps of largest b.
func (s *SampleRatioSums) keep(q, b float64, ws [][]float64, t int) {
	r := s.members
	if len(s.topB) < kernelTop {
		s.topB, s.topQ = append(s.topB, b), append(s.topQ, q)
		for _, w := range ws {
			s.topW = append(s.topW, w[t])
		}
		return
	}
	m := 0
	for i, v := range s.topB {
		if v < s.topB[m] {
			m = i
		}
	}
	if b <= s.topB[m] {
		s.outB = math.Max(s.outB, b)
		return
	}
	s.outB = math.Max(s.outB, s.topB[m])
	s.topB[m], s.topQ[m] = b, q
	for k, w := range ws {
		s.topW[m*r+k] = w[t]
	}
}

// Merge implements Sums: samples with samples (first pass), and second
// passes of the same trained model.
func (s *SampleRatioSums) Merge(o Sums) error {
	name := s.name()
	t, ok := o.(*SampleRatioSums)
	if !ok || t.gamma != s.gamma || t.copies != s.copies || t.reservoir != s.reservoir || t.seed != s.seed {
		return fmt.Errorf("%s: cannot merge sums of another configuration", name)
	}
	if s.FirstPass() != t.FirstPass() {
		return fmt.Errorf("%s: cannot merge sums of the first pass with sums of the second", name)
	}
	if s.FirstPass() {
		for _, x := range t.sample {
			s.offer(x.key, func() *dataset.Dataset { return x.d }, x.d.NumSteps())
		}
		s.maxLogQ = math.Max(s.maxLogQ, t.maxLogQ)
		return nil
	}
	if t.model != s.model {
		return fmt.Errorf("%s: cannot merge second passes of different trained models", name)
	}
	for c := range s.copies {
		s.count[c] += t.count[c]
		for k := range s.members {
			s.num[c][k] += t.num[c][k]
			s.den[c][k] += t.den[c][k]
		}
	}
	for _, f := range [][2][]float64{{s.n1, t.n1}, {s.d1, t.d1}, {s.n2, t.n2}, {s.d2, t.d2}, {s.q2, t.q2}} {
		for i, v := range f[1] {
			f[0][i] += v
		}
	}
	s.logSteps += t.logSteps
	s.outB = math.Max(s.outB, t.outB)
	r := s.members
	for i, b := range t.topB {
		ws := make([][]float64, r)
		for k := range r {
			ws[k] = []float64{t.topW[i*r+k]}
		}
		s.keep(t.topQ[i], b, ws, 0)
	}
	return nil
}

// errNoEncoding is why SampleRatioSums do not move between processes.
var errNoEncoding = errors.New("its streamed statistics hold networks trained in this process, which have no encoding, so they cannot move between processes (ihope estimate --data runs it on one machine)")

// GobEncode refuses: see errNoEncoding.
func (s *SampleRatioSums) GobEncode() ([]byte, error) { return nil, errNoEncoding }

// GobDecode refuses: see errNoEncoding.
func (s *SampleRatioSums) GobDecode([]byte) error { return errNoEncoding }

// MarshalJSON refuses: see errNoEncoding.
func (s *SampleRatioSums) MarshalJSON() ([]byte, error) { return nil, errNoEncoding }

// UnmarshalJSON refuses: see errNoEncoding.
func (s *SampleRatioSums) UnmarshalJSON([]byte) error { return errNoEncoding }

// Finish implements Sums.
func (s *SampleRatioSums) Finish(c int) (Result, WeightSummary, error) {
	name := s.name()
	if s.model == nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: the first pass has not ended", name)
	}
	if s.count[c] == 0 {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: no episodes", name)
	}
	if math.IsInf(s.maxLogQ, -1) {
		return Result{}, WeightSummary{}, fmt.Errorf("every logged action has target probability 0")
	}
	r := s.members
	own := make([]float64, r)
	for k := range r {
		if !(s.den[c][k] > 0) {
			if r == 1 {
				return Result{}, WeightSummary{}, fmt.Errorf("the learned weights sum to %v", s.den[c][k])
			}
			return Result{}, WeightSummary{}, fmt.Errorf("%s: restart %d: the learned weights sum to %v", name, k+1, s.den[c][k])
		}
		own[k] = s.num[c][k] / s.den[c][k]
	}
	keep := []int{0}
	m := s.model
	var restarts []float64
	if em, ok := s.model.(*ratio.EnsembleModel); ok {
		restarts = own
		keep = middleHalf(own)
		if len(keep) < r {
			m = em.Subset(keep)
		}
	}
	var num, den float64
	for _, k := range keep {
		num += s.num[c][k]
		den += s.den[c][k]
	}
	res := Result{Value: num / den, Estimand: LongRun, Learner: s.learner.Name(), Model: m, Restarts: restarts}
	var ws WeightSummary
	if c == 0 {
		var n1, d1, n2, d2, sq float64
		for _, k := range keep {
			n1 += s.n1[k]
			d1 += s.d1[k]
			n2 += s.n2[k]
			d2 += s.d2[k]
			for _, l := range keep {
				sq += s.q2[min(k, l)*r+max(k, l)]
			}
		}
		res.Transient = math.NaN()
		if d1 > 0 && d2 > 0 {
			res.Transient = n1/d1 - n2/d2
		}
		ws.Units = s.logSteps
		if sq > 0 {
			ws.ESS = den * den / sq
		}
		top := s.outB // bounds q_j mean_keep w_k(s_j) for a step not kept
		for i, q := range s.topQ {
			v := 0.0
			for _, k := range keep {
				v += s.topW[i*r+k]
			}
			top = math.Max(top, q*v/float64(len(keep)))
		}
		ws.MaxShare = top / (den / float64(len(keep)))
		if wr, ok := m.(ratio.Warner); ok {
			for _, w := range wr.Warnings() {
				res.Warnings = append(res.Warnings, name+": "+w)
			}
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: trained on a sample of %d episodes (%d steps) drawn in the stream's first pass (--reservoir), evaluated on every step; its bootstrap copies keep that model", name, s.sampleEps, s.sampleLength))
	}
	return res, ws, nil
}
