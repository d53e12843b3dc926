package value

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/internal/settings"
)

// MinimaxNeural holds the settings of the neural forms of the minimax
// learners: MQL here, ratio.MWL and ratio.DualDICE in package ratio. The
// network maps the standardised state x = (s - mean)/sd (over the logged
// states) to one output per action; it is trained by Adam on the
// learner's kernel loss (the same loss as the closed-form fit, the
// squared RKHS norm of a signed measure, see MQL and ratio.MWL) over a
// sample of BatchSize transitions, each sample held for SampleIters
// steps, with the kernel replaced by Features random Fourier features
// (kernelloss.FeatureLoss). The zero value is ready to use; zero fields take
// the documented defaults.
//
// Why these settings. The first version drew a fresh minibatch of 256
// every step, minimised its U-statistic (exact kernel) and stopped early
// on a held-out U-statistic; on the discrete-action linear-Gaussian
// problem (lineargauss.DiscreteProblem, 160 episodes of 100 steps, seed 1)
// its errors were -0.57 (mwl), -0.63 (dualdice), -0.70 (mql) at
// gamma = 0.9. The loss was not to blame: on 4096 transitions the true
// ratio's loss (quadrature) was 0.001 against 0.23 for w = 1. The
// estimate of the loss was: on a batch of 256 its U-statistic moved by
// 0.005-0.01 between batches at the true ratio, ten times the
// differences that decide the tail of w (flooring the true w at 0.07
// raised the loss by 7e-4 and moved the estimate by -0.15), so the
// gradient was mostly noise and early stopping picked whatever iterate
// the held-out noise favoured. Measured changes, one at a time (mwl,
// gamma = 0.9, n = 160, error against the truth):
//
//   - one sample held for 100 steps, 1000 steps (the objective is then
//     deterministic between draws, as in ratio.Neural): exact kernel,
//     1024 transitions: -0.31 (V-statistic); the U-statistic on a held
//     sample is unbounded below and ran away (+0.36, one w of 764);
//   - random Fourier features, whose cost is linear in the sample: 4096,
//     8192, 16384 transitions: -0.15, -0.16, -0.16 (median bandwidth);
//     3000 steps, a learning rate of 3e-2 or 64-unit layers: -0.15 to
//     -0.17;
//   - half the median bandwidth: -0.09 (a quarter: -0.07); gamma = 1
//     -0.08; seeds 2 and 3 -0.13 and -0.09; the same change took mql from
//     -0.33 to +0.04.
//
// The kernel forms are not sensitive to the bandwidth (mwl's error moved
// by less than 0.01 between the median and a quarter of it). What is left
// of the neural error is the network's: its exponential output stays
// above about 0.007 where the true w is below 1e-6 (a floor of 0.01
// costs about -0.02), and a signed output (w = 1 + net) was worse
// (-0.29 at n = 20).
//
// Training is deterministic: the same Seed, data and settings give
// bit-identical models (one goroutine, sums in a fixed order, the matrix
// kernels of package nn giving the same bits with or without assembly).
type MinimaxNeural struct {
	// Seed seeds the held-out split, the initial weights, the bandwidth
	// sample, the random features and the samples.
	Seed uint64
	// Hidden lists the hidden layer widths (tanh units). If nil, {32, 32}.
	Hidden []int
	// BatchSize is B, the transitions of a sample (and, for MWL and
	// DualDICE with gamma < 1, at most as many start states): all of them
	// when there are no more. If 0, 4096 (8192 and 16384 were no better,
	// see above; the cost per step is linear in B).
	BatchSize int
	// SampleIters is the number of Adam steps on one sample before the
	// next is drawn. If 0, 100 (ratio.Neural's).
	SampleIters int
	// LearningRate is Adam's step size. If 0, 1e-2 (3e-3 moved mql's
	// error by 0.01-0.02).
	LearningRate float64
	// MaxIter is the number of training steps (their cap with HeldOut >
	// 0). If 0, 1000.
	MaxIter int
	// EvalEvery is the number of iterations between evaluations of the
	// held-out loss (with HeldOut > 0). If 0, 50.
	EvalEvery int
	// Patience is the number of evaluations without improvement of the
	// held-out loss after which training stops. If 0, 20.
	Patience int
	// Average, if positive, is the time constant in iterations of the
	// moving average of the parameters that is then the model
	// (kernelloss.Schedule). If 0, the online parameters are the model.
	Average int
	// HeldOut, if positive, is the fraction of the data kept aside for
	// early stopping on its loss: whole episodes when there are at least
	// 1/HeldOut of them, else the last steps of every episode. If 0,
	// nothing is held out and training runs MaxIter steps: the held-out
	// loss's noise hid the differences that matter (see above).
	HeldOut float64
	// Bandwidth is the kernel bandwidth h in standardised units. If 0,
	// half the median heuristic over BandwidthSample logged states (see
	// above; ratio.Neural's choice too).
	Bandwidth float64
	// Features is the number of random Fourier features of the kernel
	// (kernelloss.FeatureLoss). If 0, 256 (64 gave the same error to 0.01 on
	// the test above, median bandwidth).
	Features int
	// BandwidthSample is the number of states whose pairwise distances
	// give the median heuristic. If 0, 1000.
	BandwidthSample int
	// Ridge is DualDICE's weight lambda of E_D[w^2] in its loss (see
	// ratio.DualDICE); 0 takes DefaultNeuralDICERidge. MWL and MQL ignore
	// it. It must not be negative.
	Ridge float64
}

