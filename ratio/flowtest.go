package ratio

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/kernelloss"
)

// FlowTest is the log's own test of a density ratio w against the flow
// equation behind the kernel loss (Theorem 2 of the paper; Algorithm 2's
// weights for gamma < 1): on episodes that w was not fitted on, the
// cross-episode U-statistic
//
//	U = sum_{e != e'} <g_e, g_e'>,   g_e = sum_{i in e} rho_i Delta_i psi(x'_i),
//
// with Delta_i = w(s_i) beta_i / z - w(s'_i) / z (z the rho-weighted mean
// of w over the logged states; a dummy transition into each episode's
// first state, Delta = 1 - w(s_0)/z, at gamma < 1) and psi random Fourier
// features of the Gaussian kernel on the scaled states. Episodes are
// independent, so under a ratio that satisfies the flow equation every
// g_e has mean zero and the law of U is unchanged by flipping the signs
// of whole episodes: the p-value is the share of sign flips whose U is at
// least the observed one (Pesarin and Salmaso's sign-flip test). A fit
// scored on the episodes it was fitted on passes too often (on discounted
// Pendulum 2 of 16 fits were rejected in sample, 9 of 16 held out).
type FlowTest struct {
	// Bandwidth of the kernel on the scaled states; 0 takes the median
	// of the pairwise distances of up to 1,000 logged next states.
	Bandwidth float64
	// Features is the number of random Fourier features (0: 256).
	Features int
	// Flips is the number of random sign flips (0: 999).
	Flips int
	// Seed seeds the features, the median's sample and the flips.
	Seed uint64
}

// FlowResult is FlowTest's verdict on one ratio.
type FlowResult struct {
	// U is the statistic; Z its value over the sign flips' standard
	// deviation (the effect's size in the flips' units).
	U, Z float64
	// P is the sign-flip p-value: small says w does not satisfy the
	// flow equation on these episodes.
	P float64
	// Units is the number of episodes (or blocks of one episode) flipped.
	Units int
}

// Run tests w (given the batch of states, it returns w at each) on the
// episodes of d at discount gamma. With one episode its blocks of
// sqrt(T) steps are the units flipped, which assumes steps further apart
// are nearly independent.
func (f FlowTest) Run(d *dataset.Dataset, gamma float64, w func(obs [][]float64) ([]float64, error)) (FlowResult, error) {
	ft, err := newFlowTransitions(d, gamma)
	if err != nil {
		return FlowResult{}, err
	}
	ws, err := w(ft.s)
	if err != nil {
		return FlowResult{}, err
	}
	wn, err := w(ft.next)
	if err != nil {
		return FlowResult{}, err
	}
	z, zw := 0.0, 0.0
	for i, dm := range ft.dummy {
		if !dm {
			z += ft.rho[i] * ws[i]
			zw += ft.rho[i]
		}
	}
	z /= zw
	if !(z > 0) {
		return FlowResult{}, fmt.Errorf("ratio: the ratio's mean over the logged states is %v", z)
	}
	rng := f.rng()
	newPsi, D, err := f.features(rng, ft)
	if err != nil {
		return FlowResult{}, err
	}
	psi := newPsi()
	G := make([]float64, ft.units*D)
	x := make([]float64, D)
	for i := range ft.s {
		delta := (ft.beta[i]*ws[i] - wn[i]) / z
		if ft.dummy[i] {
			delta = 1 - wn[i]/z
		}
		psi(ft.next[i], x)
		floats.AddScaled(G[ft.unit[i]*D:(ft.unit[i]+1)*D], ft.rho[i]*delta, x)
	}
	u, p, zs := flipU(G, ft.units, D, f.flips(), rng)
	return FlowResult{U: u, P: p, Z: zs, Units: ft.units}, nil
}

// flowTransitions are the flow test's transitions of a log: state s,
// next state, beta, rho (gamma^(t+1), 1 for a dummy), the unit (episode,
// or block of one episode) each belongs to, and whether it is an
// episode's dummy transition into its first state (gamma < 1).
type flowTransitions struct {
	dim          int
	mean, scale  []float64
	s, next      [][]float64
	beta, rho    []float64
	unit         []int
	dummy        []bool
	units, block int
}

