package sumo

import (
	"context"
	"math/rand/v2"
	"testing"
)

// BenchmarkSimStep measures one reinforcement-learning step (6 simulated
// seconds, detector counts and phase included) with real SUMO under the
// target policy, and reports the throughput in steps per second. Compare
// with traci's BenchmarkClientStep, the client's own work per step.
func BenchmarkSimStep(b *testing.B) {
	for _, bc := range []struct {
		name string
		grid int
	}{{"single", 1}, {"grid2x2", 2}} {
		b.Run(bc.name, func(b *testing.B) {
			n := buildNet(b, Config{Grid: bc.grid})
			s, err := n.Start(context.Background(), 1)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			pol := Target(n.NumLights())
			rng := rand.New(rand.NewPCG(1, 1))
			changes := 0
			for b.Loop() {
				before := s.Green(0)
				a := pol.Sample(rng, s.obs)
				if _, err := s.Step(a); err != nil {
					b.Fatal(err)
				}
				if s.Green(0) != before {
					changes++
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
			b.ReportMetric(float64(changes)/float64(b.N), "changes/step")
		})
	}
}
