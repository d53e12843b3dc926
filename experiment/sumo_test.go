package experiment

import (
	"context"
	"math"
	"testing"

	"github.com/ihope-ope/ihope/traci"
)

// TestSumoQuick runs the quick grid of the SUMO experiment (not yet in
// the registry) with real SUMO.
func TestSumoQuick(t *testing.T) {
	if _, err := traci.LookPath(""); err != nil {
		t.Skip(err.Error())
	}
	e := sumoExperiment()
	r := &Runner{Dir: t.TempDir(), Quick: true, Workers: 2}
	sum, err := r.Run(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	lines, _, err := ReadResults(sum.File)
	if err != nil {
		t.Fatal(err)
	}
	// 2 seeds x (2 + 2 + 2 settings).
	if len(lines) != 12 {
		t.Fatalf("%d lines, want 12", len(lines))
	}
	names := map[string]bool{}
	for _, l := range lines {
		if l.TruthMethod != "monte-carlo" || !(l.TruthSE > 0) || !(float64(l.Truth) < 0) {
			t.Errorf("%s: truth %v ± %v (%s)", l.Key(), l.Truth, l.TruthSE, l.TruthMethod)
		}
		for _, rec := range l.Records {
			names[rec.Estimator] = true
			if rec.Error != "" || math.IsNaN(float64(rec.SqError)) {
				t.Errorf("%s: %s failed: %s", l.Key(), rec.Estimator, rec.Error)
			}
		}
	}
	for _, want := range []string{"on-policy", "naive", "wis-trajectory", "wis-stepwise", "bch-neural"} {
		if !names[want] {
			t.Errorf("no %s records (have %v)", want, names)
		}
	}
}
