package results

import (
	"math"
	"strings"
	"testing"
)

func mseLine(setting string, x float64, seed int, truthSE float64, sq ...float64) Line {
	l := Line{Experiment: "e", Panel: "p", Setting: setting, X: Float(x), Seed: seed, TruthSE: Float(truthSE)}
	names := []string{"naive", "bch-tabular"}
	for i, v := range sq {
		r := Record{Estimator: names[i], SqError: Float(v)}
		if math.IsNaN(v) {
			r.Error = "failed"
		}
		l.Records = append(l.Records, r)
	}
	return l
}

func TestSummarizeMSE(t *testing.T) {
	p := Panel{Name: "p", Kind: KindMSE, Settings: []Setting{{ID: "b", X: 2}, {ID: "a", X: 1}, {ID: "none", X: 3}}}
	lines := []Line{
		mseLine("a", 1, 0, 0, 1, 4),
		mseLine("a", 1, 1, 0, 2, 4),
		mseLine("a", 1, 2, 0, 3, math.NaN()),
		mseLine("b", 2, 0, 0, 5, 4),
		{Panel: "other", Setting: "a", Records: []Record{{Estimator: "naive", SqError: 100}}},
	}
	got := SummarizeMSE(p, lines)
	if len(got) != 2 || got[0].Name != "naive" || got[1].Name != "bch-tabular" {
		t.Fatalf("series %+v", got)
	}
	cases := []struct {
		series, point int
		setting       string
		mean, lo, hi  float64
		seeds, failed int
	}{
		// Panel order: b before a.
		{0, 0, "b", 5, 5, 5, 1, 0},
		{0, 1, "a", 2, -1, -1, 3, 0},
		{1, 0, "b", 4, 4, 4, 1, 0},
		{1, 1, "a", 4, 4, 4, 2, 1},
	}
	for i, c := range cases {
		pt := got[c.series].Points[c.point]
		if pt.Setting != c.setting || pt.Mean != c.mean || pt.Seeds != c.seeds || pt.Failed != c.failed {
			t.Errorf("case %d: %+v", i, pt)
		}
		if c.lo >= 0 && (pt.Lo != c.lo || pt.Hi != c.hi) {
			t.Errorf("case %d: band [%v, %v], want [%v, %v]", i, pt.Lo, pt.Hi, c.lo, c.hi)
		}
		if !(pt.Lo <= pt.Mean && pt.Mean <= pt.Hi) || pt.Lo < 1 || pt.Hi > 3 && c.setting == "a" && c.series == 0 {
			t.Errorf("case %d: band [%v, %v] around %v", i, pt.Lo, pt.Hi, pt.Mean)
		}
	}
	if n := len(got[0].Points); n != 2 {
		t.Errorf("%d points, want 2 (setting none has no lines)", n)
	}
}

func TestBootstrapMean(t *testing.T) {
	v := []float64{1, 2, 3, 10}
	lo1, hi1 := BootstrapMean(v, 2000, 0.05, 7)
	lo2, hi2 := BootstrapMean(v, 2000, 0.05, 7)
	if lo1 != lo2 || hi1 != hi2 {
		t.Errorf("same seed, different bands: [%v, %v] vs [%v, %v]", lo1, hi1, lo2, hi2)
	}
	// The resampled means lie in [1, 10] on a grid of quarters; the
	// band's ends are interpolated between them.
	if !(lo1 >= 1 && lo1 < 4 && hi1 > 4 && hi1 <= 10) {
		t.Errorf("band [%v, %v] does not straddle the mean 4", lo1, hi1)
	}
	if lo, hi := BootstrapMean([]float64{2.5}, 10, 0.05, 1); lo != 2.5 || hi != 2.5 {
		t.Errorf("one seed: [%v, %v], want [2.5, 2.5]", lo, hi)
	}
	if lo, hi := BootstrapMean([]float64{1, math.Inf(1)}, 100, 0.05, 1); lo != 1 || !math.IsInf(hi, 1) {
		t.Errorf("with +Inf: [%v, %v], want [1, +Inf]", lo, hi)
	}
}

func TestCheckTruth(t *testing.T) {
	p := []Panel{{Name: "p", Kind: KindMSE}}
	cases := []struct {
		se   float64
		warn bool
	}{
		{0, false},      // exact truth
		{0.0099, false}, // 10 x 0.0099 < RMSE 0.1
		{0.011, true},   // 10 x 0.011 > 0.1
	}
	for i, c := range cases {
		// MSEs 0.01 and 0.04: smallest RMSE 0.1.
		lines := []Line{mseLine("a", 1, 0, c.se, 0.01, 0.04)}
		w := CheckTruth(p, lines)
		if (len(w) > 0) != c.warn {
			t.Errorf("case %d: warnings %q", i, w)
		}
		if c.warn && !strings.Contains(w[0], "smallest root-MSE 0.1 (naive at a)") {
			t.Errorf("case %d: warning %q", i, w[0])
		}
	}
}

func TestInferPanels(t *testing.T) {
	lines := []Line{
		{Experiment: "e", Panel: "n", XName: "n", Records: []Record{{Estimator: "naive"}}},
		{Experiment: "e", Panel: "n", XName: "n"},
		{Experiment: "e", Panel: "sc", Vectors: map[string][]Float{"y": nil, "x": nil}},
		{Experiment: "e", Panel: "tv", Metrics: map[string]Float{"tv": 1}},
	}
	got := InferPanels(lines)
	if len(got) != 3 || got[0].Kind != KindMSE || got[0].Title != "e: n" ||
		got[1].Kind != KindScatter || got[1].ScatterX != "x" || got[1].ScatterY != "y" ||
		got[2].Kind != KindMetric || got[2].Metric != "tv" {
		t.Errorf("InferPanels = %+v", got)
	}
}
