package ope

import (
	"errors"
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
)

// This file holds the sufficient statistics of naive averaging and of the
// importance-sampling estimators (Summer, Sums). Sums of exponentials
// share one shift per quantity across the copies, the running maximum of
// the data's log-terms (copy 0 sees every episode, so its maximum bounds
// every resample's); a resample whose terms all underflow against it
// fails, as the in-memory bootstrap's fast path does before it refits.

var (
	_ Summer = (*Naive)(nil)
	_ Summer = (*TrajectoryIS)(nil)
	_ Summer = (*TrajectoryWIS)(nil)
	_ Summer = (*StepwiseIS)(nil)
	_ Summer = (*StepwiseWIS)(nil)
)

// NaiveSums are naive averaging's statistics: per copy, the sum of the
// episodes' normalised discounted rewards V_i and their number.
type NaiveSums struct {
	Gamma float64
	Sum   Floats  // sum_i k_i V_i, per copy
	Count []int64 // sum_i k_i, per copy
}

// NewSums implements Summer.
func (e *Naive) NewSums(gamma float64, copies int) (Sums, error) {
	if err := checkSumsArgs(e.Name(), gamma, copies); err != nil {
		return nil, err
	}
	return &NaiveSums{Gamma: gamma, Sum: make(Floats, copies), Count: make([]int64, copies)}, nil
}

// Add implements Sums.
func (s *NaiveSums) Add(d *dataset.Dataset, e int, mult []int) error {
	if d.Len(e) == 0 {
		return fmt.Errorf("naive: episode %q has no steps", d.IDs[e])
	}
	v, err := episodeValue("naive", d, e, s.Gamma)
	if err != nil {
		return err
	}
	for c, k := range mult {
		if k != 0 {
			s.Sum[c] += float64(k) * v
			s.Count[c] += int64(k)
		}
	}
	return nil
}

// Merge implements Sums.
func (s *NaiveSums) Merge(o Sums) error {
	t, err := mergeCheck("naive", o, s.Gamma, len(s.Sum), func(t *NaiveSums) (float64, int) { return t.Gamma, len(t.Sum) })
	if err != nil {
		return err
	}
	for c := range s.Sum {
		s.Sum[c] += t.Sum[c]
		s.Count[c] += t.Count[c]
	}
	return nil
}

// Finish implements Sums.
func (s *NaiveSums) Finish(c int) (Result, WeightSummary, error) {
	m := s.Count[c]
	if m == 0 {
		return Result{}, WeightSummary{}, fmt.Errorf("naive: no episodes")
	}
	ws := WeightSummary{ESS: float64(m), Units: int(m), MaxShare: 1 / float64(m)}
	return Result{Value: s.Sum[c] / float64(m), Estimand: Horizon}, ws, nil
}

// TrajectorySums are trajectory-wise IS's and WIS's statistics (WIS
// says which): with L_i the log trajectory weight and V_i the normalised
// discounted reward of episode i, per copy
//
//	SW = sum_i k_i exp(L_i - MaxW),  SWV = sum_i k_i exp(L_i - MaxW) V_i,
//	SV = sum_i k_i exp(L_i - MaxV) V_i  (episodes with V_i != 0),
//
// MaxW and MaxV the running maxima of L_i (over episodes with V_i != 0
// for MaxV); S2 = sum_i exp(2 (L_i - MaxW)) over the data gives the
// effective sample size.
type TrajectorySums struct {
	Gamma    float64
	WIS      bool
	MaxW     Float
	MaxV     Float
	SW, SWV  Floats
	SV       Floats
	S2       Float
	Count    []int64 // episodes, per copy
	NonZero  []int64 // episodes of non-zero weight, per copy
	Episodes int     // distinct episodes added
}

func newTrajectorySums(gamma float64, copies int, wis bool) *TrajectorySums {
	return &TrajectorySums{Gamma: gamma, WIS: wis, MaxW: Float(math.Inf(-1)), MaxV: Float(math.Inf(-1)),
		SW: make(Floats, copies), SWV: make(Floats, copies), SV: make(Floats, copies),
		Count: make([]int64, copies), NonZero: make([]int64, copies)}
}

// NewSums implements Summer.
func (e *TrajectoryIS) NewSums(gamma float64, copies int) (Sums, error) {
	if err := checkSumsArgs(e.Name(), gamma, copies); err != nil {
		return nil, err
	}
	return newTrajectorySums(gamma, copies, false), nil
}

