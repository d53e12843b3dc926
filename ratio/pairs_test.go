package ratio_test

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// Fed Taxi's population with the behavior's (stationary or discounted)
// state-action visitation as d_D, the state-action learners' solve returns
// the exact ratio d_pi(s, a) / d_D(s, a) of the target, and E_D[w r] is
// the exact long-run value. CI checks gamma = 0.99 (ExampleSolvePairs
// shows gamma = 1); IHOPE_LONG=1 both.
func TestSolvePairsTaxiPopulation(t *testing.T) {
	gammas := []float64{0.99}
	if os.Getenv("IHOPE_LONG") != "" {
		gammas = append(gammas, 1)
	}
	m := taxi.New()
	pi, _ := taxi.Policy("pi19")
	pi0, _ := taxi.Policy("pi18")
	nS, nA := m.NumStates(), m.NumActions()
	for _, gamma := range gammas {
		d0, err := mdp.Visitation(m, pi0, gamma)
		if err != nil {
			t.Fatal(err)
		}
		dD := make([]float64, nS*nA)
		for s := range nS {
			for a := range nA {
				dD[s*nA+a] = d0[s] * pi0.Prob(s, a)
			}
		}
		w, err := ratio.SolvePairs(m, dD, pi, gamma)
		if err != nil {
			t.Fatal(err)
		}
		dPi, err := mdp.Visitation(m, pi, gamma)
		if err != nil {
			t.Fatal(err)
		}
		truth, err := mdp.LongRun(m, pi, gamma)
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for s := range nS {
			for a := range nA {
				if dD[s*nA+a] == 0 {
					continue
				}
				want := dPi[s] * pi.Prob(s, a) / dD[s*nA+a]
				worst = math.Max(worst, math.Abs(w.Ratio(s, a)-want)/math.Max(1, want))
			}
		}
		if worst > 1e-9 || math.Abs(w.Value-truth) > 1e-12 || math.Abs(w.MeanRatio()-1) > 1e-12 {
			t.Errorf("gamma %g: max relative error of w %.3g, E_D[w r] %.15f (truth %.15f), E_D[w] %.15f",
				gamma, worst, w.Value, truth, w.MeanRatio())
		}
	}
}

// The exact state-action ratio of a world's population: Taxi, the
// behavior pi18's stationary state-action distribution as d_D.
func ExampleSolvePairs() {
	m := taxi.New()
	pi, _ := taxi.Policy("pi19")
	pi0, _ := taxi.Policy("pi18")
	d, _ := mdp.Visitation(m, pi0, 1)
	dD := make([]float64, m.NumStates()*m.NumActions())
	for s, ds := range d {
		for a := range m.NumActions() {
			dD[s*m.NumActions()+a] = ds * pi0.Prob(s, a)
		}
	}
	w, _ := ratio.SolvePairs(m, dD, pi, 1)
	truth, _ := mdp.LongRun(m, pi, 1)
	fmt.Printf("E_D[w] = %.6f, E_D[w r] = %.6f, long-run truth %.6f\n", w.MeanRatio(), w.Value, truth)
	// Output:
	// E_D[w] = 1.000000, E_D[w r] = -0.121727, long-run truth -0.121727
}
