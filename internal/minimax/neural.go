package minimax

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/holdout"
	"github.com/ihope-ope/ihope/nn"
)

// What the neural forms of the minimax learners share (ratio.MWL and
// ratio.DualDICE with Neural set, value.MQL with Neural set): the logged
// transitions and start states with their scaled states (NeuralData), the
// held-out split by episodes (Split), the median heuristic (Median), the
// minibatch kernel loss of a signed measure with its gradient
// (MeasureLoss) and the early-stopping loop (Schedule). The density-ratio
// learner of ratio.Neural (bch-neural) keeps its own copies of the
// scaling, the split and the loop, which could move onto these.

// NeuralData are the logged transitions (those with a known next state and
// the target's distribution there) and the episodes' start states of a
// neural minimax fit, states scaled per dimension, x = (s - Mean)/Scale.
type NeuralData struct {
	Dim, NumActions int
	// S and Next are the scaled states and next states (n x Dim), A the
	// actions, R the rewards and PiNext the target's distribution at the
	// next states (n x NumActions); Start indexes the transition's episode
	// start in S0.
	S, Next []float64
	A       []int32
	R       []float64
	PiNext  []float64
	Start   []int32
	// S0 and Pi0 are the scaled start states (m x Dim) and the target's
	// distribution there (m x NumActions), one per non-empty episode.
	S0, Pi0 []float64
	// Episode is the dataset's index of every start's episode.
	Episode []int32
	// Skipped counts the transitions without the target's distribution
	// at the next state.
	Skipped int
}

// Len returns the number of transitions.
func (nd *NeuralData) Len() int { return len(nd.A) }

// Starts returns the number of start states.
func (nd *NeuralData) Starts() int { return len(nd.Episode) }

// Scaling returns the per-dimension mean and standard deviation of the
// logged states of d (a standard deviation of 0, or one that is not
// finite, is replaced by 1).
func Scaling(d *dataset.Dataset) (mean, scale []float64) {
	dim := d.StateDim
	mean, scale = make([]float64, dim), make([]float64, dim)
	n := float64(max(d.NumSteps(), 1))
	for j := range d.NumSteps() {
		for k, v := range d.ObsAt(j) {
			mean[k] += v
		}
	}
	for k := range mean {
		mean[k] /= n
	}
	for j := range d.NumSteps() {
		for k, v := range d.ObsAt(j) {
			scale[k] += (v - mean[k]) * (v - mean[k])
		}
	}
	for k := range scale {
		scale[k] = math.Sqrt(scale[k] / n)
		if !(scale[k] > 0) || math.IsInf(scale[k], 0) {
			scale[k] = 1
		}
	}
	return mean, scale
}

// NewNeuralData collects the transitions and start states of d (real
// states, discrete actions, the target's distribution in the
// target_prob_k columns), scaled by mean and scale. The caller checks the
// logs first (finite states, actions in range).
func NewNeuralData(d *dataset.Dataset, mean, scale []float64) *NeuralData {
	nd := &NeuralData{Dim: d.StateDim, NumActions: d.NumActions}
	scaled := func(dst, s []float64) []float64 {
		for k, v := range s {
			dst = append(dst, (v-mean[k])/scale[k])
		}
		return dst
	}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		if hi == lo {
			continue
		}
		start := int32(len(nd.Episode))
		nd.Episode = append(nd.Episode, int32(e))
		nd.S0 = scaled(nd.S0, d.ObsAt(lo))
		nd.Pi0 = append(nd.Pi0, d.TargetProbsAt(lo)...)
		for j := lo; j < hi; j++ {
			next, ok := d.NextObs(e, j)
			if !ok {
				continue
			}
			pn, ok := d.NextTargetProbs(e, j)
			if !ok {
				nd.Skipped++
				continue
			}
			nd.S = scaled(nd.S, d.ObsAt(j))
			nd.Next = scaled(nd.Next, next)
			nd.A = append(nd.A, d.Action[j])
			nd.R = append(nd.R, d.Reward[j])
			nd.PiNext = append(nd.PiNext, pn...)
			nd.Start = append(nd.Start, start)
		}
	}
	return nd
}

