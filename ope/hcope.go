package ope

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
)

// HCOPE is the high-confidence off-policy evaluation bound of Thomas,
// Theocharous and Ghavamzadeh (2015): a lower bound and an upper bound on
// the horizon value that hold with probability at least 1 - Alpha
// together (each side at Alpha/2), for any world, behavior and target,
// given only
//
//   - independent episodes logged under the stated behavior probabilities,
//   - rewards inside [RewardLow, RewardHigh], a range the user states (the
//     sample's own minimum and maximum would not do: the bound's guarantee
//     rests on the range being known before the data are seen).
//
// Each episode i gives its normalised discounted return V_i in [lo, hi]
// (the horizon value's V_i, as for is-trajectory) and its trajectory
// weight w_i = prod_t pi(a_t|s_t)/pi0(a_t|s_t), and
//
//	X_i = w_i (V_i - lo)/(hi - lo) >= 0,   E[X_i] = (v - lo)/(hi - lo),
//
// v the target's horizon value. The lower bound clips X at c and applies
// Maurer and Pontil's empirical Bernstein bound to Y_i = min(X_i, c) in
// [0, c]; clipping only lowers the mean, so the bound stays one on v
// (Thomas et al., Theorem 1 with equal c_i):
//
//	E[X] >= mean(Y) - 7 c ln(2/delta) / (3(n-1))
//	        - sqrt(2 ln(2/delta) (n sum Y^2 - (sum Y)^2) / (n^2 (n-1))).
//
// The upper bound is the same bound on X'_i = w_i (hi - V_i)/(hi - lo).
// The clip c is chosen on a held-out part of the episodes (HeldOut, drawn
// with Seed): the c that maximises the bound the formula predicts from the
// held-out episodes' mean and variance with the number of the remaining
// episodes; the bound is then computed on the remaining episodes alone,
// so the choice does not spend the guarantee.
//
// The bound is for the horizon value: every episode must be as long as
// the horizon, or end in a terminal state (an absorbing state of reward 0
// afterwards, which must lie in the range).
//
// References:
//
//	Thomas, Theocharous, Ghavamzadeh (2015). High Confidence Off-Policy
//	Evaluation. AAAI. Theorem 1 and Section 5 (the choice of c).
//	Maurer, Pontil (2009). Empirical Bernstein bounds and sample variance
//	penalization. COLT. Theorem 4.
type HCOPE struct {
	// RewardLow and RewardHigh are the range every reward lies in.
	RewardLow, RewardHigh float64
	// Alpha is 1 - the confidence of the two bounds together (0: 0.05).
	Alpha float64
	// HeldOut is the share of episodes that choose the clip (0: 0.2).
	HeldOut float64
	// Seed draws the held-out episodes.
	Seed uint64
}

// hcopeStream is the PCG stream of HCOPE's held-out split ("hcope-sp").
const hcopeStream = 0x68636f70652d7370

// Name returns "hcope".
func (HCOPE) Name() string { return "hcope" }

// Estimand returns Horizon: HCOPE bounds the T-step value.
func (HCOPE) Estimand() Estimand { return Horizon }