func newFlowTransitions(d *dataset.Dataset, gamma float64) (*flowTransitions, error) {
	if d.StateDim == 0 {
		return nil, errors.New("ratio: the flow test needs real-valued states")
	}
	if !(gamma > 0 && gamma <= 1) {
		return nil, fmt.Errorf("ratio: discount %v outside (0, 1]", gamma)
	}
	ft := &flowTransitions{dim: d.StateDim, units: d.NumEpisodes()}
	ft.mean, ft.scale = kernelloss.Scaling(d)
	if ft.units == 1 {
		ft.block = max(1, int(math.Sqrt(float64(d.NumSteps()))))
		ft.units = (d.NumSteps() + ft.block - 1) / ft.block
	}
	add := func(s, next []float64, beta, rho float64, unit int, dummy bool) {
		ft.s, ft.next = append(ft.s, s), append(ft.next, next)
		ft.beta, ft.rho = append(ft.beta, beta), append(ft.rho, rho)
		ft.unit, ft.dummy = append(ft.unit, unit), append(ft.dummy, dummy)
	}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		u := func(j int) int {
			if ft.block > 0 {
				return (j - lo) / ft.block
			}
			return e
		}
		if gamma < 1 && hi > lo {
			add(d.ObsAt(lo), d.ObsAt(lo), 0, 1, u(lo), true)
		}
		g := gamma
		for j := lo; j < hi; j++ {
			if nx, ok := d.NextObs(e, j); ok {
				add(d.ObsAt(j), nx, math.Exp(d.LogRatio(j)), g, u(j), false)
			}
			g *= gamma
		}
	}
	if ft.units < 2 || len(ft.s) == 0 {
		return nil, fmt.Errorf("ratio: the flow test needs at least two episodes (or a long episode), got %d units", ft.units)
	}
	return ft, nil
}

// scaled writes obs scaled to the log's mean and scale into x.
func (ft *flowTransitions) scaled(obs, x []float64) {
	for c := range x {
		x[c] = (obs[c] - ft.mean[c]) / ft.scale[c]
	}
}

// rng is the test's random stream: the median's sample, the features,
// then the flips.
func (f FlowTest) rng() *rand.Rand { return rand.New(rand.NewPCG(f.Seed, 0x666c6f77)) } // "flow"

// flips is the number of sign flips.
func (f FlowTest) flips() int {
	if f.Flips <= 0 {
		return 999
	}
	return f.Flips
}

// features draws the test's random Fourier features of the Gaussian
// kernel on the scaled states (the bandwidth the median of the pairwise
// distances of up to 1,000 logged next states unless given): newPsi()
// returns a psi, for one goroutine, such that psi(obs, dst) writes the D
// features of a state into dst.
func (f FlowTest) features(rng *rand.Rand, ft *flowTransitions) (newPsi func() func(obs, dst []float64), D int, err error) {
	D = f.Features
	if D <= 0 {
		D = 256
	}
	dim := ft.dim
	h := f.Bandwidth
	if h <= 0 {
		var x []float64
		row := make([]float64, dim)
		for i, dm := range ft.dummy {
			if !dm {
				ft.scaled(ft.next[i], row)
				x = append(x, row...)
			}
		}
		if h, err = kernelloss.Median(rng, x, dim, 1000); err != nil {
			return nil, 0, fmt.Errorf("ratio: %w", err)
		}
	}
	omega, phase := make([]float64, D*dim), make([]float64, D)
	for k := range omega {
		omega[k] = rng.NormFloat64() / h
	}
	for k := range phase {
		phase[k] = 2 * math.Pi * rng.Float64()
	}
	amp := math.Sqrt(2 / float64(D))
	return func() func(obs, dst []float64) {
		x := make([]float64, dim)
		return func(obs, dst []float64) {
			ft.scaled(obs, x)
			for k := range D {
				a := phase[k]
				for c := range dim {
					a += omega[k*dim+c] * x[c]
				}
				dst[k] = amp * math.Cos(a)
			}
		}
	}, D, nil
}

// flipU returns the cross-unit U-statistic sum_{a != b} <G_a, G_b> of the
// units' rows of G (units x D), its sign-flip p-value over flips random
// signs of whole units, and its value over the flips' standard deviation.
func flipU(G []float64, units, D, flips int, rng *rand.Rand) (u, p, z float64) {
	// K = G G^T; U(eps) = eps^T K eps - trace K.
	K := make([]float64, units*units)
	for a := range units {
		for b := a; b < units; b++ {
			dot := floats.Dot(G[a*D:(a+1)*D], G[b*D:(b+1)*D])
			K[a*units+b], K[b*units+a] = dot, dot
		}
	}
	stat := func(eps []float64) float64 {
		u := 0.0
		for a := range units {
			row := 0.0
			for b := range units {
				if b != a {
					row += K[a*units+b] * eps[b]
				}
			}
			u += eps[a] * row
		}
		return u
	}
	ones := make([]float64, units)
	for i := range ones {
		ones[i] = 1
	}
	u = stat(ones)
	eps := make([]float64, units)
	above := 0
	var m, m2 float64
	for b := range flips {
		for i := range eps {
			eps[i] = float64(2*int(rng.Uint64()&1) - 1)
		}
		v := stat(eps)
		if v >= u {
			above++
		}
		dv := v - m
		m += dv / float64(b+1)
		m2 += dv * (v - m)
	}
	p = float64(1+above) / float64(1+flips)
	if sd := math.Sqrt(m2 / float64(flips-1)); sd > 0 {
		z = u / sd
	}
	return u, p, z
}