// Split keeps a fraction frac of nd aside: whole episodes drawn by
// holdout.Episodes when there are enough of them, otherwise the last frac
// of every episode's transitions (the start states then serve both
// parts). held is nil when frac <= 0 or it would hold nothing.
func (nd *NeuralData) Split(rng *rand.Rand, frac float64) (train, held *NeuralData) {
	if !(frac > 0) {
		return nd, nil
	}
	heldEp, byEpisode := holdout.Episodes(rng, nd.Starts(), frac)
	train, held = nd.empty(), nd.empty()
	// Per episode, the transitions [first, last) in order.
	first := make([]int, nd.Starts()+1)
	for _, s := range nd.Start {
		first[s+1]++
	}
	for i := range nd.Starts() {
		first[i+1] += first[i]
	}
	for e := range nd.Starts() {
		lo, hi := first[e], first[e+1]
		cut := hi
		switch {
		case heldEp[e]:
			cut = lo
		case !byEpisode:
			cut = hi - int(math.Ceil(frac*float64(hi-lo)))
		}
		if byEpisode {
			dst := train
			if heldEp[e] {
				dst = held
			}
			dst.addStart(nd, e)
			for i := lo; i < hi; i++ {
				dst.addTransition(nd, i, int32(dst.Starts()-1))
			}
			continue
		}
		train.addStart(nd, e)
		held.addStart(nd, e)
		for i := lo; i < hi; i++ {
			dst := train
			if i >= cut {
				dst = held
			}
			dst.addTransition(nd, i, int32(dst.Starts()-1))
		}
	}
	if held.Len() == 0 {
		return nd, nil
	}
	return train, held
}

func (nd *NeuralData) empty() *NeuralData {
	return &NeuralData{Dim: nd.Dim, NumActions: nd.NumActions}
}

func (nd *NeuralData) addStart(src *NeuralData, e int) {
	d, a := src.Dim, src.NumActions
	nd.S0 = append(nd.S0, src.S0[e*d:(e+1)*d]...)
	nd.Pi0 = append(nd.Pi0, src.Pi0[e*a:(e+1)*a]...)
	nd.Episode = append(nd.Episode, src.Episode[e])
}

func (nd *NeuralData) addTransition(src *NeuralData, i int, start int32) {
	d, a := src.Dim, src.NumActions
	nd.S = append(nd.S, src.S[i*d:(i+1)*d]...)
	nd.Next = append(nd.Next, src.Next[i*d:(i+1)*d]...)
	nd.A = append(nd.A, src.A[i])
	nd.R = append(nd.R, src.R[i])
	nd.PiNext = append(nd.PiNext, src.PiNext[i*a:(i+1)*a]...)
	nd.Start = append(nd.Start, start)
}

// Median returns the median of the pairwise distances between up to n
// rows of x (rows of dim values) drawn without replacement by rng, the
// median heuristic of the kernel bandwidth. If more than half the
// distances are 0, it is the median of the others.
func Median(rng *rand.Rand, x []float64, dim, n int) (float64, error) {
	pool := make([]int, len(x)/dim)
	for i := range pool {
		pool[i] = i
	}
	return MedianOf(rng, x, dim, pool, n)
}

// MedianOf is Median over the rows of x that pool lists (which it
// reorders): up to n of them drawn without replacement by rng.
func MedianOf(rng *rand.Rand, x []float64, dim int, pool []int, n int) (float64, error) {
	rows := len(pool)
	k := min(n, rows)
	for i := range k { // partial Fisher-Yates
		j := i + rng.IntN(rows-i)
		pool[i], pool[j] = pool[j], pool[i]
	}
	pool = pool[:k]
	dist := make([]float64, 0, k*(k-1)/2)
	for a := range pool {
		xa := x[pool[a]*dim : (pool[a]+1)*dim]
		for b := a + 1; b < k; b++ {
			xb := x[pool[b]*dim : (pool[b]+1)*dim]
			s := 0.0
			for t := range xa {
				s += (xa[t] - xb[t]) * (xa[t] - xb[t])
			}
			dist = append(dist, math.Sqrt(s))
		}
	}
	slices.Sort(dist)
	nz, _ := slices.BinarySearch(dist, math.SmallestNonzeroFloat64)
	if nz*2 >= len(dist) {
		dist = dist[nz:]
	}
	if len(dist) == 0 {
		return 0, errors.New("all sampled states coincide: set the bandwidth")
	}
	mid := len(dist) / 2
	if len(dist)%2 == 0 {
		return (dist[mid-1] + dist[mid]) / 2, nil
	}
	return dist[mid], nil
}

