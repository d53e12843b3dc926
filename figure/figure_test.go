package figure

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/ope"
)

// testLines builds a small results set: an MSE panel over n with two
// estimators (one failing once, one with an MSE of 0), a metric panel
// with a reference, and a scatter.
func testLines() ([]results.Panel, []results.Line) {
	mse := results.Panel{Name: "n", Title: "test: MSE vs n", XName: "n", XLabel: "number of trajectories n", LogX: true, Kind: results.KindMSE}
	met := results.Panel{Name: "var", Title: "test: variance", XName: "T", XLabel: "T", Kind: results.KindMetric,
		Metric: "mc", MetricLabel: "Monte Carlo", Reference: "exact", ReferenceLabel: "exact", Estimator: "is-trajectory"}
	sc := results.Panel{Name: "scatter", XName: "n", Kind: results.KindScatter, ScatterX: "x", ScatterY: "y", Estimator: "bch-tabular"}
	cat := results.Panel{Name: "behavior", XName: "behavior", Kind: results.KindMSE}
	var lines []results.Line
	for i, n := range []float64{10, 100, 1000} {
		id := "n=" + itoa(n)
		mse.Settings = append(mse.Settings, results.Setting{ID: id, X: n})
		met.Settings = append(met.Settings, results.Setting{ID: id, X: n})
		cat.Settings = append(cat.Settings, results.Setting{ID: id, X: float64(i), Tick: "π" + itoa(14+float64(i))})
		for seed := range 4 {
			e := 1 / n * float64(seed+1)
			recs := []results.Record{
				{Estimator: "naive", SqError: results.Float(e)},
				{Estimator: "model-based", SqError: 0},
				{Estimator: "wis-trajectory", SqError: results.Float(10 * e)},
			}
			if seed == 0 && i == 0 {
				recs[2] = results.Record{Estimator: "wis-trajectory", Estimate: results.Float(math.NaN()), SqError: results.Float(math.NaN()), Error: "all weights zero"}
			}
			lines = append(lines,
				results.Line{Experiment: "test", Panel: "n", Setting: id, X: results.Float(n), Seed: seed, Records: recs},
				results.Line{Experiment: "test", Panel: "behavior", Setting: id, X: results.Float(i), Seed: seed, Records: recs},
				results.Line{Experiment: "test", Panel: "var", Setting: id, X: results.Float(n), Seed: seed,
					Metrics: map[string]results.Float{"mc": results.Float(n * (1 + 0.1*float64(seed))), "exact": results.Float(n)}})
		}
	}
	lines = append(lines, results.Line{Experiment: "test", Panel: "scatter", Setting: "n=100", Seed: 0,
		Vectors: map[string][]results.Float{"x": {0.1, 0.2, 0.3, results.Float(math.NaN())}, "y": {0.12, 0.18, 0.3, 0.4}}})
	return []results.Panel{mse, met, sc, cat, {Name: "empty", Kind: results.KindMSE}}, lines
}

func itoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func TestWriteAll(t *testing.T) {
	panels, lines := testLines()
	dir := t.TempDir()
	files, notes, err := WriteAll(filepath.Join(dir, "test"), panels, lines)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	want := "test-n.png test-n.svg test-var.png test-var.svg test-scatter.png test-scatter.svg test-behavior.png test-behavior.svg"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("files %s, want %s", got, want)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || len(b) < 1000 {
			t.Errorf("%s: %d bytes, %v", f, len(b), err)
			continue
		}
		switch filepath.Ext(f) {
		case ".png":
			cfg, err := png.DecodeConfig(bytes.NewReader(b))
			if err != nil || cfg.Width != 960 || cfg.Height != 480 {
				t.Errorf("%s: %dx%d, %v; want 960x480 (8in x 4in at 120 dpi)", f, cfg.Width, cfg.Height, err)
			}
		case ".svg":
			if !bytes.Contains(b, []byte("<svg")) {
				t.Errorf("%s is not an SVG", f)
			}
		}
	}
	wantNotes := []string{
		"empty: no results yet, no figure",
		"n: model-based has MSE 0 up to rounding at n=10, n=100, n=1000, drawn on the bottom edge",
		"n: wis-trajectory failed 1 of 4 seeds at n=10; the MSE there averages the other seeds",
	}
	for _, w := range wantNotes {
		found := false
		for _, n := range notes {
			found = found || n == w
		}
		if !found {
			t.Errorf("missing note %q in %q", w, notes)
		}
	}
}