// NewSums implements Summer.
func (e *TrajectoryWIS) NewSums(gamma float64, copies int) (Sums, error) {
	if err := checkSumsArgs(e.Name(), gamma, copies); err != nil {
		return nil, err
	}
	return newTrajectorySums(gamma, copies, true), nil
}

func (s *TrajectorySums) name() string {
	if s.WIS {
		return "wis-trajectory"
	}
	return "is-trajectory"
}

// Add implements Sums.
func (s *TrajectorySums) Add(d *dataset.Dataset, e int, mult []int) error {
	name := s.name()
	if err := checkBehavior(name, d); err != nil {
		return err
	}
	if d.Len(e) == 0 {
		return fmt.Errorf("%s: episode %q has no steps", name, d.IDs[e])
	}
	l, v, err := walkEpisode(name, d, e, s.Gamma, nil)
	if err != nil {
		return err
	}
	s.Episodes++
	for c, k := range mult {
		if k != 0 {
			s.Count[c] += int64(k)
			if !math.IsInf(l, -1) {
				s.NonZero[c] += int64(k)
			}
		}
	}
	if math.IsInf(l, -1) {
		return nil
	}
	if old := float64(s.MaxW); l > old {
		raise(&s.MaxW, l, s.SW, s.SWV)
		if !math.IsInf(old, -1) {
			s.S2 *= Float(math.Exp(2 * (old - l)))
		}
	}
	if v != 0 {
		raise(&s.MaxV, l, s.SV)
	}
	ew := math.Exp(l - float64(s.MaxW))
	ev := math.Exp(l-float64(s.MaxV)) * v
	s.S2 += Float(ew * ew)
	for c, k := range mult {
		if k == 0 {
			continue
		}
		fk := float64(k)
		s.SW[c] += fk * ew
		s.SWV[c] += fk * ew * v
		if v != 0 {
			s.SV[c] += fk * ev
		}
	}
	return nil
}

// Merge implements Sums.
func (s *TrajectorySums) Merge(o Sums) error {
	t, err := mergeCheck(s.name(), o, s.Gamma, len(s.SW), func(t *TrajectorySums) (float64, int) { return t.Gamma, len(t.SW) })
	if err != nil {
		return err
	}
	if t.WIS != s.WIS {
		return fmt.Errorf("%s: cannot merge the sums of %s", s.name(), t.name())
	}
	oldW := float64(s.MaxW)
	raise(&s.MaxW, float64(t.MaxW), s.SW, s.SWV)
	if oldW != float64(s.MaxW) && !math.IsInf(oldW, -1) {
		s.S2 *= Float(math.Exp(2 * (oldW - float64(s.MaxW))))
	}
	raise(&s.MaxV, float64(t.MaxV), s.SV)
	fw, fv := shiftFactor(t.MaxW, s.MaxW), shiftFactor(t.MaxV, s.MaxV)
	s.S2 += t.S2 * Float(fw*fw)
	for c := range s.SW {
		s.SW[c] += t.SW[c] * fw
		s.SWV[c] += t.SWV[c] * fw
		s.SV[c] += t.SV[c] * fv
		s.Count[c] += t.Count[c]
		s.NonZero[c] += t.NonZero[c]
	}
	s.Episodes += t.Episodes
	return nil
}

// shiftFactor is exp(from - to), 0 for sums never shifted (from = -Inf).
func shiftFactor(from, to Float) float64 {
	if math.IsInf(float64(from), -1) {
		return 0
	}
	return math.Exp(float64(from - to))
}

