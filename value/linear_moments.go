package value

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/ihope-ope/ihope/dataset"
)

// linWorker accumulates the moments of the transitions of a range of
// steps. For every transition j, with block k_j and monomials x_j (so
// that phi_j = e_(k_j) (x) x_j), it gathers the row x_j and a right-hand
// row
//
//	stationary: [phi_j - gamma psi_j, r_j, 1]
//	finite:     [x_j, psi_j, r_j, 1]
//
// (psi_j = E_pi phi(s'_j, .)), and adds X_k^T R_k to block k of the
// moments, per chunk of transitions sorted by block: the rows of
// sum_j phi_j row_j^T that are not zero.
type linWorker struct {
	f      *linFeatures
	target realTarget
	gamma  float64
	finite bool

	K, Pp, Q, Qp int       // blocks, padded row width, right width (padded)
	m            []float64 // K blocks of Pp x Qp
	gdiag        []float64 // diagonal of Phi^T Phi, p
	n, skipped   int
	noNext       int // transitions without a next state
	err          error

	// The chunk, in step order and sorted by block.
	L          int
	blk        []int
	xb, rb     []float64
	xs, rs     []float64
	cnt, start []int
	sc         *linScratch
}

func newLinWorker(f *linFeatures, t realTarget, gamma float64, finite bool) *linWorker {
	w := &linWorker{f: f, target: t, gamma: gamma, finite: finite, K: max(f.numActions, 1)}
	w.Pp = f.P + f.P%2
	w.Q = f.p + 2
	if finite {
		w.Q += f.P
	}
	w.Qp = (w.Q + 3) &^ 3
	w.m = make([]float64, w.K*w.Pp*w.Qp)
	w.gdiag = make([]float64, f.p)
	return w
}

// scratch allocates the chunk and the feature scratch of a worker that
// reads transitions, once: a worker that only holds sums (the training
// moments of Select's folds, a smaller degree's block of them, a
// stream's copies) never needs them, and they are larger than its
// moments for short chunks of many features.
func (w *linWorker) scratch() *linScratch {
	if w.sc != nil {
		return w.sc
	}
	w.blk = make([]int, linChunk)
	w.xb, w.rb = make([]float64, linChunk*w.Pp), make([]float64, linChunk*w.Qp)
	if w.K > 1 {
		w.xs, w.rs = make([]float64, linChunk*w.Pp), make([]float64, linChunk*w.Qp)
		w.cnt, w.start = make([]int, w.K), make([]int, w.K)
	}
	w.sc = w.f.newScratch(w.target)
	return w.sc
}

// accumulate adds the transitions of steps [lo, hi) of d.
func (w *linWorker) accumulate(d *dataset.Dataset, lo, hi int) {
	if lo >= hi {
		return
	}
	f, sc := w.f, w.scratch()
	P, p := f.P, f.p
	e := episodeOfStep(d, lo)
	for j := lo; j < hi; j++ {
		for j >= d.Start[e+1] {
			e++
		}
		if w.err = checkRealStep("linear", d, e, j); w.err != nil {
			return
		}
		obs, ok := d.NextObs(e, j)
		if !ok {
			w.noNext++
			continue
		}
		if !allFinite(obs) {
			w.err = fmt.Errorf("value: linear: episode %q step %d: next state %v is not finite", d.IDs[e], j-d.Start[e], obs)
			return
		}
		var probs []float64
		if f.numActions > 0 {
			if probs, ok = d.NextTargetProbs(e, j); !ok {
				w.skipped++
				continue
			}
			if w.err = checkTargetRow("linear", d, e, j, probs, "next"); w.err != nil {
				return
			}
		}
		l := w.L
		x := w.xb[l*w.Pp : l*w.Pp+P]
		r := w.rb[l*w.Qp : (l+1)*w.Qp]
		blk := f.stateAction(x, sc, d, j)
		w.blk[l] = blk
		for i, v := range x {
			w.gdiag[blk*P+i] += v * v
		}
		f.expected(sc, obs, probs)
		if w.finite {
			copy(r, x)
			copy(r[P:], sc.psi)
			r[P+p] = d.Reward[j]
			r[P+p+1] = 1
		} else {
			for i, v := range sc.psi {
				r[i] = -w.gamma * v
			}
			for i, v := range x {
				r[blk*P+i] += v
			}
			r[p] = d.Reward[j]
			r[p+1] = 1
		}
		w.n++
		if w.L++; w.L == linChunk {
			w.flush()
		}
	}
	w.flush()
}

