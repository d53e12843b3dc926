package lineargauss_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/sim/lineargauss"
)

// The quadrature truth of the discrete-action problem: two grids agree
// to 1e-10, and on-policy rollouts agree within their standard error.
func TestDiscreteTruth(t *testing.T) {
	sys, target, _ := lineargauss.DiscreteProblem()
	fine := *sys
	fine.GridHalfWidth, fine.GridPoints = 12, 1201
	for _, gamma := range []float64{1, 0.9} {
		for _, pi := range []lineargauss.Softmax{target} {
			v, err := sys.LongRun(pi, gamma)
			if err != nil {
				t.Fatal(err)
			}
			w, err := fine.LongRun(pi, gamma)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(v-w) > 1e-10 {
				t.Errorf("gamma %g: grids disagree: %.15f and %.15f", gamma, v, w)
			}
		}
	}
	// Rollouts of the target: the discounted value from s_0 over 100
	// steps (0.9^100 ~ 3e-5 of the tail left out) and the average reward
	// over steps 200..999 of long episodes.
	rng := rand.New(rand.NewPCG(1, 0))
	d, err := sys.Sample(rng, target, target, 200, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var disc, avg []float64
	for e := range d.NumEpisodes() {
		lo, _ := d.Span(e)
		g, s := 1.0, 0.0
		for j := lo; j < lo+100; j++ {
			s += (1 - 0.9) * g * d.Reward[j]
			g *= 0.9
		}
		disc = append(disc, s)
		a := 0.0
		for j := lo + 200; j < lo+1000; j++ {
			a += d.Reward[j] / 800
		}
		avg = append(avg, a)
	}
	for _, c := range []struct {
		gamma float64
		xs    []float64
	}{{0.9, disc}, {1, avg}} {
		truth, _ := sys.LongRun(target, c.gamma)
		m, se := meanSE(c.xs)
		if math.Abs(m-truth) > 4*se {
			t.Errorf("gamma %g: rollouts %.5f +- %.5f, quadrature %.5f", c.gamma, m, se, truth)
		}
		t.Logf("gamma %g: rollouts %.5f +- %.5f, quadrature %.6f", c.gamma, m, se, truth)
	}
}

func meanSE(xs []float64) (float64, float64) {
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, math.Sqrt(v / float64(len(xs)-1) / float64(len(xs)))
}
