package paper

import (
	"context"
	"testing"

	"github.com/ihope-ope/ihope/research/experiment"
)

// BenchmarkTaxiCell times one cell of Figure 1 at its default setting
// (n = 100 trajectories of T = 400 steps, behavior pi18, gamma = 1): the
// sampling, the six estimators and the estimated d_pi. The truth and the
// exact d_pi are memoised outside the loop, as in a run. The speed target
// (the whole Figure 1 grid at 100 seeds in under 10 minutes on 2 cores:
// 2601 cells, but 1800 distinct computations since the default setting is
// shared by all panels) needs under 0.66 s per computation.
func BenchmarkTaxiCell(b *testing.B) {
	w, err := loadTaxi()
	if err != nil {
		b.Fatal(err)
	}
	c := experiment.NewCell("bench", 0)
	p := taxiParams{n: 100, T: 400, behavior: "pi18", gamma: 1}
	if _, err := w.run(context.Background(), c, p); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := w.run(context.Background(), c.WithSeed(i), p); err != nil {
			b.Fatal(err)
		}
	}
}
