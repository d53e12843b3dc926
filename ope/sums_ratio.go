package ope

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ratio"
)

var _ Summer = DensityRatio{}

// RatioSums are bch-tabular's statistics: the tabular problem aggregated
// by state (ratio.Counts: the (s, s') edge weights, Norm and Restart, as
// ratio.Aggregate forms them) and, for the estimate, per state s the sums
// A[s] = sum_j q_j r_j and B[s] = sum_j q_j over the steps at s, with
// q_j = gamma^t beta_j exp(-MaxQ) and MaxQ the running maximum of
// log(gamma^t beta_j). Then R = sum_s w(s) A[s] / sum_s w(s) B[s], so the
// estimate needs one pass: Finish solves for w with the learner's own
// Solve, the in-memory estimator's solver, and weighs the sums.
//
// Edges keeps each (s, s') pair's first appearance, so that Finish orders
// them as ratio.Aggregate does (by s, then by first appearance): copy 0
// gives exactly the in-memory Counts, and copy c the Counts the
// bootstrap's fast path forms (ratio.Reweighting).
type RatioSums struct {
	Gamma   float64
	Learner ratio.Tabular
	// NumStates is one more than the largest state id seen.
	NumStates int
	// Edges are the (s, s') pairs as From<<32 | To, in order of first
	// appearance; Weight[c][k] and RatioWeight[c][k] their sums in copy c.
	Edges               []uint64
	Weight, RatioWeight []Floats
	// Norm[c][s], Restart[c][s] (gamma < 1) are ratio.Counts's.
	Norm, Restart []Floats
	MaxQ          Float
	A, B          []Floats
	// Over the data: Q2[s] and QMax[s], the sum of squares and the
	// largest q_j at s (the effective sample size), and the halves'
	// sums of Result.Transient.
	Q2, QMax        Floats
	A1, B1, A2, B2  Floats
	Count           []int64 // episodes, per copy
	Episodes, Steps int
	index           map[uint64]int32
	lq, stepBuf     []float64
	edgeOf          []int32
}

// NewSums implements Summer: for the tabular learner RatioSums (one
// pass), for the kernel learner KernelRatioSums (two passes: its features
// are fixed by the whole log), and for a learner that trains (bch-neural)
// SampleSums (two passes: it trains on a sample of episodes drawn in
// the first and is evaluated on every step in the second).
func (e DensityRatio) NewSums(gamma float64, copies int) (Sums, error) {
	name := e.Name()
	if err := checkSumsArgs(name, gamma, copies); err != nil {
		return nil, err
	}
	if k, ok := e.Learner.(ratio.Kernel); ok {
		return newKernelRatioSums(k, gamma, copies)
	}
	l, ok := e.Learner.(ratio.Tabular)
	if !ok {
		return newSampleRatioSums(e, gamma, copies), nil
	}
	s := &RatioSums{Gamma: gamma, Learner: l, MaxQ: Float(math.Inf(-1)), Count: make([]int64, copies)}
	for _, p := range []*[]Floats{&s.Weight, &s.RatioWeight, &s.Norm, &s.A, &s.B} {
		*p = make([]Floats, copies)
	}
	if gamma < 1 {
		s.Restart = make([]Floats, copies)
	}
	return s, nil
}

// states grows the per-state arrays to n states.
func (s *RatioSums) states(n int) {
	if n <= s.NumStates {
		return
	}
	s.NumStates = n
	for _, p := range [][]Floats{s.Norm, s.Restart, s.A, s.B} {
		for c := range p {
			p[c] = p[c].grow(n)
		}
	}
	for _, p := range []*Floats{&s.Q2, &s.QMax, &s.A1, &s.B1, &s.A2, &s.B2} {
		*p = p.grow(n)
	}
}

