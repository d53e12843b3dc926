package results

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ihope-ope/ihope/ope"
)

func TestFloatJSON(t *testing.T) {
	cases := []struct {
		v    float64
		json string
	}{
		{1.5, `1.5`},
		{0, `0`},
		{1e-300, `1e-300`},
		{math.Inf(1), `"+Inf"`},
		{math.Inf(-1), `"-Inf"`},
		{math.NaN(), `"NaN"`},
	}
	for i, c := range cases {
		b, err := json.Marshal(Float(c.v))
		if err != nil || string(b) != c.json {
			t.Errorf("case %d: marshal %v = %s, %v; want %s", i, c.v, b, err, c.json)
		}
		var f Float
		if err := json.Unmarshal(b, &f); err != nil {
			t.Errorf("case %d: unmarshal %s: %v", i, b, err)
		}
		if got := float64(f); got != c.v && !(math.IsNaN(got) && math.IsNaN(c.v)) {
			t.Errorf("case %d: round trip %v, want %v", i, got, c.v)
		}
	}
	var f Float
	if err := json.Unmarshal([]byte(`"abc"`), &f); err == nil {
		t.Error(`"abc" decoded as a Float`)
	}
}

// quantile is a copy of ope.Quantile (so that the figures need no
// estimator package); the two must agree exactly.
func TestQuantileMatchesOpe(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 9; n++ {
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Floor(rng.Float64() * 4) // ties
		}
		if n > 3 {
			v[n-1] = math.Inf(1)
		}
		slices.Sort(v)
		for _, p := range []float64{0, 0.05, 0.3, 0.5, 0.95, 1} {
			if got, want := quantile(v, p), ope.Quantile(v, p); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("%v at %g: %v, ope.Quantile %v", v, p, got, want)
			}
		}
	}
}