// Finish implements Sums.
func (s *TrajectorySums) Finish(c int) (Result, WeightSummary, error) {
	name := s.name()
	m := s.Count[c]
	if c == 0 && s.Episodes < 2 {
		return Result{}, WeightSummary{}, errOneEpisode(name, whyIS)
	}
	if m == 0 {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: no episodes", name)
	}
	var ws WeightSummary
	if c == 0 {
		ws.Units = s.Episodes
		if s.SW[0] > 0 {
			ws.ESS = float64(s.SW[0] * s.SW[0] / float64(s.S2))
			ws.MaxShare = 1 / s.SW[0]
		}
	}
	if s.NonZero[c] == 0 {
		if s.WIS {
			return Result{}, ws, fmt.Errorf("%s: every episode has weight 0 (each logs an action of target probability 0)", name)
		}
		return Result{Value: 0, Estimand: Horizon}, ws, nil
	}
	if !(s.SW[c] > 0) {
		return Result{}, ws, fmt.Errorf("%s: every weight of the resample underflows against the data's largest", name)
	}
	if s.WIS {
		return Result{Value: s.SWV[c] / s.SW[c], Estimand: Horizon}, ws, nil
	}
	if math.IsInf(float64(s.MaxV), -1) {
		return Result{Value: 0, Estimand: Horizon}, ws, nil
	}
	v, err := scaledMean(name, s.SV[c], float64(s.MaxV), int(m))
	if err != nil {
		return Result{}, ws, err
	}
	return Result{Value: v, Estimand: Horizon}, ws, nil
}

// StepwiseISSums are step-wise IS's statistics: with a_j = log(gamma^i_t
// w^i_{0:t}) of step j, per copy S = sum_j k_j exp(a_j - MaxV) r_j over
// the steps with r_j != 0, MaxV their running maximum of a_j; over the
// data Z = sum_j exp(a_j - MaxA) and Z2 of the squares (the effective
// sample size), MaxA the running maximum over all steps.
type StepwiseISSums struct {
	Gamma      float64
	MaxA, MaxV Float
	S          Floats
	Z, Z2      Float
	ESS        StepESS // per step, of the ratios alone
	Count      []int64 // episodes, per copy
	NonZero    []int64 // episodes with a term in S, per copy
	Episodes   int
	Steps      int

	buf []float64
}

// NewSums implements Summer.
func (e *StepwiseIS) NewSums(gamma float64, copies int) (Sums, error) {
	if err := checkSumsArgs(e.Name(), gamma, copies); err != nil {
		return nil, err
	}
	return &StepwiseISSums{Gamma: gamma, MaxA: Float(math.Inf(-1)), MaxV: Float(math.Inf(-1)),
		S: make(Floats, copies), Count: make([]int64, copies), NonZero: make([]int64, copies)}, nil
}

// cumulative returns the cumulative log-weights of episode e of d in a
// buffer reused across calls, after walkEpisode's checks.
func cumulative(name string, d *dataset.Dataset, e int, gamma float64, buf *[]float64) ([]float64, error) {
	if err := checkBehavior(name, d); err != nil {
		return nil, err
	}
	n := d.Len(e)
	if n == 0 {
		return nil, fmt.Errorf("%s: episode %q has no steps", name, d.IDs[e])
	}
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	cum := (*buf)[:n]
	if _, _, err := walkEpisode(name, d, e, gamma, cum); err != nil {
		return nil, err
	}
	return cum, nil
}

// Add implements Sums.
func (s *StepwiseISSums) Add(d *dataset.Dataset, e int, mult []int) error {
	const name = "is-stepwise"
	cum, err := cumulative(name, d, e, s.Gamma, &s.buf)
	if err != nil {
		return err
	}
	lo, _ := d.Span(e)
	g0, logG0 := discountStart(s.Gamma, len(cum))
	lg := math.Log(s.Gamma)
	la, lv := math.Inf(-1), math.Inf(-1)
	for t := range cum {
		s.ESS.add(t, cum[t], g0)
		g0 *= s.Gamma
		a := cum[t] + logG0 + float64(t)*lg
		cum[t] = a
		la = math.Max(la, a)
		if d.Reward[lo+t] != 0 {
			lv = math.Max(lv, a)
		}
	}
	s.Episodes++
	s.Steps += len(cum)
	nonZero := !math.IsInf(lv, -1)
	for c, k := range mult {
		s.Count[c] += int64(k)
		if nonZero {
			s.NonZero[c] += int64(k)
		}
	}
	if math.IsInf(la, -1) {
		return nil
	}
	if old := float64(s.MaxA); la > old {
		raise(&s.MaxA, la)
		if !math.IsInf(old, -1) {
			s.rescale(math.Exp(old - la))
		}
	}
	raise(&s.MaxV, lv, s.S)
	var se, z, z2 float64
	for t, a := range cum {
		x := math.Exp(a - float64(s.MaxA))
		z += x
		z2 += x * x
		if r := d.Reward[lo+t]; r != 0 {
			se += math.Exp(a-float64(s.MaxV)) * r
		}
	}
	s.Z += Float(z)
	s.Z2 += Float(z2)
	if nonZero {
		for c, k := range mult {
			if k != 0 {
				s.S[c] += float64(k) * se
			}
		}
	}
	return nil
}