// edge returns the index of the pair (from, to), adding it if new.
func (s *RatioSums) edge(from, to int32) int32 {
	if s.index == nil {
		s.index = make(map[uint64]int32, len(s.Edges))
		for k, key := range s.Edges {
			s.index[key] = int32(k)
		}
	}
	key := uint64(from)<<32 | uint64(uint32(to))
	if k, ok := s.index[key]; ok {
		return k
	}
	k := int32(len(s.Edges))
	s.Edges = append(s.Edges, key)
	s.index[key] = k
	for c := range s.Weight {
		s.Weight[c] = append(s.Weight[c], 0)
		s.RatioWeight[c] = append(s.RatioWeight[c], 0)
	}
	return k
}

// Add implements Sums. Its checks are ratio.Aggregate's.
func (s *RatioSums) Add(d *dataset.Dataset, e int, mult []int) error {
	const name = "bch-tabular"
	if err := checkBehavior(name, d); err != nil {
		return err
	}
	if !d.Discrete() {
		return fmt.Errorf("%s: ratio: the tabular learner needs discrete states", name)
	}
	lo, hi := d.Span(e)
	if hi == lo {
		return nil
	}
	s.states(d.NumStates)
	s.Episodes++
	s.Steps += hi - lo
	gamma := s.Gamma
	lg := math.Log(gamma)
	// Pass 1: the edges and log q of every step, and the episode's
	// largest log q.
	n := hi - lo
	if cap(s.lq) < n {
		s.lq = make([]float64, n)
		s.edgeOf = make([]int32, n)
	}
	lq, edgeOf := s.lq[:n], s.edgeOf[:n]
	top := math.Inf(-1)
	for j := lo; j < hi; j++ {
		t := j - lo
		edgeOf[t] = -1
		if next, ok := d.NextState(e, j); ok {
			lt, lb := d.LogTarget[j], d.LogBehavior[j]
			lr := lt - lb
			if math.IsNaN(lr) || math.IsInf(lb, 0) || math.IsInf(math.Exp(lr), 1) {
				return fmt.Errorf("%s: ratio: episode %q step %d: log-probabilities %v (target), %v (behavior) give no finite ratio",
					name, d.IDs[e], t, lt, lb)
			}
			s.states(next + 1)
			edgeOf[t] = s.edge(d.State[j], int32(next))
		}
		lq[t] = d.LogRatio(j) + float64(t)*lg
		top = math.Max(top, lq[t])
	}
	if top > float64(s.MaxQ) {
		old := float64(s.MaxQ)
		var all []Floats
		all = append(append(all, s.A...), s.B...)
		all = append(all, s.A1, s.B1, s.A2, s.B2, s.QMax)
		raise(&s.MaxQ, top, all...)
		if !math.IsInf(old, -1) {
			f := math.Exp(old - top)
			for i := range s.Q2 {
				s.Q2[i] *= f * f
			}
		}
	}
	// Per step, once for all copies: q_j, gamma^(t+1), gamma^(t+1) beta_j.
	if cap(s.stepBuf) < 3*n {
		s.stepBuf = make([]float64, 3*n)
	}
	qs, rho, rhoBeta := s.stepBuf[:n], s.stepBuf[n:2*n], s.stepBuf[2*n:3*n]
	g := 1.0 // gamma^t
	half := n / 2
	// An absorbing state kept for ever weighs its whole discounted tail
	// at the episode's last step (Dataset.DiscountTail, as
	// ratio.Aggregate and the estimate's weights count it).
	tail := d.DiscountTail(e, gamma)
	for j := lo; j < hi; j++ {
		t, st := j-lo, d.State[j]
		g1 := g * gamma
		rho[t], rhoBeta[t] = g1, g1*math.Exp(d.LogTarget[j]-d.LogBehavior[j])
		q := 0.0
		if !math.IsInf(lq[t], -1) {
			q = math.Exp(lq[t] - float64(s.MaxQ))
		}
		if t == n-1 {
			q *= tail
		}
		qs[t] = q
		s.Q2[st] += q * q
		s.QMax[st] = math.Max(s.QMax[st], q)
		switch {
		case t < half:
			s.A1[st] += q * d.Reward[j]
			s.B1[st] += q
		case t >= n-half:
			s.A2[st] += q * d.Reward[j]
			s.B2[st] += q
		}
		g = g1
	}
	for c, k := range mult {
		if k == 0 {
			continue
		}
		s.Count[c] += int64(k)
		fk := float64(k)
		norm, wt, rw, a, b := s.Norm[c], s.Weight[c], s.RatioWeight[c], s.A[c], s.B[c]
		if s.Restart != nil {
			s.Restart[c][d.State[lo]] += fk
		}
		g := 1.0 // gamma^t
		for j := lo; j < hi; j++ {
			t, st := j-lo, d.State[j]
			if t == n-1 {
				norm[st] += fk * g * tail
			} else {
				norm[st] += fk * g
			}
			if ed := edgeOf[t]; ed >= 0 {
				wt[ed] += fk * rho[t]
				rw[ed] += fk * rhoBeta[t]
			}
			g = rho[t]
			a[st] += fk * qs[t] * d.Reward[j]
			b[st] += fk * qs[t]
		}
	}
	return nil
}

