package figure

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// ForestRow is one estimator's line of a forest plot.
type ForestRow struct {
	// Estimator is the estimator's name, its tick label.
	Estimator string
	// Estimate is its point estimate; NaN when it failed (the row is
	// labelled so, with nothing drawn).
	Estimate float64
	// Low and High bound its interval; NaN for none.
	Low, High float64
	// Note is added to the tick label, in parentheses ("Wald").
	Note string
}

// Forest draws a forest plot: one row per estimator, top to bottom in
// the order given, with its estimate as the estimator's marker and its
// interval as a bar, and a dashed vertical line at a reference value
// (NaN: none). The x axis spans [xmin, xmax] when they are finite and
// xmin < xmax, so that the plots of several target policies share a
// scale; otherwise the rows' own range.
func Forest(title string, rows []ForestRow, reference, xmin, xmax float64) (*Figure, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("figure: a forest plot of no estimates")
	}
	f := newFigure()
	p := f.Plot
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = "estimate and interval"
	n := len(rows)
	var ticks plot.ConstantTicks
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, r := range rows {
		y := float64(n - 1 - i)
		label := r.Estimator
		if r.Note != "" {
			label += " (" + r.Note + ")"
		}
		if math.IsNaN(r.Estimate) || math.IsInf(r.Estimate, 0) {
			ticks = append(ticks, plot.Tick{Value: y, Label: label + ": failed"})
			continue
		}
		ticks = append(ticks, plot.Tick{Value: y, Label: label})
		st := EstimatorStyle(r.Estimator)
		lo, hi = math.Min(lo, r.Estimate), math.Max(hi, r.Estimate)
		if !math.IsNaN(r.Low) && !math.IsNaN(r.High) {
			lo, hi = math.Min(lo, r.Low), math.Max(hi, r.High)
			bar, err := plotter.NewXErrorBars(forestBar{x: r.Estimate, y: y, lo: r.Estimate - r.Low, hi: r.High - r.Estimate})
			if err != nil {
				return nil, err
			}
			bar.Color = st.Color
			bar.Width = vg.Points(1.5)
			bar.CapWidth = vg.Points(6)
			p.Add(bar)
		}
		sc, err := plotter.NewScatter(plotter.XYs{{X: r.Estimate, Y: y}})
		if err != nil {
			return nil, err
		}
		sc.Color, sc.Shape, sc.Radius = st.Color, st.Glyph, vg.Points(4)
		p.Add(sc)
	}
	if !math.IsNaN(reference) {
		lo, hi = math.Min(lo, reference), math.Max(hi, reference)
		l, err := plotter.NewLine(plotter.XYs{{X: reference, Y: -0.5}, {X: reference, Y: float64(n) - 0.5}})
		if err != nil {
			return nil, err
		}
		l.Color = color.Black
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(l)
		f.Legend.Add(fmt.Sprintf("reference %.6g", reference), l)
	}
	if !math.IsInf(xmin, 0) && !math.IsInf(xmax, 0) && xmin < xmax {
		lo, hi = xmin, xmax
	}
	if math.IsInf(lo, 0) { // nothing drawn: every estimator failed
		lo, hi = -1, 1
	}
	pad := 0.05 * (hi - lo)
	if pad == 0 {
		pad = 0.05*math.Abs(lo) + 1e-9
	}
	p.X.Min, p.X.Max = lo-pad, hi+pad
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	p.Y.Tick.Marker = ticks
	p.Y.Padding = 0
	grid := plotter.NewGrid()
	grid.Horizontal.Width = 0 // vertical lines only: they help read values
	grid.Vertical.Color = color.Gray{Y: 220}
	p.Add(grid)
	f.W = 9 * vg.Inch
	f.H = vg.Length(n)*vg.Points(22) + vg.Points(80)
	return f, nil
}

// forestBar is one interval as plotter.XErrorBars takes it: errors
// relative to the estimate.
type forestBar struct{ x, y, lo, hi float64 }

func (b forestBar) Len() int                      { return 1 }
func (b forestBar) XY(int) (float64, float64)     { return b.x, b.y }
func (b forestBar) XError(int) (float64, float64) { return b.lo, b.hi }
