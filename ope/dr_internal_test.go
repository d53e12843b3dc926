package ope

import (
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
)

// dr's misfit warning names the neural value model exactly where it
// applies: the linear learner on real states at gamma < 1; under the
// horizon it says that the network gives the long-run value.
func TestNeuralValueHint(t *testing.T) {
	real, discrete := &dataset.Dataset{StateDim: 2}, &dataset.Dataset{}
	for _, c := range []struct {
		name    string
		d       *dataset.Dataset
		gamma   float64
		est     Estimand
		learner string
		want    bool
	}{
		{"real, linear, 0.95, long run", real, 0.95, LongRun, "linear", true},
		{"discrete states", discrete, 0.95, LongRun, "tabular", false},
		{"already neural", real, 0.95, LongRun, "neural", false},
		{"gamma 1", real, 1, LongRun, "linear", false},
		{"horizon", real, 0.95, Horizon, "linear", true},
	} {
		h := neuralValueHint(c.d, c.gamma, c.est, c.learner)
		if got := h != ""; got != c.want {
			t.Errorf("%s: hint %v, want %v", c.name, got, c.want)
		}
		// Under the horizon it says the network needs the long run.
		if long := strings.Contains(h, "--estimand long-run"); c.want && long != (c.est == Horizon) {
			t.Errorf("%s: %q", c.name, h)
		}
	}
}
