package figure

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// weightBins is the number of bins of a weight histogram.
const weightBins = 40

// Weights draws the distribution of an estimator's weights: a histogram
// of log10(w / mean w) over its positive weights, so that weight 1 on
// the x axis's 0 means an ordinary unit (step or episode) and every
// decade to the right one ten times as heavy. A long right tail is what a
// small effective sample size looks like. The title carries the
// estimator's name, the ESS and the count of zero weights (drawn as
// none: the target never takes those actions, or the ratio is 0 there);
// unit names what is weighed ("step", "episode").
func Weights(estimator string, w []float64, ess float64, unit string) (*Figure, error) {
	sum := 0.0
	zeros, negative := 0, 0
	for _, x := range w {
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			return nil, fmt.Errorf("figure: %s has a weight %v", estimator, x)
		case x == 0:
			zeros++
		case x < 0:
			negative++
		}
		sum += x
	}
	if len(w) == 0 || !(sum > 0) {
		return nil, fmt.Errorf("figure: %s has no positive weights to draw", estimator)
	}
	mean := sum / float64(len(w))
	var v []float64
	for _, x := range w {
		if x > 0 {
			v = append(v, math.Log10(x/mean))
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	if hi-lo < 1e-9 { // equal weights: one bar, a decade wide
		lo, hi = lo-0.5, hi+0.5
	}
	width := (hi - lo) / weightBins
	bins := make([]plotter.HistogramBin, weightBins)
	for i := range bins {
		bins[i].Min, bins[i].Max = lo+float64(i)*width, lo+float64(i+1)*width
	}
	for _, x := range v {
		bins[min(weightBins-1, int((x-lo)/width))].Weight++
	}
	st := EstimatorStyle(estimator)
	h := &plotter.Histogram{Bins: bins, Width: width, FillColor: translucent(st.Color, 170)}
	h.LineStyle.Color = st.Color
	h.LineStyle.Width = vg.Points(0.5)

	f := newFigure()
	p := f.Plot
	p.Title.Text = fmt.Sprintf("%s: ESS %.1f of %s", estimator, ess, plural(len(w), unit))
	var notes []string
	if zeros > 0 {
		notes = append(notes, fmt.Sprintf("%d zero", zeros))
	}
	if negative > 0 {
		notes = append(notes, fmt.Sprintf("%d negative", negative))
	}
	if len(notes) > 0 {
		p.Title.Text += fmt.Sprintf("\n(%s: not drawn)", joinAnd(notes))
	}
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.X.Label.Text = "log_{10}(w / mean w)"
	p.Y.Label.Text = unit + "s"
	p.Add(h)
	mark, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 0, Y: maxWeight(bins)}})
	if err != nil {
		return nil, err
	}
	mark.Color = color.Black
	mark.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
	p.Add(mark)
	p.X.Min, p.X.Max = math.Min(lo, -0.1), math.Max(hi, 0.1)
	p.Y.Min = 0
	p.Y.Tick.Marker = countTicks{}
	f.W, f.H = 3.6*vg.Inch, 2.5*vg.Inch
	return f, nil
}

// countTicks are plot.DefaultTicks labelled as counts ("7500", not
// "7500.00").
type countTicks struct{}

func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label != "" {
			ticks[i].Label = strconv.FormatFloat(t.Value, 'g', -1, 64)
		}
	}
	return ticks
}

func maxWeight(bins []plotter.HistogramBin) float64 {
	m := 0.0
	for _, b := range bins {
		m = math.Max(m, b.Weight)
	}
	return m
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	out := s[0]
	for _, x := range s[1 : len(s)-1] {
		out += ", " + x
	}
	return out + " and " + s[len(s)-1]
}
