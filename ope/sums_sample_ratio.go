package ope

import (
	"errors"
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ratio"
)

// sampleRatio is bch-neural in SampleSums: a density-ratio learner that
// trains (an ensemble of networks). The first pass also keeps the
// largest log gamma^t beta (MaxLogQ), the second sums per network k and
// per copy sum_j q_j w_k(s_j) r_j and sum_j q_j w_k(s_j) (q_j = gamma^t
// beta_j exp(-MaxLogQ)): the ensemble's interquartile mean over networks
// (DensityRatio) and the estimate are ratios of these sums, as in
// memory. For copy 0 also the halves' sums (Result.Transient),
// sum_j q_j^2 w_k w_l (the Kish effective sample size, exact: w > 0), and
// for the largest weight the steps of largest q_j max_k w_k(s_j), exact
// for the 64 kept and bounded above by the next for the others.
type sampleRatio struct {
	name    string
	gamma   float64
	learner ratio.Learner
	maxLogQ float64
	// After the training.
	model          ratio.Model
	members        int
	n1, d1, n2, d2 []float64
	// halves is the sum over episodes of x x^T, x = the episode's own
	// (n1, d1, n2, d2) per member (4r entries, part-major): the second
	// moments of Result.TransientSE's delta method (halvesGap).
	halves     []float64
	x          []float64   // scratch: one unit's x
	ws         [][]float64 // every member's w at the steps prepare evaluated
	q2         []float64   // member x member
	logSteps   int
	topQ, topW []float64 // q and member ratios of the steps kept
	topB       []float64 // q max_k w_k of the steps kept
	outB       float64
}

func newSampleRatioSums(e DensityRatio, gamma float64, copies int) *SampleSums {
	name := e.Name()
	m := &sampleRatio{name: name, gamma: gamma, learner: e.Learner, maxLogQ: math.Inf(-1)}
	return newSampleSums(name, m, gamma, copies, e.Reservoir, e.SampleSeed)
}

func (s *sampleRatio) form() string { return s.name }

func (s *sampleRatio) first(d *dataset.Dataset, e int) error {
	if err := checkBehavior(s.name, d); err != nil {
		return err
	}
	lo, hi := d.Span(e)
	lg := math.Log(s.gamma)
	for j := lo; j < hi; j++ {
		s.maxLogQ = math.Max(s.maxLogQ, d.LogRatio(j)+float64(j-lo)*lg)
	}
	return nil
}

func (s *sampleRatio) mergeFirst(o sampleModel) {
	s.maxLogQ = math.Max(s.maxLogQ, o.(*sampleRatio).maxLogQ)
}

// fit trains the learner; the sums per copy are num_k then den_k.
func (s *sampleRatio) fit(d *dataset.Dataset) (int, int, error) {
	m, err := s.learner.Fit(d, s.gamma)
	if err != nil {
		return 0, 0, err
	}
	ns, nm := s.use(m)
	return ns, nm, nil
}

// use takes m as the trained model and returns the number of sums and
// maxima per copy.
func (s *sampleRatio) use(m ratio.Model) (int, int) {
	s.model = m
	s.members = 1
	if am, ok := m.(*ratio.EnsembleModel); ok {
		s.members = len(am.Members())
	}
	r := s.members
	s.n1, s.d1, s.n2, s.d2 = make([]float64, r), make([]float64, r), make([]float64, r), make([]float64, r)
	s.q2 = make([]float64, r*r)
	s.halves, s.x = make([]float64, 16*r*r), make([]float64, 4*r)
	return 2 * r, 0
}

// ratios returns every member's w at the steps of d (one member: the
// model's).
func (s *sampleRatio) ratios(d *dataset.Dataset) ([][]float64, error) {
	if am, ok := s.model.(ratio.Averaged); ok && s.members > 1 {
		_, ws, err := am.MemberRatios(d)
		return ws, err
	}
	w, err := s.model.StepRatios(d)
	return [][]float64{w}, err
}

func (s *sampleRatio) episode(d *dataset.Dataset, sum, max []float64) error {
	if err := s.prepare(d); err != nil {
		return err
	}
	s.steps(d, 0, d.NumSteps(), sum, max)
	return nil
}

// prepare evaluates every member at the steps of the one-episode d, for
// steps.
func (s *sampleRatio) prepare(d *dataset.Dataset) error {
	if err := checkBehavior(s.name, d); err != nil {
		return err
	}
	ws, err := s.ratios(d)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	s.ws = ws
	return nil
}

