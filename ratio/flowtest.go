package ratio

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

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
	if d.StateDim == 0 {
		return FlowResult{}, errors.New("ratio: the flow test needs real-valued states")
	}
	if !(gamma > 0 && gamma <= 1) {
		return FlowResult{}, fmt.Errorf("ratio: discount %v outside (0, 1]", gamma)
	}
	D, B := f.Features, f.Flips
	if D <= 0 {
		D = 256
	}
	if B <= 0 {
		B = 999
	}
	rng := rand.New(rand.NewPCG(f.Seed, 0x666c6f77)) // "flow"
	mean, scale := kernelloss.Scaling(d)
	dim := d.StateDim
	scaled := func(obs []float64) []float64 {
		x := make([]float64, dim)
		for c := range x {
			x[c] = (obs[c] - mean[c]) / scale[c]
		}
		return x
	}
	// The transitions: s, s', beta, rho, unit, dummy.
	var s, next [][]float64
	var beta, rho []float64
	var unit []int
	var dummy []bool
	units := d.NumEpisodes()
	block := 0
	if units == 1 {
		block = max(1, int(math.Sqrt(float64(d.NumSteps()))))
		units = (d.NumSteps() + block - 1) / block
	}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		u := func(j int) int {
			if block > 0 {
				return (j - lo) / block
			}
			return e
		}
		if gamma < 1 && hi > lo {
			s, next = append(s, d.ObsAt(lo)), append(next, d.ObsAt(lo))
			beta, rho, unit, dummy = append(beta, 0), append(rho, 1), append(unit, u(lo)), append(dummy, true)
		}
		g := gamma
		for j := lo; j < hi; j++ {
			if nx, ok := d.NextObs(e, j); ok {
				s, next = append(s, d.ObsAt(j)), append(next, nx)
				beta = append(beta, math.Exp(d.LogRatio(j)))
				rho, unit, dummy = append(rho, g), append(unit, u(j)), append(dummy, false)
			}
			g *= gamma
		}
	}
	if units < 2 || len(s) == 0 {
		return FlowResult{}, fmt.Errorf("ratio: the flow test needs at least two episodes (or a long episode), got %d units", units)
	}
	ws, err := w(s)
	if err != nil {
		return FlowResult{}, err
	}
	wn, err := w(next)
	if err != nil {
		return FlowResult{}, err
	}
	z, zw := 0.0, 0.0
	for i, dm := range dummy {
		if !dm {
			z += rho[i] * ws[i]
			zw += rho[i]
		}
	}
	z /= zw
	if !(z > 0) {
		return FlowResult{}, fmt.Errorf("ratio: the ratio's mean over the logged states is %v", z)
	}
	h := f.Bandwidth
	if h <= 0 {
		var x []float64
		for i, dm := range dummy {
			if !dm {
				x = append(x, scaled(next[i])...)
			}
		}
		if h, err = kernelloss.Median(rng, x, dim, 1000); err != nil {
			return FlowResult{}, fmt.Errorf("ratio: %w", err)
		}
	}
	omega, phase := make([]float64, D*dim), make([]float64, D)
	for k := range omega {
		omega[k] = rng.NormFloat64() / h
	}
	for k := range phase {
		phase[k] = 2 * math.Pi * rng.Float64()
	}
	G := make([]float64, units*D)
	for i := range s {
		delta := (beta[i]*ws[i] - wn[i]) / z
		if dummy[i] {
			delta = 1 - wn[i]/z
		}
		x := scaled(next[i])
		ge := G[unit[i]*D : (unit[i]+1)*D]
		for k := range D {
			a := phase[k]
			for c := range dim {
				a += omega[k*dim+c] * x[c]
			}
			ge[k] += rho[i] * delta * math.Sqrt(2/float64(D)) * math.Cos(a)
		}
	}
	// K = G G^T; U(eps) = eps^T K eps - trace K.
	K := make([]float64, units*units)
	for a := range units {
		for b := a; b < units; b++ {
			dot := 0.0
			for k := range D {
				dot += G[a*D+k] * G[b*D+k]
			}
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
	res := FlowResult{U: stat(ones), Units: units}
	eps := make([]float64, units)
	above := 0
	var m, m2 float64
	for b := range B {
		for i := range eps {
			eps[i] = float64(2*int(rng.Uint64()&1) - 1)
		}
		v := stat(eps)
		if v >= res.U {
			above++
		}
		dv := v - m
		m += dv / float64(b+1)
		m2 += dv * (v - m)
	}
	res.P = float64(1+above) / float64(1+B)
	if sd := math.Sqrt(m2 / float64(B-1)); sd > 0 {
		res.Z = res.U / sd
	}
	return res, nil
}
