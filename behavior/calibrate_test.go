package behavior_test

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/ihope-ope/ihope/behavior"
)

// Calibrate's per-state rescaling, by hand: pitilde_j = pihat_j times the
// mean of pi/pihat over the state's steps, capped at 1.
func TestCalibrate(t *testing.T) {
	d := readLog(t, "episode,t,state,action,reward,target_prob\n"+
		"a,0,0,0,0,0.5\na,1,0,1,0,0.5\n"+ // state 0: beta 2 and 1, mean 1.5
		"b,0,1,0,0,0.2\n"+ // state 1, once: pitilde = pi
		"b,1,2,0,0,0\n"+ // state 2: target probability 0, unchanged
		"c,0,3,0,0,0.1\nc,1,3,1,0,0.9\n") // state 3: beta 1/9 and 18, mean 9.0556; the first capped
	pihat := []float64{0.25, 0.5, 0.5, 0.3, 0.9, 0.05}
	want := []float64{0.375, 0.75, 0.2, 0.3, 1, 0.05 * (1./9 + 18) / 2}
	lp := make([]float64, len(pihat))
	for j, p := range pihat {
		lp[j] = math.Log(p)
	}
	got, err := behavior.Calibrate(d, lp)
	if err != nil {
		t.Fatal(err)
	}
	for j, w := range want {
		if g := math.Exp(got[j]); !scalar.EqualWithinAbsOrRel(g, w, 1e-14, 1e-14) {
			t.Errorf("step %d: %v, want %v", j, g, w)
		}
	}
	if lp[0] != math.Log(0.25) {
		t.Error("Calibrate changed its input")
	}
	if _, err := behavior.Calibrate(d, lp[:2]); err == nil {
		t.Error("no error for too few log-probabilities")
	}
}
