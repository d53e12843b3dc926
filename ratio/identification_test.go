package ratio_test

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/env/pendulum"
	"github.com/ihope-ope/ihope/internal/minimax"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/rollout"
)

// flowTest is the data's own test of a ratio w against the kernel loss of
// Theorem 2: the cross-episode U-statistic
//
//	U = sum_{e != e'} <g_e, g_e'> / Z^2,   g_e = sum_{i in e} rho_i Delta_i psi(x'_i),
//
// in D random Fourier features psi of the Gaussian kernel of bandwidth h
// (scaled states), with the weights rho and dummies of Algorithm 2 for
// gamma < 1 (Delta_i = (w(s_i) beta_i - w(s'_i))/z, z the rho-weighted
// mean of w; a dummy into s_0 has Delta = 1 - w(s_0)/z). Episodes are
// independent, so U is unbiased for the population loss whatever the
// dependence within an episode, and under a ratio that satisfies the flow
// equation (population loss 0) its standard error is
// sqrt(2 sum_{e != e'} <g_e, g_e'>^2)/Z^2. It returns U and that error.
func flowTest(t *testing.T, d *dataset.Dataset, gamma, h float64, w func([][]float64) []float64) (u, se float64) {
	t.Helper()
	const D = 256
	mean, scale := minimax.Scaling(d)
	dim := d.StateDim
	rng := rand.New(rand.NewPCG(7, 7))
	omega, phase := make([]float64, D*dim), make([]float64, D)
	for k := range omega {
		omega[k] = rng.NormFloat64() / h
	}
	for k := range phase {
		phase[k] = 2 * math.Pi * rng.Float64()
	}
	psi := func(dst, obs []float64) {
		for k := range D {
			a := phase[k]
			for c := range dim {
				a += omega[k*dim+c] * (obs[c] - mean[c]) / scale[c]
			}
			dst[k] = math.Sqrt(2.0/D) * math.Cos(a)
		}
	}
	// The transitions: s, s', beta, rho, episode, dummy.
	var s, next [][]float64
	var beta, rho []float64
	var ep []int
	var dummy []bool
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		if gamma < 1 {
			s, next = append(s, d.ObsAt(lo)), append(next, d.ObsAt(lo))
			beta, rho, ep, dummy = append(beta, 0), append(rho, 1), append(ep, e), append(dummy, true)
		}
		g := gamma
		for j := lo; j < hi; j++ {
			if nx, ok := d.NextObs(e, j); ok {
				s, next = append(s, d.ObsAt(j)), append(next, nx)
				beta = append(beta, math.Exp(d.LogRatio(j)))
				rho, ep, dummy = append(rho, g), append(ep, e), append(dummy, false)
			}
			g *= gamma
		}
	}
	ws, wn := w(s), w(next)
	z, zw := 0.0, 0.0
	for i, dm := range dummy {
		if !dm {
			z += rho[i] * ws[i]
			zw += rho[i]
		}
	}
	z /= zw
	E := d.NumEpisodes()
	g := make([]float64, E*D)
	f := make([]float64, D)
	Z := 0.0
	for i := range s {
		delta := (beta[i]*ws[i] - wn[i]) / z
		if dummy[i] {
			delta = 1 - wn[i]/z
		}
		Z += rho[i]
		psi(f, next[i])
		ge := g[ep[i]*D : (ep[i]+1)*D]
		for k, v := range f {
			ge[k] += rho[i] * delta * v
		}
	}
	var cross, v2 float64
	for a := range E {
		for b := a + 1; b < E; b++ {
			dot := 0.0
			for k := range D {
				dot += g[a*D+k] * g[b*D+k]
			}
			cross += 2 * dot
			v2 += 2 * 2 * dot * dot
		}
	}
	return cross / (Z * Z), math.Sqrt(v2) / (Z * Z)
}