func TestLogAxis(t *testing.T) {
	cases := []struct {
		v           []float64
		zero        float64
		lo, hi, max float64
		ok          bool
	}{
		{[]float64{0.003, 0.2}, 0, 0.001, 1, 1, true},
		{[]float64{0, 1e-30, 5, math.Inf(1), math.NaN()}, 1e-20, 0.1, 10, 10, true},
		{[]float64{1.05e-5, 0.1, 0}, 1e-20, 1e-6, 0.1, 0.1, true},
		{[]float64{2}, 0, 1, 10, 10, true},
		{[]float64{10}, 0, 1, 10, 10, true},
		{[]float64{0.01, 0.5}, 0, 0.001, 1, 1, true},
		// 20 decades: cut at 12 above the smallest.
		{[]float64{1e-5, 0.1, 1e15}, 0, 1e-6, 1e7, 1e7, true},
		{[]float64{0, math.NaN()}, 0, 0, 0, 0, false},
	}
	for i, c := range cases {
		a, ok := newLogAxis(c.v, c.zero)
		if ok != c.ok || !close(a.lo, c.lo) || !close(a.hi, c.hi) || !close(a.max, c.max) {
			t.Errorf("case %d: newLogAxis = %+v, %v; want lo %v, hi %v, max %v, %v", i, a, ok, c.lo, c.hi, c.max, c.ok)
		}
	}
	a, _ := newLogAxis([]float64{1e-5, 0.1, 1e15}, 1e-20)
	for _, c := range [][2]float64{{0, 1e-6}, {1e-25, 1e-6}, {1e-7, 1e-6}, {0.5, 0.5}, {1e9, 1e7}, {math.NaN(), 1e-6}} {
		if got := a.clamp(c[0]); !close(got, c[1]) {
			t.Errorf("clamp(%v) = %v, want %v", c[0], got, c[1])
		}
	}
	// Not cut: a band edge above the largest mean stays where it is.
	a, _ = newLogAxis([]float64{0.01, 0.016}, 1e-20)
	for _, c := range [][2]float64{{0.018, 0.018}, {0.1, 0.1}, {0.5, 0.1}} {
		if got := a.clamp(c[0]); !close(got, c[1]) {
			t.Errorf("clamp(%v) = %v, want %v", c[0], got, c[1])
		}
	}
}

func TestDecadeTicks(t *testing.T) {
	cases := []struct {
		lo, hi float64
		labels string
		minor  int
	}{
		{1e-4, 1, "0.0001 0.001 0.01 0.1 1", 32},
		{0.001, 0.1, "0.001 0.01 0.1", 16},
		{1e-6, 1e7, "1e-06 1e-05 0.0001 0.001 0.01 0.1 1 10 100 1000 10000 100000 1e+06 1e+07", 104},
	}
	for i, c := range cases {
		var labels []string
		minor := 0
		for _, tk := range (decadeTicks{}).Ticks(c.lo, c.hi) {
			if tk.Label == "" {
				minor++
			} else {
				labels = append(labels, tk.Label)
			}
		}
		if got := strings.Join(labels, " "); got != c.labels || minor != c.minor {
			t.Errorf("case %d: labels %q, %d minor; want %q, %d", i, got, minor, c.labels, c.minor)
		}
	}
}

func close(a, b float64) bool { return a == b || math.Abs(a-b) <= 1e-12*math.Abs(b) }

func TestEstimatorStyle(t *testing.T) {
	names := []string{"naive", "is-trajectory", "wis-trajectory", "is-stepwise", "wis-stepwise", "model-based", "bch-tabular", "bch-neural", "on-policy",
		"bch-kernel", "fqe", "mis", "dr", "mwl", "mql", "dualdice"}
	seen := map[[4]uint8]string{}
	for _, n := range names {
		s := EstimatorStyle(n)
		c := [4]uint8{s.Color.R, s.Color.G, s.Color.B, s.Color.A}
		if other, dup := seen[c]; dup {
			t.Errorf("%s and %s share a colour", n, other)
		}
		seen[c] = n
		if s.Label == n || s.Glyph == nil || s.Color.A != 255 {
			t.Errorf("%s: style %+v", n, s)
		}
	}
	// Every registered estimator has a fixed style, not a derived one.
	for _, n := range ope.Names() {
		if _, ok := styles[n]; !ok {
			t.Errorf("%s has no fixed style", n)
		}
	}
	a, b := EstimatorStyle("dr-tabular"), EstimatorStyle("dr-tabular")
	if a.Color != b.Color || a.Label != "dr-tabular" {
		t.Errorf("unknown estimator: styles %+v and %+v", a, b)
	}
}