// Merge implements Sums.
func (s *RatioSums) Merge(o Sums) error {
	t, err := mergeCheck("bch-tabular", o, s.Gamma, len(s.Count), func(t *RatioSums) (float64, int) { return t.Gamma, len(t.Count) })
	if err != nil {
		return err
	}
	if t.Learner != s.Learner {
		return fmt.Errorf("bch-tabular: cannot merge sums of learner settings %+v into %+v", t.Learner, s.Learner)
	}
	s.states(t.NumStates)
	old := float64(s.MaxQ)
	var all []Floats
	all = append(append(all, s.A...), s.B...)
	all = append(all, s.A1, s.B1, s.A2, s.B2, s.QMax)
	raise(&s.MaxQ, float64(t.MaxQ), all...)
	if f := shiftFactor(Float(old), s.MaxQ); old != float64(s.MaxQ) {
		for i := range s.Q2 {
			s.Q2[i] *= f * f
		}
	}
	f := shiftFactor(t.MaxQ, s.MaxQ)
	for k, key := range t.Edges {
		j := s.edge(int32(key>>32), int32(uint32(key)))
		for c := range s.Weight {
			s.Weight[c][j] += t.Weight[c][k]
			s.RatioWeight[c][j] += t.RatioWeight[c][k]
		}
	}
	for c := range s.Count {
		s.Count[c] += t.Count[c]
		for i := range t.Norm[c] {
			s.Norm[c][i] += t.Norm[c][i]
			s.A[c][i] += t.A[c][i] * f
			s.B[c][i] += t.B[c][i] * f
			if s.Restart != nil {
				s.Restart[c][i] += t.Restart[c][i]
			}
		}
	}
	for i := range t.Q2 {
		s.Q2[i] += t.Q2[i] * f * f
		s.QMax[i] = math.Max(s.QMax[i], t.QMax[i]*f)
		s.A1[i] += t.A1[i] * f
		s.B1[i] += t.B1[i] * f
		s.A2[i] += t.A2[i] * f
		s.B2[i] += t.B2[i] * f
	}
	s.Episodes += t.Episodes
	s.Steps += t.Steps
	return nil
}

// Counts returns copy c's tabular problem, edges ordered as
// ratio.Aggregate orders them (and, for c >= 1, without the pairs the
// resample does not contain, as ratio.Reweighting leaves them out).
func (s *RatioSums) Counts(c int) *ratio.Counts {
	// A stable counting sort by From keeps first appearance within each.
	pos := make([]int, s.NumStates+1)
	for _, key := range s.Edges {
		pos[key>>32+1]++
	}
	for i := range s.NumStates {
		pos[i+1] += pos[i]
	}
	order := make([]int, len(s.Edges))
	for k, key := range s.Edges {
		order[pos[key>>32]] = k
		pos[key>>32]++
	}
	out := &ratio.Counts{NumStates: s.NumStates, Norm: s.Norm[c], Edges: make([]ratio.Edge, 0, len(order))}
	if s.Restart != nil {
		out.Restart = s.Restart[c]
	}
	for _, k := range order {
		if c > 0 && s.Weight[c][k] == 0 {
			continue
		}
		out.Edges = append(out.Edges, ratio.Edge{From: int(s.Edges[k] >> 32), To: int(uint32(s.Edges[k])),
			Weight: s.Weight[c][k], RatioWeight: s.RatioWeight[c][k]})
	}
	return out
}