// TestDiscountedPendulumNotIdentified is the measurement behind the known
// limit of Neural (and Kernel) on Pendulum at gamma = 0.99 (the README's
// Pendulum logs, n = 150, T = 1000, alpha = 1; truth -1.451, long-run
// value -0.009): ratios whose estimates lie more than 1 apart all pass the
// data's own test of the kernel loss (|U| < 2 SE, flowTest, the kernel of
// Neural's loss), so no learner that minimises that loss can locate the
// discounted value on such a log. Per data seed it fits Kernel at ridges
// 1e-6 to 100 and one network (Neural's defaults), keeps the fits the test
// accepts and asserts that their estimates span more than 0.6 on every
// seed and more than 0.9 on three of the four (measured: 1.02, 1.14, 0.71,
// 1.32; step-wise WIS's mean |error| over 20 seeds is 0.55). As a
// contrast, at gamma = 1 it asserts that the test rejects w = 1 (z > 2)
// on each seed (z 3.9, 2.3, 6.2, 4.9), where the loss does locate the
// long-run value. IHOPE_LONG=1 (about 3 minutes on 2 cores).
func TestDiscountedPendulumNotIdentified(t *testing.T) {
	if os.Getenv("IHOPE_LONG") != "1" {
		t.Skip("set IHOPE_LONG=1 to run (about 3 minutes)")
	}
	world, target := pendulum.Pendulum{}, pendulum.DefaultTarget()
	behavior, err := pendulum.Behavior(1)
	if err != nil {
		t.Fatal(err)
	}
	wide := 0
	for seed := range 4 {
		d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(uint64(seed)+1, 91)), world, behavior, target, 150, 1000)
		if err != nil {
			t.Fatal(err)
		}
		nm, err := ratio.Neural{Seed: 1}.Fit(d, 0.99)
		if err != nil {
			t.Fatal(err)
		}
		net := nm.(*ratio.NeuralModel)
		h := net.Bandwidth
		one := func(obs [][]float64) []float64 {
			w := make([]float64, len(obs))
			for i := range w {
				w[i] = 1
			}
			return w
		}
		if u, se := flowTest(t, d, 1, h, one); !(u > 2*se) {
			t.Errorf("seed %d, gamma 1: the test does not reject w = 1 (U %.3g, SE %.3g)", seed, u, se)
		} else {
			t.Logf("seed %d, gamma 1: w = 1: U %.3g, SE %.3g, z %.2f", seed, u, se, u/se)
		}
		type fit struct {
			name string
			m    ratio.Model
			at   func([][]float64) []float64
		}
		fits := []fit{{"network", net, func(obs [][]float64) []float64 {
			w, err := net.RatioBatch(obs)
			if err != nil {
				t.Fatal(err)
			}
			return w
		}}}
		for _, ridge := range []float64{1e-6, 1e-2, 1, 100} {
			km, err := ratio.Kernel{Ridge: ridge}.Fit(d, 0.99)
			if err != nil {
				t.Fatal(err)
			}
			k := km.(*ratio.KernelModel)
			fits = append(fits, fit{"kernel, ridge " + strconv.FormatFloat(ridge, 'g', -1, 64), k, func(obs [][]float64) []float64 {
				w := make([]float64, len(obs))
				for i, o := range obs {
					w[i] = k.Ratio(o)
				}
				return w
			}})
		}
		var accepted []float64
		for _, f := range fits {
			u, se := flowTest(t, d, 0.99, h, f.at)
			w, err := f.m.StepRatios(d)
			if err != nil {
				t.Fatal(err)
			}
			v := discountedEstimate(d, 0.99, w)
			t.Logf("seed %d, gamma 0.99: %s: estimate %.3f, U %.3g, SE %.3g, z %.2f", seed, f.name, v, u, se, u/se)
			if math.Abs(u) < 2*se {
				accepted = append(accepted, v)
			}
		}
		if len(accepted) < 2 {
			t.Errorf("seed %d: %d fits accepted", seed, len(accepted))
			continue
		}
		lo, hi := slices.Min(accepted), slices.Max(accepted)
		t.Logf("seed %d: accepted estimates from %.3f to %.3f (truth -1.451)", seed, lo, hi)
		if hi-lo < 0.6 {
			t.Errorf("seed %d: accepted estimates span %.3f, want > 0.6", seed, hi-lo)
		}
		if hi-lo > 0.9 {
			wide++
		}
	}
	if wide < 3 {
		t.Errorf("accepted estimates span more than 0.9 on %d of 4 seeds, want 3", wide)
	}
}

// discountedEstimate is the density-ratio estimate sum gamma^t w beta r /
// sum gamma^t w beta over the logged steps (ope's ratioEstimate, without
// its log-space scaling).
func discountedEstimate(d *dataset.Dataset, gamma float64, w []float64) float64 {
	var num, den float64
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		g := 1.0
		for j := lo; j < hi; j++ {
			v := g * w[j] * math.Exp(d.LogRatio(j))
			num += v * d.Reward[j]
			den += v
			g *= gamma
		}
	}
	return num / den
}