// rescale multiplies the weights summed on MaxA's scale by f (MaxA rose).
func (s *StepwiseISSums) rescale(f float64) {
	s.Z *= Float(f)
	s.Z2 *= Float(f * f)
}

// Merge implements Sums.
func (s *StepwiseISSums) Merge(o Sums) error {
	t, err := mergeCheck("is-stepwise", o, s.Gamma, len(s.S), func(t *StepwiseISSums) (float64, int) { return t.Gamma, len(t.S) })
	if err != nil {
		return err
	}
	if err := s.ESS.merge(&t.ESS); err != nil {
		return fmt.Errorf("is-stepwise: %w", err)
	}
	old := float64(s.MaxA)
	raise(&s.MaxA, float64(t.MaxA))
	if f := shiftFactor(Float(old), s.MaxA); old != float64(s.MaxA) {
		s.rescale(f)
	}
	raise(&s.MaxV, float64(t.MaxV), s.S)
	fa, fv := shiftFactor(t.MaxA, s.MaxA), shiftFactor(t.MaxV, s.MaxV)
	s.Z += t.Z * Float(fa)
	s.Z2 += t.Z2 * Float(fa*fa)
	for c := range s.S {
		s.S[c] += t.S[c] * fv
		s.Count[c] += t.Count[c]
		s.NonZero[c] += t.NonZero[c]
	}
	s.Episodes += t.Episodes
	s.Steps += t.Steps
	return nil
}

// Finish implements Sums.
func (s *StepwiseISSums) Finish(c int) (Result, WeightSummary, error) {
	const name = "is-stepwise"
	if c == 0 && s.Episodes < 2 {
		return Result{}, WeightSummary{}, errOneEpisode(name, whyIS)
	}
	m := s.Count[c]
	if m == 0 {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: no episodes", name)
	}
	var ws WeightSummary
	if c == 0 {
		ws.Units = s.Steps
		if s.Z > 0 {
			ws.ESS = float64(s.Z * s.Z / s.Z2)
			ws.MaxShare = 1 / float64(s.Z)
		}
	}
	res := Result{Estimand: Horizon}
	if c == 0 {
		if w := StepESSWarning(name, &s.ESS, s.Episodes); w != "" {
			res.Warnings = []string{w}
		}
	}
	if s.NonZero[c] == 0 || math.IsInf(float64(s.MaxV), -1) {
		return res, ws, nil
	}
	if s.S[c] == 0 {
		return Result{}, ws, fmt.Errorf("%s: every weight of the resample underflows against the data's largest", name)
	}
	v, err := scaledMean(name, s.S[c], float64(s.MaxV), int(m))
	if err != nil {
		return Result{}, ws, err
	}
	res.Value = v
	return res, ws, nil
}

// StepwiseWISSums are step-wise WIS's statistics, per step index t: the
// running maximum MaxT[t] of log w^i_{0:t} over the data, and per copy
// Den[c][t] = sum_i k_i gamma^i_t exp(log w^i_{0:t} - MaxT[t]), Num[c][t]
// the same times r^i_t and C[c][t] = sum_i k_i gamma^i_t over the episodes
// that reach t; E2[t] and EMax[t], the sum of squares and the largest
// term over the data, give the effective sample size, and ESS the
// per-step one (StepESS). Memory grows with the longest episode, not with
// the number of steps.
type StepwiseWISSums struct {
	Gamma         float64
	MaxT          Floats
	Den, Num, C   []Floats
	E2, EMax      Floats
	ESS           StepESS
	Count         []int64 // episodes, per copy
	Episodes      int
	Steps         int
	buf           []float64
	scale, scale2 []Floats
}

// NewSums implements Summer.
func (e *StepwiseWIS) NewSums(gamma float64, copies int) (Sums, error) {
	if err := checkSumsArgs(e.Name(), gamma, copies); err != nil {
		return nil, err
	}
	return &StepwiseWISSums{Gamma: gamma, Den: make([]Floats, copies), Num: make([]Floats, copies),
		C: make([]Floats, copies), Count: make([]int64, copies)}, nil
}