// flush adds the gathered chunk to the moments.
func (w *linWorker) flush() {
	L := w.L
	if L == 0 {
		return
	}
	w.L = 0
	block := w.Pp * w.Qp
	if w.K == 1 {
		addATB(L, w.Pp, w.Qp, w.xb, w.rb, w.m)
		return
	}
	clear(w.cnt)
	for _, k := range w.blk[:L] {
		w.cnt[k]++
	}
	s := 0
	for k, c := range w.cnt {
		w.start[k] = s
		s += c
	}
	pos := slices.Clone(w.start)
	for l, k := range w.blk[:L] {
		i := pos[k]
		pos[k]++
		copy(w.xs[i*w.Pp:(i+1)*w.Pp], w.xb[l*w.Pp:(l+1)*w.Pp])
		copy(w.rs[i*w.Qp:(i+1)*w.Qp], w.rb[l*w.Qp:(l+1)*w.Qp])
	}
	for k, c := range w.cnt {
		i := w.start[k]
		addATB(c, w.Pp, w.Qp, w.xs[i*w.Pp:], w.rs[i*w.Qp:], w.m[k*block:(k+1)*block])
	}
}

// add adds o's moments to w's.
func (w *linWorker) add(o *linWorker) {
	for i, v := range o.m {
		w.m[i] += v
	}
	for i, v := range o.gdiag {
		w.gdiag[i] += v
	}
	w.n += o.n
	w.skipped += o.skipped
	w.noNext += o.noNext
}

// linMoments are the moments of a fit divided by the number of
// transitions n: G = Phi^T Phi/n, C = Phi^T Phi'_pi/n, b = Phi^T r/n,
// f = Phi^T 1/n and the diagonal of G. In the stationary form
// Phi^T (Phi - gamma Phi'_pi)/n is accumulated directly: g holds it and c
// is zero.
type linMoments struct {
	g, c  *mat.Dense
	b, f  []float64
	gdiag []float64
}

func (w *linWorker) moments() linMoments {
	f := w.f
	P, p := f.P, f.p
	inv := 1 / float64(w.n)
	mo := linMoments{g: mat.NewDense(p, p, nil), c: mat.NewDense(p, p, nil),
		b: make([]float64, p), f: make([]float64, p), gdiag: make([]float64, p)}
	block := w.Pp * w.Qp
	for k := range w.K {
		mk := w.m[k*block : (k+1)*block]
		for i := range P {
			row := mk[i*w.Qp : (i+1)*w.Qp]
			gi := k*P + i
			if w.finite {
				for c := range P {
					mo.g.Set(gi, k*P+c, row[c]*inv)
				}
				for c := range p {
					mo.c.Set(gi, c, row[P+c]*inv)
				}
				mo.b[gi], mo.f[gi] = row[P+p]*inv, row[P+p+1]*inv
				continue
			}
			for c := range p {
				mo.g.Set(gi, c, row[c]*inv)
			}
			mo.b[gi], mo.f[gi] = row[p]*inv, row[p+1]*inv
		}
	}
	for i, v := range w.gdiag {
		mo.gdiag[i] = v * inv
	}
	return mo
}

// warnings returns the plain-words remarks of a fit.
func (w *linWorker) warnings(f *linFeatures) []string {
	var out []string
	if f.numActions > 0 {
		var never []int
		for a := range f.numActions {
			if w.gdiag[a*f.P] == 0 { // the constant feature of action a
				never = append(never, a)
			}
		}
		if len(never) > 0 {
			out = append(out, fmt.Sprintf("actions %v never appear in the fitted transitions: their q is set by the ridge alone (0)", never))
		}
	}
	if w.skipped > 0 {
		out = append(out, fmt.Sprintf("%d transitions left out: the target's action distribution at their next state is unknown (no next_target_prob_k columns)", w.skipped))
	}
	return out
}
