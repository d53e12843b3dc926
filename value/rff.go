package value

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
)

// rffStream is the second word of the PCG state that draws the random
// Fourier features ("rff-feat" in ASCII): the features are a fixed
// function of the data, the same on every run.
const rffStream = 0x7266662d66656174

// rffMedianStates is the number of logged states (evenly spaced over the
// steps) whose pairwise distances give the median heuristic.
const rffMedianStates = 500

// rffMap is a set of d random Fourier features of the standardised state
// x (k components),
//
//	b_i(x) = sqrt(2) cos(w_i^T x + c_i),   w_i ~ N(0, I/sigma^2), c_i ~ U[0, 2 pi),
//
// whose span approximates functions of x that are smooth at the scale
// sigma: (1/d) sum_i b_i(x) b_i(x') -> exp(-|x - x'|^2/(2 sigma^2)), the
// Gaussian kernel (Rahimi and Recht 2007). sigma is Bandwidth times the
// median heuristic, the median distance between standardised logged
// states. The factor sqrt(2) gives each feature a mean square of about 1,
// like the standardised monomials, so that the relative ridge treats
// them alike. w and c are drawn from a PCG with fixed seeds: the features
// depend on the data only through sigma.
type rffMap struct {
	d, k int
	w, c []float64
}

func newRFF(ds *dataset.Dataset, st scaler, d int, bandwidth float64) rffMap {
	if d == 0 {
		return rffMap{d: d, k: ds.StateDim}
	}
	return newRFFSigma(ds.StateDim, d, bandwidth*medianDistance(ds, st))
}

// newRFFSigma draws d features of k-component states at the scale sigma.
func newRFFSigma(k, d int, sigma float64) rffMap {
	r := rffMap{d: d, k: k, w: make([]float64, d*k), c: make([]float64, d)}
	if d == 0 {
		return r
	}
	rng := rand.New(rand.NewPCG(uint64(d), rffStream))
	for i := range r.w {
		r.w[i] = rng.NormFloat64() / sigma
	}
	for i := range r.c {
		r.c[i] = 2 * math.Pi * rng.Float64()
	}
	return r
}

// medianDistance returns the median of the distances between pairs of
// standardised logged states (up to rffMedianStates of them, evenly
// spaced over the steps); 1 if it is not positive.
func medianDistance(ds *dataset.Dataset, st scaler) float64 {
	n, k := ds.NumSteps(), ds.StateDim
	m := min(n, rffMedianStates)
	xs := make([]float64, m*k)
	for i := range m {
		st.apply(xs[i*k:(i+1)*k], ds.ObsAt(int(int64(i)*int64(n)/int64(m))))
	}
	return medianOfRows(xs, k)
}

// medianOfRows returns the median of the distances between pairs of the
// rows of xs (k values each; the upper middle one of an even count); 1
// if it is not positive.
func medianOfRows(xs []float64, k int) float64 {
	m := len(xs) / max(k, 1)
	dist := make([]float64, 0, m*(m-1)/2)
	for i := range m {
		for j := i + 1; j < m; j++ {
			s := 0.0
			for c := range k {
				v := xs[i*k+c] - xs[j*k+c]
				s += v * v
			}
			dist = append(dist, math.Sqrt(s))
		}
	}
	if len(dist) == 0 {
		return 1
	}
	slices.Sort(dist)
	med := dist[len(dist)/2]
	if !(med > 0) || math.IsInf(med, 0) {
		return 1
	}
	return med
}

// eval writes the features of the standardised state z to dst (d entries).
func (r rffMap) eval(dst, z []float64) {
	for i := range r.d {
		w := r.w[i*r.k : (i+1)*r.k]
		s := r.c[i]
		for c, v := range z[:r.k] {
			s += w[c] * v
		}
		dst[i] = math.Sqrt2 * math.Cos(s)
	}
}
