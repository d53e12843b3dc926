package ratio

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/env"
	"github.com/ihope-ope/ihope/env/taxi"
	"github.com/ihope-ope/ihope/exact"
)

func TestScratch(t *testing.T) {
	m := taxi.New()
	pi, _ := taxi.Policy("pi19")
	pi0, _ := taxi.Policy("pi18")
	for _, gamma := range []float64{1, 0.99} {
		for _, n := range []int{50, 200, 800} {
			rng := rand.New(rand.NewPCG(1, 0))
			d, err := dataset.Sample(rng, env.NewSampler(m), pi0, pi, n, 400)
			if err != nil {
				t.Fatal(err)
			}
			for _, nn := range []bool{false, true} {
				t0 := time.Now()
				c, _ := Aggregate(d, gamma)
				t1 := time.Now()
				mod, err := Tabular{NonNegative: nn}.Solve(c)
				t2 := time.Now()
				if err != nil {
					t.Fatal(err)
				}
				dpi, _ := exact.Visitation(m, pi, gamma)
				dpi0, _ := exact.Visitation(m, pi0, gamma)
				t.Logf("gamma %v n %d nonneg %v: edges %d unknowns %d iters %d solves %d res %.2g neg %d loss %.3g TV %.4f agg %v solve %v",
					gamma, n, nn, len(c.Edges), mod.Unknowns, mod.Iterations, mod.Solves, mod.Residual, mod.Negative, mod.Loss, TV(mod.W, dpi0, dpi), t1.Sub(t0), t2.Sub(t1))
			}
		}
	}
}
