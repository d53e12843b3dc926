package benchmark

import (
	"math"
	"testing"

	"github.com/ihope-ope/ihope/figure/results"
)

// The leaderboard's recommended estimate leaves out a record whose weights
// collapse, as ihope estimate's does: of a value model's interval and a
// narrower, collapsed step-wise WIS one that meets it, it takes the value
// model, and without the flag the narrower WIS.
func TestRecommendedLeavesCollapsed(t *testing.T) {
	f := func(v float64) *results.Float { x := results.Float(v); return &x }
	for _, c := range []struct {
		collapsed bool
		want      string
	}{{true, "fqe"}, {false, "wis-stepwise"}} {
		l := results.Line{Truth: -0.5, Records: []results.Record{
			{Estimator: "fqe", Estimate: -0.5, SqError: 0, Estimand: "horizon", Low: f(-0.6), High: f(-0.4)},
			{Estimator: "wis-stepwise", Estimate: -0.45, SqError: 0.0025, Estimand: "horizon", Low: f(-0.47), High: f(-0.43), Collapsed: c.collapsed},
		}}
		got := withRecommended(l, math.Inf(-1), math.Inf(1))
		rec := got.Records[len(got.Records)-1]
		if rec.Estimator != Recommended || float64(rec.Estimate) != float64(byName(l, c.want).Estimate) {
			t.Errorf("collapsed %v: recommended %+v, want %s's record", c.collapsed, rec, c.want)
		}
	}
}

func byName(l results.Line, name string) results.Record {
	for _, r := range l.Records {
		if r.Estimator == name {
			return r
		}
	}
	return results.Record{}
}
