package value

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/internal/settings"
)

// MinimaxNeural holds the settings of the neural forms of the minimax
// learners: MQL here, ratio.MWL and ratio.DualDICE in package ratio. The
// network maps the standardised state x = (s - mean)/sd (over the logged
// states) to one output per action; it is trained by Adam on minibatch
// estimates of the learner's kernel loss (the same loss as the
// closed-form fit, the squared RKHS norm of a signed measure, see
// MQL and ratio.MWL), with held-out early stopping. The zero value is
// ready to use; zero fields take the documented defaults.
//
// Training is deterministic: the same Seed, data and settings give
// bit-identical models (one goroutine, sums in a fixed order, the matrix
// kernels of package nn giving the same bits with or without assembly).
type MinimaxNeural struct {
	// Seed seeds the held-out split, the initial weights, the bandwidth
	// sample and the minibatches.
	Seed uint64
	// Hidden lists the hidden layer widths (tanh units). If nil, {32, 32}.
	Hidden []int
	// BatchSize is B, the transitions of a sample (and, for MWL and
	// DualDICE with gamma < 1, the start states). If 0, 1024.
	BatchSize int
	// SampleIters is the number of Adam steps on one sample before the
	// next is drawn. If 0, 100.
	SampleIters int
	// LearningRate is Adam's step size. If 0, 1e-2: on the
	// discrete-action linear-Gaussian problem 1e-3 left mwl's estimate
	// near the behavior's mean reward after 3000 iterations (the kernel
	// loss is flat near its minimum, see ratio.MWL).
	LearningRate float64
	// MaxIter caps the training iterations. If 0, 1000.
	MaxIter int
	// EvalEvery is the number of iterations between evaluations of the
	// held-out loss. If 0, 50.
	EvalEvery int
	// Patience is the number of evaluations without improvement of the
	// held-out loss after which training stops. If 0, 20.
	Patience int
	// Average, if positive, is the time constant in iterations of the
	// moving average of the parameters that is then the model
	// (minimax.Schedule). If 0, the online parameters are the model (on
	// the test above, averaging over 1000 iterations gave -0.67 against
	// -0.45 at 8,000 iterations; at 16,000 the online parameters gave
	// -0.76: the fit fluctuates either way).
	Average int
	// HeldOut is the fraction of the data kept aside for early stopping:
	// whole episodes when there are at least 1/HeldOut of them, else the
	// last steps of every episode. If 0, 0.1; if negative, nothing is
	// held out and training runs MaxIter iterations.
	HeldOut float64
	// Bandwidth is the kernel bandwidth h in standardised units. If 0,
	// the median heuristic over BandwidthSample logged states.
	Bandwidth float64
	// Features is the number of random Fourier features of the kernel
	// (minimax.FeatureLoss). If 0, 256.
	Features int
	// BandwidthSample is the number of states whose pairwise distances
	// give the median heuristic. If 0, 1000.
	BandwidthSample int
	// Statistic is the minibatch estimate of the loss that training
	// minimises: "U", the U-statistic (pairs of distinct transitions),
	// unbiased for the population loss, or "V", the V-statistic (all
	// pairs, the diagonal included), whose diagonal adds a penalty of
	// order 1/B on each transition's own term (E_D[w^2] for MWL, the
	// squared Bellman residual for MQL). If "", the learner's default,
	// chosen by measurement on the discrete-action linear-Gaussian
	// problem: "U" for MWL and DualDICE (gamma = 1, 8,000 transitions,
	// 8,000 iterations: mwl's error -0.45 against -1.10 with "V"), "V"
	// for MQL (the U-statistic is unbounded below on a batch, and a
	// flexible q found it: one run ended at -70 for a truth of -0.57). The
	// held-out loss is always the U-statistic.
	Statistic string
	// Ridge is DualDICE's weight lambda of E_D[w^2] in its loss (see
	// ratio.DualDICE); 0 takes DefaultNeuralDICERidge. MWL and MQL ignore
	// it. It must not be negative.
	Ridge float64
}

// DefaultNeuralDICERidge is the neural DualDICE's weight of E_D[w^2].
const DefaultNeuralDICERidge = 1e-3

// Resolve returns s with its defaults filled in (Statistic stays "" for
// the learner to choose), or an error naming the
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
		settings.Int(who, &s.BatchSize, 1024, "batch size"), settings.Int(who, &s.MaxIter, 1000, "iteration cap"),
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
	if s.Statistic != "" && s.Statistic != "U" && s.Statistic != "V" {
		return s, fmt.Errorf("%s: statistic %q, want U or V", who, s.Statistic)
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
	if math.IsNaN(s.HeldOut) || s.HeldOut >= 1 {
		return s, fmt.Errorf("%s: held-out fraction %v, want < 1", who, s.HeldOut)
	}
	return s, nil
}
