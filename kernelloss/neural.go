package kernelloss

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/holdout"
)

// What the neural forms of the minimax learners share (ratio.MWL and
// ratio.DualDICE with Neural set, value.MQL with Neural set): the logged
// transitions and start states with their scaled states (NeuralData), the
// held-out split by episodes (Split), the median heuristic (Median), the
// samples (Sampler), the kernel loss of a signed measure in random
// Fourier features with its gradient (FeatureLoss) and the training loop
// (Schedule). The density-ratio
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

// FeatureLoss is the squared RKHS norm of a signed measure on (state,
// action) pairs under the kernel
//
//	k((x, a), (x~, a~)) = exp(-||x - x~||^2 / (2 h^2)) 1[a = a~],
//
// the kernel loss of MWL, DualDICE and MQL on a sample. The measure is a
// sum of point masses at states x_p with one coefficient per action,
// c_p in R^NumActions (the mass c_p[a] at (x_p, a)), and its squared norm
// is sum_{p, q} k(x_p, x_q) <c_p, c_q> over all pairs (the V-statistic
// when the coefficients carry the sample's weights 1/B). The state
// kernel is replaced by D random Fourier features (Rahimi and Recht
// 2007),
//
//	psi(x) = sqrt(2/D) (cos(omega_j^T x), sin(omega_j^T x))_{j < D/2},   omega_j ~ N(0, I/h^2),
//
// psi(x)^T psi(x~) -> exp(-||x - x~||^2 / (2 h^2)), the features the
// kernel forms use (ratio.PairKernel's KernelFeatures). The loss is then
// the squared norm of the measure's embedding,
//
//	||mu||^2 = sum_a ||E_a||^2,   E_a = sum_p c_p[a] psi(x_p),
//
// and its cost is linear in the points (2 points x D x NumActions per
// Loss) where SampleLoss's is quadratic: the neural learners can afford
// samples of tens of thousands of transitions, on which the loss's noise
// is below the differences that locate the solution (see
// value.MinimaxNeural). The caller fills X, calls Load (which computes
// the points' features) and then evaluates Loss for as many C as it
// likes.
//
// With U set (points x NumActions, a second measure nu), the loss is
// profiled over one scalar: Loss returns min_kappa ||mu - kappa nu||^2,
// attained at Kappa = <mu, nu> / ||nu||^2, and G is its gradient (by the
// envelope theorem the gradient at fixed kappa = Kappa). MQL profiles its
// Bellman residuals' level this way (see value.MQL).
type FeatureLoss struct {
	Dim, NumActions, D int
	// X (points x Dim) and C (points x NumActions) are the sample, filled
	// by the caller; G (points x NumActions) receives the gradient
	// dLoss/dc_p = 2 (E - Kappa E_U)^T psi(x_p).
	X, C, G []float64
	U       []float64
	Kappa   float64
	omega   []float64 // D/2 x Dim
	psi     []float64 // points x D
	e, eu   []float64 // NumActions x D
	n       int
}

// NewFeatureLoss returns the loss of samples of up to points points with
// features (rounded up to an even number) drawn by rng for bandwidth h.
func NewFeatureLoss(rng *rand.Rand, dim, numActions, points, features int, h float64) *FeatureLoss {
	features += features % 2
	fl := &FeatureLoss{Dim: dim, NumActions: numActions, D: features,
		X: make([]float64, points*dim), C: make([]float64, points*numActions), G: make([]float64, points*numActions),
		omega: make([]float64, features/2*dim), psi: make([]float64, points*features),
		e: make([]float64, numActions*features), eu: make([]float64, numActions*features)}
	for i := range fl.omega {
		fl.omega[i] = rng.NormFloat64() / h
	}
	return fl
}

// Resize returns a loss with fl's features (the same kernel) for samples
// of up to points points.
func (fl *FeatureLoss) Resize(points int) *FeatureLoss {
	nA, D := fl.NumActions, fl.D
	return &FeatureLoss{Dim: fl.Dim, NumActions: nA, D: D,
		X: make([]float64, points*fl.Dim), C: make([]float64, points*nA), G: make([]float64, points*nA),
		omega: fl.omega, psi: make([]float64, points*D), e: make([]float64, nA*D), eu: make([]float64, nA*D)}
}

