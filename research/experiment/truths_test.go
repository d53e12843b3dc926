package experiment

import (
	"context"
	"math"
	"testing"

	"github.com/ihope-ope/ihope/figure/results"
)

// TestTruthsByEstimand checks that a record stating an estimand is
// scored against that estimand's truth, one without against the line's
// truth, and that the truths and intervals reach the results file.
func TestTruthsByEstimand(t *testing.T) {
	lo, hi := results.Float(1.5), results.Float(2.5)
	e := &Experiment{Name: "estimands", Panels: func(bool) ([]Panel, error) {
		return []Panel{{Name: "p", Kind: results.KindMSE, Settings: []Setting{{ID: "s", Run: func(context.Context, *Cell) (*Outcome, error) {
			return &Outcome{Truth: 1, Truths: map[string]float64{"horizon": 1, "long-run": 3},
				Records: []results.Record{
					{Estimator: "h", Estimate: 2, Estimand: "horizon"},
					{Estimator: "l", Estimate: 2, Estimand: "long-run", Low: &lo, High: &hi, Interval: "bootstrap"},
					{Estimator: "none", Estimate: 4},
					{Estimator: "unknown", Estimate: 4, Estimand: "other"},
				}}, nil
		}}}}}, nil
	}}
	dir := t.TempDir()
	if _, err := (&Runner{Dir: dir, Seeds: 1}).Run(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	lines, _, err := results.Read(results.FileName(dir, "estimands", false))
	if err != nil || len(lines) != 1 {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	l := lines[0]
	if l.Truths["long-run"] != 3 || l.Truths["horizon"] != 1 {
		t.Errorf("truths %v", l.Truths)
	}
	for i, want := range []float64{1, 1, 9, 9} { // (2-1)^2, (2-3)^2, (4-1)^2 twice
		if got := float64(l.Records[i].SqError); math.Abs(got-want) > 0 {
			t.Errorf("record %s: sq_error %v, want %v", l.Records[i].Estimator, got, want)
		}
	}
	cov, ok := l.Covers(&l.Records[1])
	if !ok || cov {
		t.Errorf("[1.5, 2.5] covers the long-run truth 3: %v, %v", cov, ok)
	}
	if _, ok := l.Covers(&l.Records[0]); ok {
		t.Error("a record without an interval covers")
	}
}