// Finish implements Sums: Solve on copy c's counts, then the weighted
// sums.
func (s *RatioSums) Finish(c int) (Result, WeightSummary, error) {
	const name = "bch-tabular"
	if s.Count[c] == 0 {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: no episodes", name)
	}
	m, err := s.Learner.Solve(s.Counts(c))
	if err != nil {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: %w", name, err)
	}
	if math.IsInf(float64(s.MaxQ), -1) {
		return Result{}, WeightSummary{}, fmt.Errorf("every logged action has target probability 0")
	}
	var num, den float64
	for st, w := range m.W {
		num += w * s.A[c][st]
		den += w * s.B[c][st]
	}
	if !(den > 0) {
		return Result{}, WeightSummary{}, fmt.Errorf("the learned weights sum to %v", den)
	}
	res := Result{Value: num / den, Estimand: LongRun, Learner: s.Learner.Name(), Model: m}
	var ws WeightSummary
	if c == 0 {
		var n1, d1, n2, d2, abs, sq, top float64
		for st, w := range m.W {
			n1 += w * s.A1[st]
			d1 += w * s.B1[st]
			n2 += w * s.A2[st]
			d2 += w * s.B2[st]
			abs += math.Abs(w) * s.B[0][st]
			// (|w| sqrt(Q2))^2, not w^2 Q2: on long discounted episodes a
			// state seen only late has Q2 ~ gamma^2t near underflow and w
			// near overflow, and w^2 Q2 was Inf * 0 = NaN (the ESS
			// vanished and a false "every weight is 0" warning came).
			r := math.Abs(w) * math.Sqrt(s.Q2[st])
			sq += r * r
			top = math.Max(top, math.Abs(w)*s.QMax[st])
		}
		res.Transient = math.NaN()
		if d1 > 0 && d2 > 0 {
			res.Transient = n1/d1 - n2/d2
		}
		ws.Units = s.Steps
		if sq > 0 {
			ws.ESS, ws.MaxShare = abs*abs/sq, top/abs
		}
		for _, w := range m.Warnings() {
			res.Warnings = append(res.Warnings, name+": "+w)
		}
		if w := earlyStepsWarning(name, "the estimate", s.Episodes, s.Gamma); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	}
	return res, ws, nil
}

// unitWeights implements unitWeigher: the per-step weights
// v_j = w(s_j) q_j / sum_k w(s_k) q_k of the estimate, with w the ratio
// res.Model copy 0 solved for (the steps' q_j formed again, as Add forms
// them).
func (s *RatioSums) unitWeights(d *dataset.Dataset, res Result) ([]float64, Unit, error) {
	m, ok := res.Model.(*ratio.TabularModel)
	if !ok {
		return nil, UnitStep, fmt.Errorf("bch-tabular: finished with a model of type %T", res.Model)
	}
	den := 0.0
	for st, w := range m.W {
		den += w * s.B[0][st]
	}
	lg := math.Log(s.Gamma)
	v := make([]float64, d.NumSteps())
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo; j < hi; j++ {
			lq := d.LogRatio(j) + float64(j-lo)*lg
			if math.IsInf(lq, -1) {
				continue
			}
			q := math.Exp(lq - float64(s.MaxQ))
			if j == hi-1 {
				q *= d.DiscountTail(e, s.Gamma)
			}
			v[j] = m.W[d.State[j]] * q / den
		}
	}
	return v, UnitStep, nil
}
