package kernelloss

import "math"

// Welford is the running mean and sum of squared deviations of rows of
// Dim values (Welford's update), mergeable in any order (Chan, Golub and
// LeVeque's formula): the states' scaling of a learner whose log is
// seen a piece at a time (a stream of shards, or episodes summed in
// parallel), the same up to rounding however the rows are split.
type Welford struct {
	N        float64
	Mean, M2 []float64
}

// NewWelford returns an empty accumulator of rows of dim values.
func NewWelford(dim int) Welford {
	return Welford{Mean: make([]float64, dim), M2: make([]float64, dim)}
}

// Add adds one row.
func (w *Welford) Add(x []float64) {
	w.N++
	for k, v := range x {
		delta := v - w.Mean[k]
		w.Mean[k] += delta / w.N
		w.M2[k] += delta * (v - w.Mean[k])
	}
}

// Merge adds o's rows.
func (w *Welford) Merge(o *Welford) {
	if o.N == 0 {
		return
	}
	n := w.N + o.N
	for k := range w.Mean {
		delta := o.Mean[k] - w.Mean[k]
		w.M2[k] += o.M2[k] + delta*delta*w.N*o.N/n
		w.Mean[k] += delta * o.N / n
	}
	w.N = n
}

// Scaling returns the mean and the standard deviation (dividing by N)
// per value, a deviation that is 0 or not finite replaced by 1, as
// Scaling does in two passes over a dataset.
func (w *Welford) Scaling() (mean, scale []float64) {
	mean, scale = append([]float64(nil), w.Mean...), make([]float64, len(w.Mean))
	for k := range scale {
		scale[k] = math.Sqrt(w.M2[k] / w.N)
		if !(scale[k] > 0) || math.IsInf(scale[k], 0) {
			scale[k] = 1
		}
	}
	return mean, scale
}

// InOrder forms the shares of items 0..n-1 (episodes, say) on up to
// workers goroutines, Groups at a time, each group's share in its own
// scratch s (from newShare), and hands them to add one by one in order
// of i: the sums add feeds are those of one sequential pass over the
// items, bit for bit, whatever the number of goroutines, and so those a
// stream forms adding the same items in the same order. It returns the
// error of the first item that fails.
func InOrder[S any](n, workers int, newShare func() S, form func(i int, s S) error, add func(i int, s S)) error {
	shares := make([]S, Groups)
	for g := range shares {
		shares[g] = newShare()
	}
	errs := make([]error, Groups)
	for lo := 0; lo < n; lo += Groups {
		Parallel(workers, func(g int) {
			errs[g] = nil
			if i := lo + g; i < n {
				errs[g] = form(i, shares[g])
			}
		})
		for g := range min(Groups, n-lo) {
			if errs[g] != nil {
				return errs[g]
			}
			add(lo+g, shares[g])
		}
	}
	return nil
}
