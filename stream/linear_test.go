package stream_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/stream"
	"github.com/ihope-ope/ihope/value"
)

// fqe with the linear value learner streams in two passes and equals the
// in-memory fit on the concatenated log up to the order of summation
// (the scaling by Welford's update against two passes, the moments
// episode by episode against two halves of the steps), under both
// estimands, with the bootstrap's copies.
func TestStreamLinearFQEEqualsInMemory(t *testing.T) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, err := sys.Sample(rand.New(rand.NewPCG(3, 0)), behavior, target, 30, 60)
	if err != nil {
		t.Fatal(err)
	}
	whole, glob := splitCSV(t, d, 10)
	full, err := logio.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		est   ope.Estimand
		gamma float64
	}{{ope.Horizon, 1}, {ope.Horizon, 0.95}, {ope.LongRun, 1}, {ope.LongRun, 0.95}} {
		opts := ope.Options{ValueModel: "linear", Estimand: c.est}
		res := run(t, glob, stream.Config{Estimators: []string{"fqe"}, Gamma: c.gamma, Resamples: 5, Seed: 4, Options: opts})
		got := res.Estimates[0]
		if got.Err != nil {
			t.Fatalf("%s gamma %v: %v", c.est, c.gamma, got.Err)
		}
		est, _ := ope.New([]string{"fqe"}, opts)
		want, err := est[0].Estimate(full, c.gamma)
		if err != nil {
			t.Fatal(err)
		}
		r := rel(got.Result.Value, want.Value)
		if r > 1e-12 {
			t.Errorf("%s gamma %v: stream %v, in memory %v (relative %.2g)", c.est, c.gamma, got.Result.Value, want.Value, r)
		}
		if got.Result.Estimand != want.Estimand || got.Result.Learner != "linear" {
			t.Errorf("%s gamma %v: %s %s", c.est, c.gamma, got.Result.Estimand, got.Result.Learner)
		}
		if iv := got.Interval; iv == nil || iv.Failures != 0 || !(iv.Low <= got.Result.Value && got.Result.Value <= iv.High) {
			t.Errorf("%s gamma %v: interval %+v around %v", c.est, c.gamma, iv, got.Result.Value)
		}
		gm, wm := got.Result.Model.(*value.LinearModel), want.Model.(*value.LinearModel)
		if gm.Transitions != wm.Transitions {
			t.Errorf("%s gamma %v: %d transitions, in memory %d", c.est, c.gamma, gm.Transitions, wm.Transitions)
		}
		t.Logf("%s gamma %v: stream %v, in memory %v (relative %.2g)", c.est, c.gamma, got.Result.Value, want.Value, r)
	}
}

// The two-pass estimators merge as a cluster's workers would: every
// shard's first pass encoded, merged out of order and ended once, then
// every shard's second pass started from the ended statistics (encoded),
// merged out of order: the estimates equal one machine's streamed ones up
// to the order of summation.
func TestStreamTwoPassMerge(t *testing.T) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, err := sys.Sample(rand.New(rand.NewPCG(9, 0)), behavior, target, 24, 50)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var parts []*dataset.Dataset
	for i := range 4 {
		var idx []int
		for e := i * 6; e < (i+1)*6; e++ {
			idx = append(idx, e)
		}
		parts = append(parts, d.Subset(idx))
		if err := logio.WriteFile(fmt.Sprintf("%s/s%d.parquet", dir, i), parts[i]); err != nil {
			t.Fatal(err)
		}
	}
	cfg := stream.Config{Estimators: []string{"bch-kernel", "fqe", "wis-stepwise"}, Gamma: 0.95, Resamples: 4, Seed: 2,
		Options: ope.Options{ValueModel: "linear"}}
	want := run(t, dir, cfg)
	through := func(s *stream.Stats, binary bool) *stream.Stats {
		var b []byte
		var err error
		back := &stream.Stats{}
		if binary {
			if b, err = s.MarshalBinary(); err == nil {
				err = back.UnmarshalBinary(b)
			}
		} else if b, err = s.MarshalJSON(); err == nil {
			err = back.UnmarshalJSON(b)
		}
		if err != nil {
			t.Fatal(err)
		}
		return back
	}
	var first *stream.Stats
	for k, i := range []int{3, 1, 0, 2} {
		s, err := stream.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddFirst(parts[i], 0, parts[i].NumEpisodes()); err != nil {
			t.Fatal(err)
		}
		if s = through(s, k%2 == 0); first == nil {
			first = s
		} else if err := first.Merge(s); err != nil {
			t.Fatal(err)
		}
	}
	first.EndFirst()
	ended, err := first.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var total *stream.Stats
	for k, i := range []int{2, 0, 3, 1} {
		s := &stream.Stats{}
		if err := s.UnmarshalBinary(ended); err != nil {
			t.Fatal(err)
		}
		if err := s.Add(parts[i], 0, parts[i].NumEpisodes()); err != nil {
			t.Fatal(err)
		}
		if s = through(s, k%2 == 1); total == nil {
			total = s
		} else if err := total.Merge(s); err != nil {
			t.Fatal(err)
		}
	}
	got, err := total.Finish()
	if err != nil {
		t.Fatal(err)
	}
	for k, g := range got.Estimates {
		w := want.Estimates[k]
		if g.Err != nil || w.Err != nil || rel(g.Result.Value, w.Result.Value) > 1e-9 ||
			rel(g.Interval.Low, w.Interval.Low) > 1e-9 || rel(g.Interval.High, w.Interval.High) > 1e-9 {
			t.Errorf("%s: merged %v %+v (%v), streamed %v %+v (%v)", g.Name, g.Result.Value, g.Interval, g.Err, w.Result.Value, w.Interval, w.Err)
		}
		t.Logf("%s: merged %v, streamed %v (relative %.2g)", g.Name, g.Result.Value, w.Result.Value, rel(g.Result.Value, w.Result.Value))
	}
}
