package paper

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/research/experiment"
	"github.com/ihope-ope/ihope/sim/traci"
)

// TestSumoQuick runs the quick grid of the SUMO experiment with real
// SUMO.
func TestSumoQuick(t *testing.T) {
	if _, err := traci.LookPath(""); err != nil {
		t.Skip(err.Error())
	}
	e := sumoExperiment()
	r := &experiment.Runner{Dir: t.TempDir(), Quick: true, Workers: 2}
	sum, err := r.Run(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	lines, _, err := results.Read(sum.File)
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

// Every episode of a pool lasts the longest T of the cells that use it.
func TestSumoPools(t *testing.T) {
	p := newSumoPools([]sumoParams{{n: 2, T: 5, behavior: 1}, {n: 4, T: 3, behavior: 1}, {n: 1, T: 7, behavior: 2}, {n: 3, T: 1, behavior: 1}})
	want := sumoPools{data: map[int][]int{1: {5, 5, 3, 3}, 2: {7}}, oracle: []int{7, 5, 3, 3}}
	if fmt.Sprint(p) != fmt.Sprint(want) {
		t.Errorf("pools %v, want %v", p, want)
	}
	// The full grid logs 900,000 steps per seed, as the doc says.
	panels, err := sumoPanels(false)
	if err != nil {
		t.Fatal(err)
	}
	var cells []sumoParams
	for _, pn := range panels {
		for _, s := range pn.Settings {
			var c sumoParams
			if _, err := fmt.Sscanf(s.Key, "sumo/n=%d/T=%d/b=%d", &c.n, &c.T, &c.behavior); err != nil {
				t.Fatal(err)
			}
			cells = append(cells, c)
		}
	}
	total := 0
	p = newSumoPools(cells)
	for _, l := range append(slices.Collect(maps.Values(p.data)), p.oracle) {
		for _, T := range l {
			total += T
		}
	}
	if total != 900_000 {
		t.Errorf("a seed simulates %d steps, want 900000", total)
	}
}