// MeasureLoss is the squared RKHS norm of a signed measure on (state,
// action) pairs under the kernel
//
//	k((x, a), (x~, a~)) = exp(-||x - x~||^2 / (2 h^2)) 1[a = a~],
//
// the minibatch form of the kernel losses of MWL, DualDICE and MQL. The
// measure is (1/B) sum_{i<B} mu_i, one part per unit i of the batch (a
// transition, with its start state for MWL), and each part is a sum of
// PerUnit point masses at states x_p with one coefficient per action,
// c_p in R^NumActions (the mass c_p[a] at (x_p, a)). Then
//
//	||mu||^2 = (1/N) sum_{p, q} K_pq <c_p, c_q>,   K_pq = exp(-||x_p - x_q||^2 / (2 h^2)),
//
// with N = B^2 (the V-statistic, all pairs of units) or, leaving out the
// pairs within one unit, N = B (B - 1) (the U-statistic, unbiased for the
// population's ||E mu_i||^2). Point p of unit i is row i PerUnit + p of X
// and C.
//
// With U set (points x NumActions, a second measure nu), the loss is
// profiled over one scalar: Loss returns min_kappa ||mu - kappa nu||^2,
// attained at Kappa = <mu, nu> / ||nu||^2, and G is its gradient (by the
// envelope theorem the gradient at fixed kappa = Kappa). MQL profiles its
// Bellman residuals' level this way (see value.MQL).
type MeasureLoss struct {
	Dim, NumActions, PerUnit int
	// X (points x Dim) and C (points x NumActions) are the batch, filled
	// by the caller; G (points x NumActions) receives the gradient
	// dLoss/dc_p = (2/N) sum_q K_pq (c_q - Kappa u_q).
	X, C, G []float64
	// U is the profiled direction (nil: none) and Kappa its coefficient
	// at the last Loss.
	U     []float64
	Kappa float64
	negc  float64
	row   []float64
	gu    []float64
}

// NewMeasureLoss returns the loss of batches of up to units units with
// bandwidth h.
func NewMeasureLoss(dim, numActions, perUnit, units int, h float64) *MeasureLoss {
	n := units * perUnit
	return &MeasureLoss{Dim: dim, NumActions: numActions, PerUnit: perUnit,
		X: make([]float64, n*dim), C: make([]float64, n*numActions), G: make([]float64, n*numActions),
		negc: -1 / (2 * h * h), row: make([]float64, n)}
}

// Loss returns ||mu||^2 over the first units units (the V-statistic if
// diag, else the U-statistic), profiled over Kappa if U is set, and, if
// grad, leaves its gradient in G. It allocates nothing after its first
// profiled call; the sums run in a fixed order, so equal inputs give
// equal bits.
func (ml *MeasureLoss) Loss(units int, diag, grad bool) float64 {
	n, d, nA, pu := units*ml.PerUnit, ml.Dim, ml.NumActions, ml.PerUnit
	norm := float64(units) * float64(units)
	if !diag {
		norm = float64(units) * float64(units-1)
	}
	ml.Kappa = 0
	if !(norm > 0) {
		return 0
	}
	X, C, G, U := ml.X, ml.C, ml.G, ml.U
	prof := U != nil
	if prof && len(ml.gu) < len(G) {
		ml.gu = make([]float64, len(G))
	}
	gu := ml.gu
	clear(G[:n*nA])
	if prof {
		clear(gu[:n*nA])
	}
	var cc, cu, uu float64 // <mu, mu>, <mu, nu>, <nu, nu> times N
	for p := range n {
		xp, cp := X[p*d:(p+1)*d], C[p*nA:(p+1)*nA]
		var up []float64
		if prof {
			up = U[p*nA : (p+1)*nA]
		}
		if diag {
			cc += dot(cp, cp)
			for a, v := range cp {
				G[p*nA+a] += v
			}
			if prof {
				cu += dot(cp, up)
				uu += dot(up, up)
				for a, v := range up {
					gu[p*nA+a] += v
				}
			}
		}
		q0 := p + 1
		if !diag {
			q0 = (p/pu + 1) * pu // the next unit's first point
		}
		if q0 >= n {
			continue
		}
		row := ml.row[q0:n]
		for k := range row {
			xq := X[(q0+k)*d : (q0+k+1)*d]
			s := 0.0
			for t, v := range xp {
				s = math.FMA(v-xq[t], v-xq[t], s)
			}
			row[k] = s * ml.negc
		}
		nn.ExpTo(row, row)
		gp := G[p*nA : (p+1)*nA]
		for k, kv := range row {
			q := q0 + k
			cq, gq := C[q*nA:(q+1)*nA], G[q*nA:(q+1)*nA]
			cc += 2 * kv * dot(cp, cq)
			for a := range cp {
				gp[a] = math.FMA(kv, cq[a], gp[a])
				gq[a] = math.FMA(kv, cp[a], gq[a])
			}
			if prof {
				uq := U[q*nA : (q+1)*nA]
				cu += kv * (dot(cp, uq) + dot(up, cq))
				uu += 2 * kv * dot(up, uq)
				gup, guq := gu[p*nA:(p+1)*nA], gu[q*nA:(q+1)*nA]
				for a := range up {
					gup[a] = math.FMA(kv, uq[a], gup[a])
					guq[a] = math.FMA(kv, up[a], guq[a])
				}
			}
		}
	}
	loss := cc
	if prof && uu > 0 {
		ml.Kappa = cu / uu
		loss = cc - ml.Kappa*cu
	}
	if grad {
		for i := range G[:n*nA] {
			if prof {
				G[i] -= ml.Kappa * gu[i]
			}
			G[i] *= 2 / norm
		}
	}
	return loss / norm
}

