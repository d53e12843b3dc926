package ope

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
)

// MarkovTest is a test of whether a log's discrete states are Markov:
// whether the outcome of a step (its reward and next state) is independent
// of the step before it (its state and action, or the episode's start)
// given the step's own state and action. Every estimator that models the
// states (a value function or a model of the dynamics, a ratio of state
// distributions: the Markov estimators of the registry, Entry.Markov)
// assumes it; the importance-sampling family does not. Aliased states
// break it: states that look alike but behave differently, as in COBS's
// ModelFail (Thomas and Brunskill 2016), where a model fitted on the
// observations is wrong with any amount of data.
//
// The statistic is the likelihood-ratio (G) statistic of independence of
// the outcome and the previous step within each stratum of (state,
// action), summed over the strata; its p-value comes from permuting the
// previous steps within each stratum (Resamples permutations), which keeps
// every stratum's margins and is exact under the null for exchangeable
// steps, however sparse the counts (the chi-square approximation is not:
// most cells of a large log's tables hold one step).
type MarkovTest struct {
	// Resamples is the number of permutations; 0 means 199.
	Resamples int
	// Seed seeds the permutations.
	Seed uint64
}

// MarkovAlpha is the p-value at or below which the logged states are
// taken not to be Markov: 1/200, no one of MarkovTest's 199 permutations
// reaching the log's statistic (on the benchmark's six Markov worlds the
// test gave p-values from 0.06 to 0.98 over five seeds; on COBS's
// aliased ModelFail 0.005 on every seed).
const MarkovAlpha = 0.005

// MarkovResult is the outcome of a MarkovTest.
type MarkovResult struct {
	// G is the statistic, PValue its permutation p-value,
	// (1 + #{G_perm >= G}) / (1 + Resamples).
	G, PValue float64
	// Steps counts the steps in strata where the previous step varies
	// (the others carry no evidence either way).
	Steps int
}

// ErrMarkovNotDiscrete is returned for logs without discrete states and
// actions.
var ErrMarkovNotDiscrete = errors.New("ope: the Markov test needs discrete states and actions")

// Run tests the states of d.
func (m MarkovTest) Run(d *dataset.Dataset) (MarkovResult, error) {
	if !d.Discrete() || d.ActionDim > 0 {
		return MarkovResult{}, ErrMarkovNotDiscrete
	}
	B := m.Resamples
	if B <= 0 {
		B = 199
	}
	// One record a step with a known outcome: its stratum (state, action),
	// its previous step (-1 at an episode's start) and its outcome (next
	// state and reward), each coded as a small integer.
	type step struct{ stratum, prev, out int }
	code := func(ids map[[2]float64]int, k [2]float64) int {
		v, ok := ids[k]
		if !ok {
			v = len(ids)
			ids[k] = v
		}
		return v
	}
	strata, prevs, outs := map[[2]float64]int{}, map[[2]float64]int{}, map[[2]float64]int{}
	var steps []step
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		prev := [2]float64{-1, -1}
		for j := lo; j < hi; j++ {
			sa := [2]float64{float64(d.State[j]), float64(d.Action[j])}
			if next, ok := d.NextState(e, j); ok {
				steps = append(steps, step{code(strata, sa), code(prevs, prev), code(outs, [2]float64{float64(next), d.Reward[j]})})
			}
			prev = sa
		}
	}
	// Group the steps by stratum; keep the strata where the previous step
	// varies.
	slices.SortStableFunc(steps, func(a, b step) int { return a.stratum - b.stratum })
	var groups [][]step
	for i := 0; i < len(steps); {
		k := i
		for k < len(steps) && steps[k].stratum == steps[i].stratum {
			k++
		}
		g := steps[i:k]
		if slices.ContainsFunc(g, func(s step) bool { return s.prev != g[0].prev }) &&
			slices.ContainsFunc(g, func(s step) bool { return s.out != g[0].out }) {
			groups = append(groups, g)
		}
		i = k
	}
	res := MarkovResult{}
	for _, g := range groups {
		res.Steps += len(g)
	}
	if res.Steps == 0 {
		res.PValue = 1
		return res, nil
	}
	// Permuting the previous steps within a stratum keeps the stratum's
	// margins, so of G = 2 (sum_cells x log x - sum_p n_p log n_p -
	// sum_o n_o log n_o + n log n) only the first sum changes: each
	// permutation recounts the cells, over codes local to the stratum.
	maxN := 0
	for _, g := range groups {
		maxN = max(maxN, len(g))
	}
	xlogx := make([]float64, maxN+1)
	for x := 1; x <= maxN; x++ {
		xlogx[x] = float64(x) * math.Log(float64(x))
	}
	type local struct {
		prev, out []int32 // local codes
		np, no    int     // their numbers
		fixed     float64 // n log n - sum_p n_p log n_p - sum_o n_o log n_o
	}
	locs := make([]local, len(groups))
	for i, g := range groups {
		lp, lo := map[int]int32{}, map[int]int32{}
		l := local{prev: make([]int32, len(g)), out: make([]int32, len(g))}
		for k, st := range g {
			if _, ok := lp[st.prev]; !ok {
				lp[st.prev] = int32(len(lp))
			}
			if _, ok := lo[st.out]; !ok {
				lo[st.out] = int32(len(lo))
			}
			l.prev[k], l.out[k] = lp[st.prev], lo[st.out]
		}
		l.np, l.no = len(lp), len(lo)
		cp, co := make([]int, l.np), make([]int, l.no)
		for k := range g {
			cp[l.prev[k]]++
			co[l.out[k]]++
		}
		l.fixed = xlogx[len(g)]
		for _, c := range cp {
			l.fixed -= xlogx[c]
		}
		for _, c := range co {
			l.fixed -= xlogx[c]
		}
		locs[i] = l
	}
	var cells []int32
	cellMap := map[int]int32{}
	statistic := func() float64 {
		total := 0.0
		for _, l := range locs {
			sum := 0.0
			if size := l.np * l.no; size <= 1<<16 {
				cells = slices.Grow(cells[:0], size)[:size]
				clear(cells)
				for k, p := range l.prev {
					cells[int(p)*l.no+int(l.out[k])]++
				}
				for _, c := range cells {
					sum += xlogx[c]
				}
			} else {
				clear(cellMap)
				for k, p := range l.prev {
					cellMap[int(p)*l.no+int(l.out[k])]++
				}
				for _, c := range cellMap {
					sum += xlogx[c]
				}
			}
			total += 2 * (sum + l.fixed)
		}
		return total
	}
	res.G = statistic()
	rng := rand.New(rand.NewPCG(m.Seed, 0x6d61726b6f76)) // "markov"
	above := 0
	for range B {
		for i := range locs {
			p := locs[i].prev
			rng.Shuffle(len(p), func(a, b int) { p[a], p[b] = p[b], p[a] })
		}
		if statistic() >= res.G-1e-9*math.Max(1, res.G) {
			above++
		}
	}
	res.PValue = float64(1+above) / float64(1+B)
	return res, nil
}
