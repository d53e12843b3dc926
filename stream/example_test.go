package stream_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
	"github.com/ihope-ope/ihope/stream"
)

// Statistics gathered in two parts, as two workers would, merged and
// finished: the estimates and the Poisson bootstrap's intervals.
func ExampleStats() {
	target, _ := taxi.Policy("pi19")
	behavior, _ := taxi.Policy("pi18")
	d, _ := rollout.Sample(rand.New(rand.NewPCG(1, 0)), sim.NewSampler(taxi.New()), behavior, target, 40, 100)

	cfg := stream.Config{Estimators: []string{"naive", "wis-stepwise", "bch-tabular"}, Gamma: 1, Resamples: 200, Seed: 1}
	a, _ := stream.New(cfg)
	b, _ := stream.New(cfg)
	a.Add(d, 0, 20) // episodes 0-19 on one worker
	b.Add(d, 20, 40)
	wire, _ := b.MarshalBinary() // sent to the driver
	var c stream.Stats
	c.UnmarshalBinary(wire)
	a.Merge(&c)
	res, _ := a.Finish()
	for _, e := range res.Estimates {
		fmt.Printf("%-12s %.3f  [%.3f, %.3f] (%s)\n", e.Name, e.Result.Value, e.Interval.Low, e.Interval.High, e.Result.Estimand)
	}
	// Output:
	// naive        -0.339  [-0.417, -0.267] (horizon)
	// wis-stepwise -0.232  [-0.345, -0.124] (horizon)
	// bch-tabular  -0.245  [-0.342, -0.142] (long-run)
}