// Bounds returns the lower and upper bounds on the horizon value of the
// target on d at discount gamma.
func (h HCOPE) Bounds(d *dataset.Dataset, gamma float64) (Bound, error) {
	const name = "hcope"
	lo, hi := h.RewardLow, h.RewardHigh
	if err := boundRange(name, lo, hi); err != nil {
		return Bound{}, err
	}
	alpha, err := boundAlpha(name, h.Alpha)
	if err != nil {
		return Bound{}, err
	}
	held := h.HeldOut
	if held == 0 {
		held = 0.2
	}
	if !(held > 0 && held < 1) {
		return Bound{}, fmt.Errorf("%s: held-out share %v outside (0, 1)", name, held)
	}
	if err := checkGamma(gamma); err != nil {
		return Bound{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkEpisodes(name, d); err != nil {
		return Bound{}, err
	}
	if err := checkBehavior(name, d); err != nil {
		return Bound{}, err
	}
	if err := rewardsWithin(name, d, lo, hi); err != nil {
		return Bound{}, err
	}
	a, err := absorbing(name, d, gamma, Horizon)
	if err != nil {
		return Bound{}, err
	}
	d = a.d
	m := d.NumEpisodes()
	T := d.Len(0)
	for e := range m {
		if d.Len(e) != T {
			return Bound{}, fmt.Errorf("%s: episodes of %d and %d steps: the horizon value's bound needs every episode as long as the horizon (or ended in a terminal state)", name, T, d.Len(e))
		}
	}
	if m < 10 {
		return Bound{}, fmt.Errorf("%s: %d episodes; the bound needs at least 10", name, m)
	}
	lower := make([]float64, m) // X_i
	upper := make([]float64, m) // X'_i
	for i := range m {
		l, v, err := walkEpisode(name, d, i, gamma, nil)
		if err != nil {
			return Bound{}, err
		}
		w := math.Exp(l)
		if math.IsInf(w, 1) {
			w = math.MaxFloat64 // clipped below in any case
		}
		lower[i] = w * (v - lo) / (hi - lo)
		upper[i] = w * (hi - v) / (hi - lo)
	}
	// The held-out split, in the ids' natural order so that the same
	// episodes exported in another order give the same bound.
	order := d.IDOrder()
	rng := rand.New(rand.NewPCG(h.Seed, hcopeStream))
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	nPre := int(math.Round(held * float64(m)))
	nPre = max(2, min(nPre, m-2))
	pre, post := order[:nPre], order[nPre:]
	delta := alpha / 2
	pick := func(x []float64, idx []int) []float64 {
		out := make([]float64, len(idx))
		for k, i := range idx {
			out[k] = x[i]
		}
		return out
	}
	side := func(x []float64) float64 {
		c := ChooseClip(pick(x, pre), len(post), delta)
		return EmpiricalBernsteinLower(pick(x, post), c, delta)
	}
	low := lo + (hi-lo)*side(lower)
	high := hi - (hi-lo)*side(upper)
	// A bound outside what the rewards allow says nothing beyond the range.
	low, high = max(low, lo), min(high, hi)
	return Bound{Low: low, High: high, Level: 1 - alpha, Method: name, Guaranteed: true,
		Assumes: "independent episodes, the logged behavior probabilities, every reward within the stated range"}, nil
}

// EmpiricalBernsteinLower returns the lower bound on E[X] for X >= 0 of
// Thomas et al.'s Theorem 1 with every c_i = c, from the sample x: with
// probability at least 1 - delta,
//
//	E[X] >= mean(Y) - 7 c ln(2/delta)/(3(n-1)) - sqrt(2 ln(2/delta) S / n),
//
// Y = min(X, c) and S the sample variance of Y (divisor n - 1). It
// returns -Inf for fewer than 2 values or c <= 0.
func EmpiricalBernsteinLower(x []float64, c, delta float64) float64 {
	if len(x) < 2 || !(c > 0) {
		return math.Inf(-1)
	}
	return predictedBound(x, c, len(x), delta)
}

// predictedBound is the empirical Bernstein lower bound for n values whose
// clipped mean and sample variance are those of min(x, c): the bound
// itself when n = len(x), its prediction for n others when x is held out.
func predictedBound(x []float64, c float64, n int, delta float64) float64 {
	var sum, sumSq float64
	for _, v := range x {
		y := min(v, c)
		sum += y
		sumSq += y * y
	}
	k := float64(len(x))
	mean := sum / k
	s := 0.0
	if len(x) > 1 {
		s = max(0, (sumSq-sum*mean)/(k-1))
	}
	nn, l := float64(n), math.Log(2/delta)
	return mean - 7*c*l/(3*(nn-1)) - math.Sqrt(2*l*s/nn)
}

// ChooseClip returns the clip c that maximises the bound predicted for n
// episodes from the held-out sample x: its mean and variance of min(X, c)
// taken as the remaining episodes' (Thomas et al., Section 5). The
// candidates are the held-out values themselves (the predicted bound is
// piecewise smooth between them) and 1, the clip of a target equal to the
// behavior.
func ChooseClip(x []float64, n int, delta float64) float64 {
	cands := append(slices.Clone(x), 1)
	slices.Sort(cands)
	cands = slices.Compact(cands)
	best, bestC := math.Inf(-1), 1.0
	for _, c := range cands {
		if !(c > 0) || math.IsInf(c, 1) {
			continue
		}
		if b := predictedBound(x, c, n, delta); b > best {
			best, bestC = b, c
		}
	}
	return bestC
}