// grow extends the per-step arrays to n steps.
func (s *StepwiseWISSums) grow(n int) {
	if len(s.MaxT) >= n {
		return
	}
	old := len(s.MaxT)
	s.MaxT = s.MaxT.grow(n)
	s.MaxT[old:].fill(math.Inf(-1))
	s.E2, s.EMax = s.E2.grow(n), s.EMax.grow(n)
	s.ESS.grow(n)
	for c := range s.Den {
		s.Den[c], s.Num[c], s.C[c] = s.Den[c].grow(n), s.Num[c].grow(n), s.C[c].grow(n)
	}
}

// shift raises MaxT[t] to x, rescaling every copy's sums at t.
func (s *StepwiseWISSums) shift(t int, x float64) {
	old := s.MaxT[t]
	if !(x > old) {
		return
	}
	s.MaxT[t] = x
	if math.IsInf(old, -1) {
		return
	}
	f := math.Exp(old - x)
	for c := range s.Den {
		s.Den[c][t] *= f
		s.Num[c][t] *= f
	}
	s.E2[t] *= f * f
	s.EMax[t] *= f
}

// Add implements Sums.
func (s *StepwiseWISSums) Add(d *dataset.Dataset, e int, mult []int) error {
	cum, err := cumulative("wis-stepwise", d, e, s.Gamma, &s.buf)
	if err != nil {
		return err
	}
	lo, _ := d.Span(e)
	s.grow(len(cum))
	s.Episodes++
	s.Steps += len(cum)
	for c, k := range mult {
		s.Count[c] += int64(k)
	}
	g, _ := discountStart(s.Gamma, len(cum))
	for t, l := range cum {
		s.shift(t, l)
		x := 0.0
		if !math.IsInf(l, -1) {
			x = g * math.Exp(l-s.MaxT[t])
		}
		r := d.Reward[lo+t]
		s.E2[t] += x * x
		s.ESS.add(t, l, g)
		s.EMax[t] = math.Max(s.EMax[t], x)
		for c, k := range mult {
			if k == 0 {
				continue
			}
			fk := float64(k)
			s.Den[c][t] += fk * x
			s.Num[c][t] += fk * x * r
			s.C[c][t] += fk * g
		}
		g *= s.Gamma
	}
	return nil
}

// Merge implements Sums.
func (s *StepwiseWISSums) Merge(o Sums) error {
	t, err := mergeCheck("wis-stepwise", o, s.Gamma, len(s.Den), func(t *StepwiseWISSums) (float64, int) { return t.Gamma, len(t.Den) })
	if err != nil {
		return err
	}
	n := len(t.MaxT)
	short := len(t.E2) != n || len(t.EMax) != n
	for c := range t.Den {
		short = short || len(t.Den[c]) != n || len(t.Num[c]) != n || len(t.C[c]) != n
	}
	if short {
		return errors.New("wis-stepwise: per-step sums of different lengths: not sums of this version")
	}
	if err := s.ESS.merge(&t.ESS); err != nil {
		return fmt.Errorf("wis-stepwise: %w", err)
	}
	s.grow(len(t.MaxT))
	for k, x := range t.MaxT {
		s.shift(k, x)
		f := shiftFactor(Float(x), Float(s.MaxT[k]))
		s.E2[k] += t.E2[k] * f * f
		s.EMax[k] = math.Max(s.EMax[k], t.EMax[k]*f)
		for c := range s.Den {
			s.Den[c][k] += t.Den[c][k] * f
			s.Num[c][k] += t.Num[c][k] * f
			s.C[c][k] += t.C[c][k]
		}
	}
	for c := range s.Count {
		s.Count[c] += t.Count[c]
	}
	s.Episodes += t.Episodes
	s.Steps += t.Steps
	return nil
}

