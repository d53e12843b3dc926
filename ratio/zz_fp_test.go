package ratio_test

import (
	"fmt"
	"hash/fnv"
	"math"
	"testing"

	"github.com/ihope-ope/ihope/ratio"
)

func TestZZFingerprint(t *testing.T) {
	h := fnv.New64a()
	for _, g := range []float64{1, 0.95} {
		for _, l := range []ratio.Kernel{{}, {Signed: true}, {Ridge: 1e-3}} {
			d := gauss1D(t, 4, 40, 150)
			m, err := l.Fit(d, g)
			if err != nil {
				t.Fatal(err)
			}
			km := m.(*ratio.KernelModel)
			for _, c := range append(append([]float64{km.Loss, km.Ridge}, km.Coef...), km.HeldOutLoss...) {
				fmt.Fprint(h, math.Float64bits(c), " ")
			}
		}
	}
	t.Logf("FP %x", h.Sum64())
}
