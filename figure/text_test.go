package figure

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/ihope-ope/ihope/figure/results"
)

func TestSegments(t *testing.T) {
	cases := []struct {
		in, want string // want: segments as text|level
	}{
		{"plain words", "plain words|0"},
		{"A_ρ^L - 1", "A|0 ρ|-1 L|1  - 1|0"},
		{"log_{10}(w)", "log|0 10|-1 (w)|0"},
		{"π(a_t|s_t)", "π(a|0 t|-1 |s|0 t|-1 )|0"},
		{`snake\_case and x^`, "snake_case and x^|0"},
		{"a_ b", "a_ b|0"},
		{"x_{unclosed", "x|0 unclosed|-1"},
	}
	for i, c := range cases {
		var got []string
		for _, s := range segments(c.in) {
			got = append(got, s.s+"|"+itoa(float64(s.level)))
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("case %d: segments(%q) = %q, want %q", i, c.in, g, c.want)
		}
	}
}

// A script is drawn smaller and off the baseline, and the box of a text
// with scripts is that of its pieces: narrower than the same characters
// on the baseline, and taller above or below.
func TestScriptsBox(t *testing.T) {
	h := Scripts{Fonts: plot.DefaultTextHandler.Cache()}
	plain := text.Plain{Fonts: h.Fonts}
	fnt := font.From(plot.DefaultFont, vg.Points(10))
	w, up, down := h.Box("A_ρ^L", fnt)
	pw, pu, pd := plain.Box("AρL", fnt)
	if !(w < pw && up > pu && down > pd) {
		t.Errorf("box of A_ρ^L (%v, %v, %v), of AρL (%v, %v, %v): want narrower, taller and deeper", w, up, down, pw, pu, pd)
	}
	face := plain.Fonts.Lookup(fnt, fnt.Size)
	if w, u, d := h.Box("no scripts", fnt); w != face.Width("no scripts") || u != pu || d != pd {
		t.Errorf("plain text: box (%v, %v, %v), want text.Plain's", w, u, d)
	}
	// Drawn, the script's glyphs are smaller: the SVG has both sizes.
	c := vgsvg.New(2*vg.Inch, vg.Inch)
	h.Draw(c, "x_t", text.Style{Font: fnt, Handler: h}, vg.Point{X: 10, Y: 30})
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "font-size:10px") || !strings.Contains(s, "font-size:7px") || strings.Contains(s, "x_t") {
		t.Errorf("x_t drawn as\n%s", s)
	}
}

// Legends name estimators as the command line does and take at most a
// quarter of the figure's width, their long labels wrapped.
func TestLegend(t *testing.T) {
	panels, lines := testLines()
	for _, p := range panels[:2] {
		f, err := Draw(p, lines)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.SVG(); err != nil { // lays the legend out
			t.Fatal(err)
		}
		w, _ := f.Legend.Size()
		if w > Width/4 {
			t.Errorf("%s: legend %v wide, more than a quarter of %v", p.Name, w, Width)
		}
		if p.Kind == results.KindMSE {
			want := "naive model-based (MSE 0: bottom edge) wis-trajectory (some seeds failed) band: 5-95% bootstrap over seeds"
			if got := strings.Join(f.Legend.Labels(), " "); got != want {
				t.Errorf("legend %q, want %q", got, want)
			}
		}
	}
	// A label wraps at its spaces into lines that fit, and a word too
	// long for the room is set smaller.
	l := NewLegend()
	l.MaxWidth = vg.Points(100)
	l.Add("a rather long label that cannot fit on one line", &plotter.Line{})
	l.Add("bch-tabular", &plotter.Line{})
	sty, lines2 := l.layout()
	if len(lines2[0]) < 2 || len(lines2[1]) != 1 || sty.Font.Size != vg.Points(9) {
		t.Errorf("wrapped %q at %v", lines2, sty.Font.Size)
	}
	l.Add("averyverylongwordwithout", &plotter.Line{})
	if sty, _ := l.layout(); !(sty.Font.Size < vg.Points(9)) {
		t.Errorf("a long word keeps %v", sty.Font.Size)
	}
	if w, _ := l.Size(); w > l.MaxWidth+1e-9 {
		t.Errorf("legend %v wide, MaxWidth %v", w, l.MaxWidth)
	}
}

func TestForestWeights(t *testing.T) {
	nan := math.NaN()
	rows := []ForestRow{
		{Estimator: "naive", Estimate: -0.27, Low: -0.29, High: -0.25},
		{Estimator: "dr", Estimate: -0.14, Low: -0.16, High: -0.12, Note: "Wald"},
		{Estimator: "bch-tabular", Estimate: nan, Low: nan, High: nan},
	}
	f, err := Forest("test", rows, -0.141, nan, nan)
	if err != nil {
		t.Fatal(err)
	}
	svg, err := f.SVG()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">naive<", ">dr (Wald)<", ">bch-tabular: failed<", ">reference -0.141<"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("forest plot lacks %q", want)
		}
	}
	if f.Plot.X.Min > -0.29 || f.Plot.X.Max < -0.12 {
		t.Errorf("x axis [%v, %v] does not hold the intervals", f.Plot.X.Min, f.Plot.X.Max)
	}
	if _, err := Forest("shared scale", rows, nan, -1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := Forest("none", nil, nan, nan, nan); err == nil {
		t.Error("a forest plot of no rows: no error")
	}

	w := []float64{1, 1, 2, 0, 10, 0.1}
	f, err = Weights("is-stepwise", w, 2.5, "step")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Plot.Title.Text; got != "is-stepwise: ESS 2.5 of 6 steps\n(1 zero: not drawn)" {
		t.Errorf("title %q", got)
	}
	if _, err := f.SVG(); err != nil {
		t.Fatal(err)
	}
	if _, err := Weights("naive", []float64{1, 1, 1}, 3, "episode"); err != nil { // equal weights: one bar
		t.Error(err)
	}
	for _, bad := range [][]float64{nil, {0, 0}, {1, nan}} {
		if _, err := Weights("x", bad, 0, "step"); err == nil {
			t.Errorf("weights %v: no error", bad)
		}
	}
}