// Finish implements Sums.
func (s *StepwiseWISSums) Finish(c int) (Result, WeightSummary, error) {
	const name = "wis-stepwise"
	if c == 0 && s.Episodes < 2 {
		return Result{}, WeightSummary{}, errOneEpisode(name, whyIS)
	}
	m := float64(s.Count[c])
	if m == 0 {
		return Result{}, WeightSummary{}, fmt.Errorf("%s: no episodes", name)
	}
	if c == 0 {
		for t, mx := range s.MaxT {
			if math.IsInf(mx, -1) {
				return Result{}, WeightSummary{}, fmt.Errorf("%s: every episode reaching step %d has weight 0 there (target probability 0 for a logged action); Z_%d = 0", name, t, t)
			}
		}
	}
	den, num, cs := s.Den[c], s.Num[c], s.C[c]
	value := 0.0
	var sumW, sumW2, maxW float64
	for t := range den {
		if cs[t] == 0 {
			continue
		}
		if !(den[t] > 0) {
			return Result{}, WeightSummary{}, fmt.Errorf("%s: every episode of the resample reaching step %d has weight 0 or underflowing there; Z_%d = 0", name, t, t)
		}
		ct := cs[t] / m
		value += ct * num[t] / den[t]
		if c == 0 {
			f := ct / den[t]
			sumW += ct
			sumW2 += f * f * s.E2[t]
			maxW = math.Max(maxW, f*s.EMax[t])
		}
	}
	var ws WeightSummary
	res := Result{Value: value, Estimand: Horizon}
	if c == 0 {
		ws = WeightSummary{ESS: sumW * sumW / sumW2, Units: s.Steps, MaxShare: maxW / sumW}
		if w := StepESSWarning(name, &s.ESS, s.Episodes); w != "" {
			res.Warnings = []string{w}
		}
	}
	return res, ws, nil
}

// unitWeights implements unitWeigher: naive's equal per-episode weights
// 1/m.
func (s *NaiveSums) unitWeights(d *dataset.Dataset, _ Result) ([]float64, Unit, error) {
	w := make([]float64, d.NumEpisodes())
	for i := range w {
		w[i] = 1 / float64(len(w))
	}
	return w, UnitEpisode, nil
}

// unitWeights implements unitWeigher: the per-episode weights
// w^i_{0:T_i} / sum_j w^j_{0:T_j} (all 0 if every weight is 0), so that
// WIS's estimate is sum_i Weights[i] V_i.
func (s *TrajectorySums) unitWeights(d *dataset.Dataset, _ Result) ([]float64, Unit, error) {
	w := make([]float64, d.NumEpisodes())
	if math.IsInf(float64(s.MaxW), -1) {
		return w, UnitEpisode, nil
	}
	for i := range w {
		l, _, err := walkEpisode(s.name(), d, i, s.Gamma, nil)
		if err != nil {
			return nil, UnitEpisode, err
		}
		w[i] = math.Exp(l-float64(s.MaxW)) / float64(s.SW[0])
	}
	return w, UnitEpisode, nil
}

// unitWeights implements unitWeigher: the per-step weights gamma^i_t
// w^i_{0:t} divided by their sum, episode after episode in step order
// (all 0 if every weight is 0).
func (s *StepwiseISSums) unitWeights(d *dataset.Dataset, _ Result) ([]float64, Unit, error) {
	w := make([]float64, d.NumSteps())
	if math.IsInf(float64(s.MaxA), -1) {
		return w, UnitStep, nil
	}
	lg := math.Log(s.Gamma)
	for i := range d.NumEpisodes() {
		lo, _ := d.Span(i)
		cum, err := cumulative("is-stepwise", d, i, s.Gamma, &s.buf)
		if err != nil {
			return nil, UnitStep, err
		}
		_, logG0 := discountStart(s.Gamma, len(cum))
		for t, l := range cum {
			w[lo+t] = math.Exp(l+logG0+float64(t)*lg-float64(s.MaxA)) / float64(s.Z)
		}
	}
	return w, UnitStep, nil
}

// unitWeights implements unitWeigher: the per-step weights
// c_t gamma^i_t w^i_{0:t} / sum_j gamma^j_t w^j_{0:t} of StepwiseWIS's
// formula, which sum to 1, episode after episode in step order.
func (s *StepwiseWISSums) unitWeights(d *dataset.Dataset, _ Result) ([]float64, Unit, error) {
	w := make([]float64, d.NumSteps())
	m := float64(s.Count[0])
	for i := range d.NumEpisodes() {
		lo, _ := d.Span(i)
		cum, err := cumulative("wis-stepwise", d, i, s.Gamma, &s.buf)
		if err != nil {
			return nil, UnitStep, err
		}
		g, _ := discountStart(s.Gamma, len(cum))
		for t, l := range cum {
			if !math.IsInf(l, -1) {
				w[lo+t] = g * math.Exp(l-s.MaxT[t]) * (s.C[0][t] / m) / s.Den[0][t]
			}
			g *= s.Gamma
		}
	}
	return w, UnitStep, nil
}