// Load computes the features of the first n points of X; Loss then works
// on them until the next Load.
func (fl *FeatureLoss) Load(n int) {
	d, D, m := fl.Dim, fl.D, fl.D/2
	scale := math.Sqrt(2 / float64(D))
	fl.n = n
	for p := range n {
		x, f := fl.X[p*d:(p+1)*d], fl.psi[p*D:(p+1)*D]
		for j := range m {
			sn, cs := math.Sincos(dot(fl.omega[j*d:(j+1)*d], x))
			f[j], f[m+j] = scale*cs, scale*sn
		}
	}
}

// AddEmbedding adds the embedding of the loaded points' coefficients C,
// E_a = sum_p C_p[a] psi(x_p), to e, and that of U to eu if U is set
// (both NumActions x D): sums over several loads give the embedding of
// a measure too large to load at once.
func (fl *FeatureLoss) AddEmbedding(e, eu []float64) {
	fl.addEmbedding(e, fl.C)
	if fl.U != nil {
		fl.addEmbedding(eu, fl.U)
	}
}

func (fl *FeatureLoss) addEmbedding(e, c []float64) {
	nA, D := fl.NumActions, fl.D
	for p := range fl.n {
		f := fl.psi[p*D : (p+1)*D]
		for a, v := range c[p*nA : (p+1)*nA] {
			if v == 0 {
				continue
			}
			ea := e[a*D : (a+1)*D]
			for j, fj := range f {
				ea[j] = math.FMA(v, fj, ea[j])
			}
		}
	}
}

// Loss returns ||mu||^2 over the loaded points, profiled over Kappa if U
// is set, and, if grad, leaves its gradient in G. It allocates nothing;
// the sums run in a fixed order, so equal inputs give equal bits.
func (fl *FeatureLoss) Loss(grad bool) float64 {
	n, nA, D := fl.n, fl.NumActions, fl.D
	prof := fl.U != nil
	embed := func(e, c []float64) {
		clear(e)
		fl.addEmbedding(e, c)
	}
	embed(fl.e, fl.C)
	cc := dot(fl.e, fl.e)
	fl.Kappa = 0
	loss := cc
	if prof {
		embed(fl.eu, fl.U)
		cu, uu := dot(fl.e, fl.eu), dot(fl.eu, fl.eu)
		if uu > 0 {
			fl.Kappa = cu / uu
			loss = cc - fl.Kappa*cu
			for i, v := range fl.eu {
				fl.e[i] -= fl.Kappa * v
			}
		}
	}
	if grad {
		for p := range n {
			f := fl.psi[p*D : (p+1)*D]
			for a := range nA {
				fl.G[p*nA+a] = 2 * dot(fl.e[a*D:(a+1)*D], f)
			}
		}
	}
	return loss
}

func dot(x, y []float64) float64 {
	s := 0.0
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

// Sampler draws samples of k of the integers 0..n-1 without replacement
// (all of them, in order, when k >= n), reusing its memory.
type Sampler struct {
	pool []int
	k    int
}

// NewSampler returns a sampler of k of 0..n-1.
func NewSampler(n, k int) *Sampler {
	pool := make([]int, n)
	for i := range pool {
		pool[i] = i
	}
	return &Sampler{pool: pool, k: min(k, n)}
}

// Draw returns the next sample (valid until the next Draw): a partial
// Fisher-Yates shuffle of the pool by rng, or the whole pool in order
// when it is no larger than the sample.
func (s *Sampler) Draw(rng *rand.Rand) []int {
	n := len(s.pool)
	if s.k >= n {
		return s.pool
	}
	for i := range s.k {
		j := i + rng.IntN(n-i)
		s.pool[i], s.pool[j] = s.pool[j], s.pool[i]
	}
	return s.pool[:s.k]
}

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
