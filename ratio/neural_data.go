package ratio

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/holdout"
	"github.com/ihope-ope/ihope/kernelloss"
)

// transitions is a set of (scaled) transitions to draw minibatches from.
type transitions struct {
	d       int
	s, next []float64 // n x d, scaled
	beta    []float64
	dummy   []bool    // dummy transition of the discounted case
	weight  []float64 // sampling weight
	cum     []float64 // cumulative weights; nil for uniform draws
	test    []float64 // the value test function at next, scaled; nil for none
}

func (tr *transitions) len() int { return len(tr.beta) }

func (tr *transitions) add(s, next []float64, beta, weight float64, dummy bool) {
	tr.s = append(tr.s, s...)
	tr.next = append(tr.next, next...)
	tr.beta = append(tr.beta, beta)
	tr.dummy = append(tr.dummy, dummy)
	tr.weight = append(tr.weight, weight)
}

// setWeights prepares weighted draws, or uniform ones if uniform is set.
func (tr *transitions) setWeights(uniform bool) {
	tr.cum = nil
	if uniform {
		return
	}
	tr.cum = make([]float64, len(tr.weight))
	c := 0.0
	for i, w := range tr.weight {
		c += w
		tr.cum[i] = c
	}
}

// draw fills idx with indices drawn with replacement in proportion to the
// sampling weights.
func (tr *transitions) draw(rng *rand.Rand, idx []int) {
	n := tr.len()
	if tr.cum == nil {
		for k := range idx {
			idx[k] = rng.IntN(n)
		}
		return
	}
	total := tr.cum[n-1]
	for k := range idx {
		u := rng.Float64() * total
		i := sort.SearchFloat64s(tr.cum, u)
		for i < n-1 && tr.cum[i] <= u { // skip zero-weight entries
			i++
		}
		idx[k] = min(i, n-1)
	}
}

// checkNeuralData checks the dimensions and finiteness of the states and
// the ratios of the logged actions, episode by episode (checkEpisode).
func checkNeuralData(d *dataset.Dataset) error {
	for e := range d.NumEpisodes() {
		if err := checkEpisode(d, e); err != nil {
			return err
		}
	}
	return nil
}

// splitTransitions builds the training and held-out transition sets,
// scaled, with the dummies and sampling weights of the discounted case.
// held is nil when heldOut < 0 or nothing is held out.
func splitTransitions(rng *rand.Rand, d *dataset.Dataset, gamma, heldOut float64, mean, scale []float64, vt *valueTest) (train, held *transitions) {
	dim := d.StateDim
	train = &transitions{d: dim}
	if heldOut > 0 {
		held = &transitions{d: dim}
	}
	nEp := d.NumEpisodes()
	heldEp, byEpisode := holdout.Episodes(rng, nEp, heldOut)
	sx := make([]float64, dim)
	nx := make([]float64, dim)
	scaleTo := func(dst, s []float64) {
		for k, v := range s {
			dst[k] = (v - mean[k]) / scale[k]
		}
	}
	for e := range nEp {
		lo, hi := d.Span(e)
		T := hi - lo
		if T == 0 {
			continue
		}
		cut := T // steps t >= cut are held out
		switch {
		case heldEp[e]:
			cut = 0
		case held != nil && !byEpisode:
			cut = T - int(math.Ceil(heldOut*float64(T)))
		}
		dest := func(t int) *transitions {
			if t >= cut {
				return held
			}
			return train
		}
		if gamma < 1 { // the dummy transition t = -1 into s_0, weight gamma^0
			scaleTo(sx, d.ObsAt(lo))
			dest(0).add(sx, sx, 0, 1, true)
			if vt != nil {
				dest(0).test = append(dest(0).test, vt.entry(lo, true))
			}
		}
		g := gamma // gamma^(t+1)
		for j := lo; j < hi; j++ {
			if next, ok := d.NextObs(e, j); ok && g > 0 {
				scaleTo(sx, d.ObsAt(j))
				scaleTo(nx, next)
				dest(j-lo).add(sx, nx, math.Exp(d.LogTarget[j]-d.LogBehavior[j]), g, false)
				if vt != nil {
					dest(j - lo).test = append(dest(j-lo).test, vt.entry(j, false))
				}
			}
			g *= gamma
		}
	}
	train.setWeights(gamma == 1)
	if held != nil {
		held.setWeights(gamma == 1)
		if held.len() == 0 {
			held = nil
		}
	}
	return train, held
}

// medianBandwidth returns the median of the pairwise distances between up
// to n next states of tr drawn without replacement (dummies excluded). If
// more than half the distances are 0, it returns the median of the
// non-zero ones.
func medianBandwidth(rng *rand.Rand, tr *transitions, n int) (float64, error) {
	var pool []int
	for i, dm := range tr.dummy {
		if !dm {
			pool = append(pool, i)
		}
	}
	h, err := kernelloss.MedianOf(rng, tr.next, tr.d, pool, n)
	if err != nil {
		return 0, errors.New("ratio: all sampled next states coincide; set Neural.Bandwidth")
	}
	return h, nil
}

// valueTest is the fitted value of the target that WithValue (Neural,
// Kernel) adds to the loss's test functions, at every logged state (v)
// and next state (next) of the log it was fitted on, and scale, the root
// mean square of v, which its values are divided by (so that the added
// test function weighs as one of the kernel's, k(x, x) = 1).
type valueTest struct {
	v, next []float64
	scale   float64
	start   float64 // the mean of v at the episodes' first states, for the kernel (forKernel)
}

// newValueTest returns the value test of the values v and next, scaled
// by v's root mean square over its finite entries, and false if they test
// nothing (no finite non-zero value) or do not match.
func newValueTest(v, next []float64) (*valueTest, bool) {
	ss, n := 0.0, 0
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			ss += x * x
			n++
		}
	}
	if n == 0 || !(ss > 0) || math.IsInf(ss, 0) || len(next) != len(v) {
		return nil, false
	}
	return &valueTest{v: v, next: next, scale: math.Sqrt(ss / float64(n))}, true
}

// entry is the value test's entry of a neural term whose next state is
// step j's next state or, for a dummy, step j's state itself.
func (vt *valueTest) entry(j int, dummy bool) float64 {
	if dummy {
		return finiteOr0(vt.v[j] / vt.scale)
	}
	return finiteOr0(vt.next[j] / vt.scale)
}

// finiteOr0 returns x, or 0 where x is not finite (a value model that
// cannot read a state tests nothing there).
func finiteOr0(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
