package cli

import (
	"io"
	"testing"
)

// BenchmarkEstimate1M runs every log estimator on 1,000,000 logged Taxi
// steps (2500 episodes x 400), without and with 200 bootstrap resamples.
// Reading the file is measured separately by dataset's benchmarks.
func BenchmarkEstimate1M(b *testing.B) {
	mix := 1.0
	w, err := (&worldFlags{Env: "taxi", Target: "pi19", Behavior: "pi18", Mix: &mix}).build(io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	d, err := sampleWorld(w, 2500, 400, 7)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		B    int
	}{{"bootstrap=0", 0}, {"bootstrap=200", 200}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cmd := &estimateCmd{Gamma: 1, Bootstrap: c.B, BootstrapNeural: 20, Alpha: 0.05, Seed: 1}
			for b.Loop() {
				if _, err := cmd.estimate(d, nil, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