func dot(x, y []float64) float64 {
	s := 0.0
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

// HeldOutUnits caps the held-out units whose U-statistic the neural
// learners evaluate (a fixed sample of them when there are more): its
// cost is quadratic in their number.
const HeldOutUnits = 1024

// Schedule is the early-stopping loop of the neural minimax learners:
// Adam steps on minibatches until MaxIter, evaluating a held-out loss
// every EvalEvery steps and stopping when it has not improved for
// Patience evaluations; the parameters of the best evaluation are kept.
//
// With Average > 0 the model is not the online parameters but their
// exponential moving average with time constant Average iterations
// (Polyak averaging; the mean of all iterates while there are fewer
// than Average): the held-out loss is evaluated on it and it is what is
// kept. With a constant step size the online parameters keep
// fluctuating around the minimum of a flat loss.
type Schedule struct {
	MaxIter, EvalEvery, Patience, Average int
}

// Record is what a Schedule's run did: the iterations run, the one whose
// parameters were kept, the mean training loss over the last evaluation
// period and the held-out loss at BestIter (NaN without held-out data).
type Record struct {
	Iterations, BestIter   int
	TrainLoss, HeldOutLoss float64
}

// Run calls step (one minibatch, one update; it returns the minibatch
// loss) until the schedule ends. params are the slices that make up the
// model's parameters, saved at the best held-out loss and restored at the
// end; with heldOut nil, training runs MaxIter steps and keeps the last
// parameters.
func (s Schedule) Run(params [][]float64, step func() (float64, error), heldOut func() (float64, error)) (Record, error) {
	rec := Record{HeldOutLoss: math.NaN()}
	best := make([][]float64, len(params))
	for i, p := range params {
		best[i] = slices.Clone(p)
	}
	var avg, online [][]float64
	if s.Average > 0 {
		for _, p := range params {
			avg = append(avg, slices.Clone(p))
			online = append(online, slices.Clone(p))
		}
	}
	// swap exchanges the online parameters and their average.
	swap := func() {
		for i, p := range params {
			copy(online[i], p)
			copy(p, avg[i])
			copy(avg[i], online[i])
		}
	}
	bestLoss, since := math.Inf(1), 0
	sum, count := 0.0, 0
	for rec.Iterations < s.MaxIter {
		rec.Iterations++
		v, err := step()
		if err != nil {
			return rec, err
		}
		if avg != nil {
			a := 1 / float64(min(rec.Iterations, s.Average))
			for i, p := range params {
				for k, x := range p {
					avg[i][k] += a * (x - avg[i][k])
				}
			}
		}
		sum += v
		count++
		if rec.Iterations%s.EvalEvery != 0 && rec.Iterations != s.MaxIter {
			continue
		}
		rec.TrainLoss, sum, count = sum/float64(count), 0, 0
		if heldOut == nil {
			continue
		}
		if avg != nil {
			swap()
		}
		ho, err := heldOut()
		if err == nil && ho < bestLoss {
			for i, p := range params {
				copy(best[i], p)
			}
		}
		if avg != nil {
			swap()
		}
		if err != nil {
			return rec, err
		}
		if ho < bestLoss {
			bestLoss, since = ho, 0
			rec.BestIter, rec.HeldOutLoss = rec.Iterations, ho
		} else if since++; since >= s.Patience {
			break
		}
	}
	if heldOut == nil || rec.BestIter == 0 {
		rec.BestIter = rec.Iterations
		if avg != nil {
			for i, p := range params {
				copy(p, avg[i])
			}
		}
		return rec, nil
	}
	for i, p := range params {
		copy(p, best[i])
	}
	return rec, nil
}