// steps adds steps [a, b) of the one-episode d, which prepare evaluated:
// to sum, and to the statistics of copy 0, where the delta method's
// second moments (halves) take the steps as one unit.
func (s *sampleRatio) steps(d *dataset.Dataset, a, b int, sum, _ []float64) {
	ws := s.ws
	r := s.members
	en, ed := sum[:r], sum[r:2*r]
	lg := math.Log(s.gamma)
	T := d.NumSteps()
	half := T / 2
	x := s.x // this unit's n1, d1, n2, d2 per member
	clear(x)
	for t := a; t < b; t++ {
		q := math.Exp(d.LogRatio(t) + float64(t)*lg - s.maxLogQ)
		rw := d.Reward[t]
		top := 0.0
		for k, w := range ws {
			v := q * w[t]
			en[k] += v * rw
			ed[k] += v
			switch {
			case t < half:
				x[k] += v * rw
				x[r+k] += v
			case t >= T-half:
				x[2*r+k] += v * rw
				x[3*r+k] += v
			}
			for l := k; l < r; l++ {
				s.q2[k*r+l] += v * q * ws[l][t]
			}
			top = math.Max(top, v)
		}
		s.keep(q, top, ws, t)
	}
	for k := range r {
		s.n1[k] += x[k]
		s.d1[k] += x[r+k]
		s.n2[k] += x[2*r+k]
		s.d2[k] += x[3*r+k]
	}
	for i, a := range x {
		for j, b := range x {
			s.halves[i*len(x)+j] += a * b
		}
	}
	s.logSteps += b - a
}

// keep offers a step (q, its largest member weight b = q max_k w_k) to
// the kernelTop steps of largest b.
func (s *sampleRatio) keep(q, b float64, ws [][]float64, t int) {
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

func (s *sampleRatio) mergeSecond(o sampleModel) error {
	t := o.(*sampleRatio)
	if t.model != s.model {
		return errors.New("cannot merge second passes of different trained models")
	}
	for _, f := range [][2][]float64{{s.n1, t.n1}, {s.d1, t.d1}, {s.n2, t.n2}, {s.d2, t.d2}, {s.q2, t.q2}, {s.halves, t.halves}} {
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

func (s *sampleRatio) finish(c int, sum, _ []float64, _ int64) (Result, WeightSummary, error) {
	name := s.name
	if math.IsInf(s.maxLogQ, -1) {
		return Result{}, WeightSummary{}, fmt.Errorf("every logged action has target probability 0")
	}
	r := s.members
	num, den := sum[:r], sum[r:2*r]
	own := make([]float64, r)
	for k := range r {
		if !(den[k] > 0) {
			if r == 1 {
				return Result{}, WeightSummary{}, fmt.Errorf("the learned weights sum to %v", den[k])
			}
			return Result{}, WeightSummary{}, fmt.Errorf("%s: restart %d: the learned weights sum to %v", name, k+1, den[k])
		}
		own[k] = num[k] / den[k]
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
	var n, dn float64
	for _, k := range keep {
		n += num[k]
		dn += den[k]
	}
	res := Result{Value: n / dn, Estimand: LongRun, Learner: s.learner.Name(), Model: m, Restarts: restarts}
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
			// halvesGap's delta method on the kept members' sums: the
			// influence of episode e is c . y_e, y_e its (n1, d1, n2, d2).
			c := [4]float64{1 / d1, -n1 / d1 / d1, -1 / d2, n2 / d2 / d2}
			coef := make([]float64, 4*r)
			for p, cp := range c {
				for _, k := range keep {
					coef[p*r+k] = cp
				}
			}
			ss := 0.0
			for i, a := range coef {
				for j, b := range coef {
					ss += a * s.halves[i*len(coef)+j] * b
				}
			}
			if ss > 0 {
				res.TransientSE = math.Sqrt(ss)
			}
		}
		ws.Units = s.logSteps
		if sq > 0 {
			ws.ESS = dn * dn / sq
		}
		top := s.outB // bounds q_j mean_keep w_k(s_j) for a step not kept
		for i, q := range s.topQ {
			v := 0.0
			for _, k := range keep {
				v += s.topW[i*r+k]
			}
			top = math.Max(top, q*v/float64(len(keep)))
		}
		ws.MaxShare = top / (dn / float64(len(keep)))
		if wr, ok := m.(ratio.Warner); ok {
			for _, w := range wr.Warnings() {
				res.Warnings = append(res.Warnings, name+": "+w)
			}
		}
	}
	return res, ws, nil
}
