package ope

import (
	"fmt"

	"github.com/ihope-ope/ihope/dataset"
)

// Estimand is the quantity an estimate targets. ihope knows two, and
// every Result says which one its value is for.
//
// On the paper's Taxi (pi19, gamma = 1) the 400-step average from reset
// is -0.14118 and the long-run average -0.12173: the two differ by more
// than any estimator's error at n = 200, so an estimate is only as good as
// the estimand it is compared with.
type Estimand string

const (
	// Horizon is the normalised T-step value from the logged start
	// states, sum_{t<T} gamma_t r_t with gamma_t = gamma^t / sum_{u<T}
	// gamma^u and T each episode's own length (what the paper's figures
	// measure), averaged over episodes.
	Horizon Estimand = "horizon"
	// LongRun is the long-run average reward (gamma = 1) or the
	// normalised infinite-horizon discounted value (1 - gamma)
	// E_{s0~d0}[V^pi(s0)] (gamma < 1), d0 the logged start distribution.
	LongRun Estimand = "long-run"
)

// ParseEstimand returns the estimand of a name ("horizon", "long-run").
func ParseEstimand(s string) (Estimand, error) {
	switch Estimand(s) {
	case Horizon, LongRun:
		return Estimand(s), nil
	}
	return "", fmt.Errorf("unknown estimand %q: choose horizon or long-run", s)
}

// DefaultEstimand is Horizon for logs of several episodes and LongRun for
// one continuing episode, whose length is an accident of logging rather
// than a horizon anyone cares about. A log with an episode that ends in a
// terminal state is episodic: Horizon (its long-run average would be 0,
// ErrAbsorbingAverage).
func DefaultEstimand(d *dataset.Dataset) Estimand {
	if d.NumEpisodes() == 1 && d.NumTerminal() == 0 {
		return LongRun
	}
	return Horizon
}

// OrDefault returns e, or Horizon if e is empty (the estimand the
// estimators targeted before estimands were stated).
func (e Estimand) OrDefault() Estimand {
	if e == "" {
		return Horizon
	}
	return e
}