// DefaultNeuralDICERidge is the neural DualDICE's weight of E_D[w^2]:
// at 1e-3 (the first version's) its pull towards a flat w cost -0.15 at
// n = 20 on the test above, at 1e-4 and 1e-5 its error was mwl's to 0.004.
const DefaultNeuralDICERidge = 1e-4

// Resolve returns s with its defaults filled in, or an error naming the
// first setting out of range (who prefixes it: "ratio: mwl").
func (s MinimaxNeural) Resolve(who string) (MinimaxNeural, error) {
	if s.Hidden == nil {
		s.Hidden = []int{32, 32}
	}
	for _, h := range s.Hidden {
		if h <= 0 {
			return s, fmt.Errorf("%s: hidden widths %v, want positive", who, s.Hidden)
		}
	}
	for _, f := range []error{
		settings.Int(who, &s.BatchSize, 4096, "batch size"), settings.Int(who, &s.MaxIter, 1000, "iteration cap"),
		settings.Int(who, &s.SampleIters, 100, "iterations per sample"), settings.Int(who, &s.Features, 256, "features"),
		settings.Int(who, &s.EvalEvery, 50, "evaluation period"), settings.Int(who, &s.Patience, 20, "patience"),
		settings.Int(who, &s.BandwidthSample, 1000, "bandwidth sample"),
	} {
		if f != nil {
			return s, f
		}
	}
	if s.Average < 0 {
		return s, fmt.Errorf("%s: average %d, want >= 0", who, s.Average)
	}
	if s.BatchSize < 2 || s.BandwidthSample < 2 {
		return s, fmt.Errorf("%s: batch size %d and bandwidth sample %d, want >= 2", who, s.BatchSize, s.BandwidthSample)
	}
	for _, v := range []struct {
		name string
		p    *float64
		def  float64
	}{{"learning rate", &s.LearningRate, 1e-2}, {"bandwidth", &s.Bandwidth, 0}, {"ridge", &s.Ridge, DefaultNeuralDICERidge}} {
		if !(*v.p >= 0) || math.IsInf(*v.p, 0) {
			return s, fmt.Errorf("%s: %s %v, want a finite value >= 0", who, v.name, *v.p)
		}
		if *v.p == 0 {
			*v.p = v.def
		}
	}
	if !(s.HeldOut >= 0) || s.HeldOut >= 1 {
		return s, fmt.Errorf("%s: held-out fraction %v, want 0 <= f < 1", who, s.HeldOut)
	}
	return s, nil
}
