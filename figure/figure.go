package figure

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/ihope-ope/ihope/figure/results"
)

// Size of every figure, legend included, and the resolution of PNGs.
const (
	Width  = 8 * vg.Inch
	Height = 4 * vg.Inch
	DPI    = 120
)

// Figure is one panel drawn: a plot and a legend placed to its right.
type Figure struct {
	Plot *plot.Plot
	// Legend is drawn to the right of the plot, at most a quarter of the
	// figure's width (its labels wrap to fit).
	Legend *Legend
	// Notes say what the figure could not show (failed estimators,
	// values off the axis); the CLI prints them.
	Notes []string
	// W and H are the figure's size, legend included; zero means Width
	// and Height.
	W, H vg.Length
}

// newFigure returns a figure with an empty plot and legend whose texts
// draw sub- and superscripts.
func newFigure() *Figure {
	return &Figure{Plot: newPlot(), Legend: NewLegend()}
}

// size returns the figure's width and height.
func (f *Figure) size() (vg.Length, vg.Length) {
	w, h := f.W, f.H
	if w == 0 {
		w = Width
	}
	if h == 0 {
		h = Height
	}
	return w, h
}

// Draw builds the figure of one panel from the results lines.
func Draw(p results.Panel, lines []results.Line) (*Figure, error) {
	var own []results.Line
	for _, l := range lines {
		if l.Panel == p.Name {
			own = append(own, l)
		}
	}
	if len(own) == 0 {
		return nil, fmt.Errorf("figure: panel %s has no results", p.Name)
	}
	f := newFigure()
	pl := f.Plot
	pl.Title.Text = p.Title
	if pl.Title.Text == "" {
		pl.Title.Text = own[0].Experiment + ": " + p.Name
	}
	pl.Title.TextStyle.Font.Size = vg.Points(11)
	pl.X.Label.Text = p.XLabel
	if pl.X.Label.Text == "" {
		pl.X.Label.Text = own[0].XName
	}
	pl.Y.Label.Text = p.YLabel
	var err error
	switch p.Kind {
	case results.KindMSE:
		err = f.drawMSE(p, own)
	case results.KindMetric:
		err = f.drawMetric(p, own)
	case results.KindScatter:
		err = f.drawScatter(p, own)
	default:
		err = fmt.Errorf("figure: panel %s has unknown kind %q", p.Name, p.Kind)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// drawMSE draws one line per estimator: the MSE over seeds against x on a
// log axis, with the bootstrap 5-95% band.
func (f *Figure) drawMSE(p results.Panel, lines []results.Line) error {
	series := results.SummarizeMSE(p, lines)
	seeds := 0
	var all []float64
	for _, s := range series {
		for _, pt := range s.Points {
			seeds = max(seeds, pt.Seeds+pt.Failed)
			all = append(all, pt.Mean)
		}
	}
	if f.Plot.Y.Label.Text == "" {
		f.Plot.Y.Label.Text = fmt.Sprintf("mean squared error over %s (log)", plural(seeds, "seed"))
	}
	ax, ok := newLogAxis(all, results.ExactMSE(p, lines))
	if !ok {
		return fmt.Errorf("figure: panel %s has no finite positive MSE to draw", p.Name)
	}
	ax.set(f.Plot)
	f.setX(p, lines)
	for _, s := range series {
		st := EstimatorStyle(s.Name)
		label := s.Name // the name the command line takes
		var failed, zero, over, inf []string
		var pts, lower, upper plotter.XYs
		for _, pt := range s.Points {
			if pt.Failed > 0 {
				failed = append(failed, fmt.Sprintf("%d of %d seeds at %s", pt.Failed, pt.Failed+pt.Seeds, pt.Setting))
			}
			switch {
			case math.IsNaN(pt.Mean):
				continue
			case math.IsInf(pt.Mean, 0):
				inf = append(inf, pt.Setting)
				continue
			case pt.Mean <= ax.zero:
				zero = append(zero, pt.Setting)
			case pt.Mean > ax.max:
				over = append(over, pt.Setting)
			}
			pts = append(pts, plotter.XY{X: pt.X, Y: ax.clamp(pt.Mean)})
			lower = append(lower, plotter.XY{X: pt.X, Y: ax.clamp(pt.Lo)})
			upper = append(upper, plotter.XY{X: pt.X, Y: ax.clamp(pt.Hi)})
		}
		if len(failed) > 0 {
			f.Notes = append(f.Notes, fmt.Sprintf("%s: %s failed %s; the MSE there averages the other seeds", p.Name, s.Name, strings.Join(failed, ", ")))
			label += " (some seeds failed)"
		}
		if len(inf) > 0 {
			f.Notes = append(f.Notes, fmt.Sprintf("%s: %s has an infinite MSE (overflow) at %s, not drawn", p.Name, s.Name, strings.Join(inf, ", ")))
			label += " (overflow: not drawn)"
		}
		if len(zero) > 0 {
			f.Notes = append(f.Notes, fmt.Sprintf("%s: %s has MSE 0 up to rounding at %s, drawn on the bottom edge", p.Name, s.Name, strings.Join(zero, ", ")))
			label += " (MSE 0: bottom edge)"
		}
		if len(over) > 0 {
			f.Notes = append(f.Notes, fmt.Sprintf("%s: %s has MSE above %.3g at %s, drawn on the top edge", p.Name, s.Name, ax.max, strings.Join(over, ", ")))
			label += " (off the top)"
		}
		if len(pts) == 0 {
			f.Notes = append(f.Notes, fmt.Sprintf("%s: %s has nothing to draw", p.Name, s.Name))
			continue
		}
		l, sc, err := addBandedLine(f.Plot, st, pts, append(lower, reversed(upper)...), 45)
		if err != nil {
			return err
		}
		f.Legend.Add(label, l, sc)
	}
	bandKey, _ := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}, {X: 1, Y: 1}})
	bandKey.Color = color.NRGBA{100, 100, 100, 70}
	bandKey.LineStyle.Width = 0
	f.Legend.Add("band: 5-95% bootstrap over seeds", bandKey)
	return nil
}

func reversed(xy plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, len(xy))
	for i := range xy {
		out[len(xy)-1-i] = xy[i]
	}
	return out
}

// drawMetric draws a metric's mean over seeds with its band and, if the
// panel has one, an exact reference curve.
func (f *Figure) drawMetric(p results.Panel, lines []results.Line) error {
	s := results.SummarizeMetric(p, lines, p.Metric)
	var ref results.Series
	if p.Reference != "" {
		ref = results.SummarizeMetric(p, lines, p.Reference)
	}
	var all []float64
	seeds := 0
	for _, pt := range s.Points {
		all = append(all, pt.Mean, pt.Lo, pt.Hi)
		seeds = max(seeds, pt.Seeds)
	}
	for _, pt := range ref.Points {
		all = append(all, pt.Mean)
	}
	if len(s.Points) == 0 {
		return fmt.Errorf("figure: panel %s has no values of %q", p.Name, p.Metric)
	}
	logY := !p.LinearY
	for _, v := range all {
		if !(v > 0) || math.IsInf(v, 0) {
			logY = false
		}
	}
	if f.Plot.Y.Label.Text == "" {
		f.Plot.Y.Label.Text = p.MetricLabel
	}
	if logY {
		ax, _ := newLogAxis(all, 0)
		ax.set(f.Plot)
		f.Plot.Y.Label.Text += " (log)"
	}
	f.setX(p, lines)

	st := EstimatorStyle(p.Estimator)
	if p.Estimator == "" {
		st = Style{Color: color.NRGBA{0, 90, 160, 255}, Glyph: draw.CircleGlyph{}}
	}
	var pts, band plotter.XYs
	for _, pt := range s.Points {
		pts = append(pts, plotter.XY{X: pt.X, Y: pt.Mean})
		band = append(band, plotter.XY{X: pt.X, Y: pt.Lo})
	}
	for i := len(s.Points) - 1; i >= 0; i-- {
		band = append(band, plotter.XY{X: s.Points[i].X, Y: s.Points[i].Hi})
	}
	l, sc, err := addBandedLine(f.Plot, st, pts, band, 60)
	if err != nil {
		return err
	}
	label := p.MetricLabel
	if label == "" {
		label = p.Metric
	}
	f.Legend.Add(fmt.Sprintf("%s, mean over %s", label, plural(seeds, "seed")), l, sc)
	if r := ref.Points; len(r) > 0 {
		xy := make(plotter.XYs, len(r))
		for i, pt := range r {
			xy[i] = plotter.XY{X: pt.X, Y: pt.Mean}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color = color.Black
		l.Width = vg.Points(1.5)
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		f.Plot.Add(l)
		f.Legend.Add(p.ReferenceLabel, l)
	}

	bandKey, _ := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}, {X: 1, Y: 1}})
	bandKey.Color = translucent(st.Color, 60)
	bandKey.LineStyle.Width = 0
	f.Legend.Add("band: 5-95% bootstrap over seeds", bandKey)
	return nil
}

// drawScatter draws the pairs of two vectors of the first seed's cell
// and the diagonal y = x.
func (f *Figure) drawScatter(p results.Panel, lines []results.Line) error {
	var cell *results.Line
	for i := range lines {
		if cell == nil || lines[i].Seed < cell.Seed {
			cell = &lines[i]
		}
	}
	xs, ys := cell.Vector(p.ScatterX), cell.Vector(p.ScatterY)
	if len(xs) == 0 || len(xs) != len(ys) {
		return fmt.Errorf("figure: panel %s: vectors %q and %q missing or of different lengths (%d, %d)", p.Name, p.ScatterX, p.ScatterY, len(xs), len(ys))
	}
	var pts plotter.XYs
	top := 0.0
	for i := range xs {
		if math.IsNaN(xs[i]) || math.IsNaN(ys[i]) || math.IsInf(xs[i], 0) || math.IsInf(ys[i], 0) {
			continue
		}
		pts = append(pts, plotter.XY{X: xs[i], Y: ys[i]})
		top = math.Max(top, math.Max(xs[i], ys[i]))
	}
	if len(pts) == 0 {
		return fmt.Errorf("figure: panel %s has no finite pairs", p.Name)
	}
	if f.Plot.Y.Label.Text == "" {
		f.Plot.Y.Label.Text = p.ScatterY
	}
	top *= 1.05
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: top, Y: top}})
	if err != nil {
		return err
	}
	diag.Color = color.Black
	diag.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return err
	}
	st := EstimatorStyle(p.Estimator)
	sc.Color = translucent(st.Color, 150)
	sc.Shape = draw.CircleGlyph{}
	sc.Radius = vg.Points(1.8)
	f.Plot.Add(diag, sc)
	f.Plot.X.Min, f.Plot.Y.Min, f.Plot.X.Max, f.Plot.Y.Max = 0, 0, top, top
	label := "one point per state"
	if p.MetricLabel != "" {
		label = p.MetricLabel
	}
	f.Legend.Add(fmt.Sprintf("%s (seed %d)", label, cell.Seed), sc)
	f.Legend.Add("diagonal: exact estimate", diag)
	return nil
}

// setX sets the x axis: ticks at the settings, labelled by their tick
// text on a categorical axis, log scale if the panel asks.
func (f *Figure) setX(p results.Panel, lines []results.Line) {
	type tick struct {
		x    float64
		text string
	}
	var ticks []tick
	seen := map[float64]bool{}
	add := func(x float64, text string) {
		if !seen[x] {
			seen[x] = true
			ticks = append(ticks, tick{x, text})
		}
	}
	if len(p.Settings) > 0 {
		for _, s := range p.Settings {
			add(s.X, s.Tick)
		}
	} else {
		for _, l := range lines {
			add(float64(l.X), l.Tick)
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var ct plot.ConstantTicks
	for _, t := range ticks {
		lo, hi = math.Min(lo, t.x), math.Max(hi, t.x)
		label := t.text
		if label == "" {
			label = strconv.FormatFloat(t.x, 'g', -1, 64)
		}
		ct = append(ct, plot.Tick{Value: t.x, Label: label})
	}
	ax := &f.Plot.X
	ax.Tick.Marker = ct
	if p.LogX && lo > 0 {
		ax.Scale = plot.LogScale{}
		ax.Min, ax.Max = lo/1.15, hi*1.15
		return
	}
	pad := 0.05 * (hi - lo)
	if pad == 0 {
		pad = 0.5
	}
	if ticks[0].text != "" { // categorical: half a slot each side
		pad = 0.5
	}
	ax.Min, ax.Max = lo-pad, hi+pad
}

// maxDecades bounds the span of a log axis; larger values (importance
// sampling at long horizons) are drawn on the top edge. Values at or below
// results.ExactMSE (exact up to rounding) are drawn on the bottom edge.
const maxDecades = 12

// logAxis is the range of a log-scale y axis.
type logAxis struct {
	lo, hi float64 // decade-aligned axis limits
	zero   float64 // values at or below it are drawn at lo
	max    float64 // values above it (off the chart) are drawn at hi
}

// newLogAxis chooses the range for the finite values above zero in v:
// from the decade below the smallest to the decade above the largest,
// cut to maxDecades decades above the smallest.
func newLogAxis(v []float64, zero float64) (logAxis, bool) {
	minPos, maxV := math.Inf(1), 0.0
	zeros := false
	for _, x := range v {
		switch {
		case x > zero && !math.IsInf(x, 0):
			minPos = math.Min(minPos, x)
			maxV = math.Max(maxV, x)
		case x >= 0 && x <= zero:
			zeros = true
		}
	}
	if maxV == 0 {
		return logAxis{}, false
	}
	a := logAxis{zero: zero, max: math.Min(maxV, minPos*math.Pow(10, maxDecades))}
	// The 1e-9 absorbs rounding in Log10 (Log10(0.1) is not exactly -1).
	a.lo = math.Pow(10, math.Floor(math.Log10(minPos)+1e-9))
	a.hi = math.Pow(10, math.Ceil(math.Log10(a.max)-1e-9))
	// Keep the bottom edge below every value, and a decade below when
	// zeros are drawn on it, so they stand apart from the smallest value.
	if a.lo >= minPos || a.lo == a.hi || zeros {
		a.lo /= 10
	}
	if a.hi < a.max { // rounding in Pow
		a.hi *= 10
	}
	if a.max == maxV { // nothing cut: everything up to the top edge is drawn as is
		a.max = a.hi
	}
	return a, true
}

// clamp keeps a value inside the axis.
func (a logAxis) clamp(v float64) float64 {
	switch {
	case math.IsNaN(v) || v <= a.zero || v < a.lo:
		return a.lo
	case v > a.max || v > a.hi:
		return a.hi
	}
	return v
}

func (a logAxis) set(p *plot.Plot) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = decadeTicks{}
	p.Y.Min, p.Y.Max = a.lo, a.hi
}

// decadeTicks labels every power of ten in the axis range and marks 2..9
// times it with minor ticks. (plot.LogTicks truncates log10 of the
// minimum toward zero, which drops the lowest decade when log10 of the
// minimum rounds to just above an integer.)
type decadeTicks struct{}

func (decadeTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo) + 1e-9); ; e++ {
		v := math.Pow(10, e)
		if v > hi*(1+1e-9) {
			break
		}
		if v >= lo*(1-1e-9) {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
		}
		for k := 2; k < 10; k++ {
			if m := float64(k) * v; m > lo && m < hi {
				ticks = append(ticks, plot.Tick{Value: m})
			}
		}
	}
	return ticks
}

// Save writes the figure to path; the extension (.png, .svg, .pdf)
// picks the format. The legend is drawn to the right of the plot.
func (f *Figure) Save(path string) (err error) {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	wt, err := f.render(format)
	if err != nil {
		return fmt.Errorf("figure %s: %w", path, err)
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if e := out.Close(); err == nil {
			err = e
		}
	}()
	_, err = wt.WriteTo(out)
	return err
}

func (f *Figure) render(format string) (io.WriterTo, error) {
	w, h := f.size()
	var c vg.CanvasWriterTo
	if format == "png" {
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI))}
	} else {
		var err error
		if c, err = draw.NewFormattedCanvas(w, h, format); err != nil {
			return nil, err
		}
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	if f.Legend == nil || f.Legend.Len() == 0 {
		f.Plot.Draw(dc)
		return c, nil
	}
	pad := vg.Points(8)
	f.Legend.MaxWidth = w/4 - 2*pad
	lw, _ := f.Legend.Size()
	legW := lw + 2*pad
	f.Plot.Draw(draw.Crop(dc, 0, -legW, 0, 0))
	top := f.Plot.Title.TextStyle.Height(f.Plot.Title.Text) + 2*pad
	f.Legend.Draw(draw.Crop(dc, w-legW+pad, 0, 0, -top))
	return c, nil
}

// SVG returns the figure as an SVG document.
func (f *Figure) SVG() ([]byte, error) {
	wt, err := f.render("svg")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// plural writes "1 seed", "2 seeds".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// WriteAll draws every panel that has results and saves each as
// base-PANEL.png and base-PANEL.svg. It returns the files written and the
// notes of all figures. A panel without results is skipped with a note.
func WriteAll(base string, panels []results.Panel, lines []results.Line) (files, notes []string, err error) {
	for _, p := range panels {
		has := false
		for i := range lines {
			if lines[i].Panel == p.Name {
				has = true
				break
			}
		}
		if !has {
			notes = append(notes, fmt.Sprintf("%s: no results yet, no figure", p.Name))
			continue
		}
		fig, err := Draw(p, lines)
		if err != nil {
			return files, notes, err
		}
		notes = append(notes, fig.Notes...)
		for _, ext := range []string{".png", ".svg"} {
			path := base + "-" + p.Name + ext
			if err := fig.Save(path); err != nil {
				return files, notes, err
			}
			files = append(files, path)
		}
	}
	return files, notes, nil
}

// addBandedLine draws a series in style st: the translucent band polygon
// (when there are two or more points) under a line with markers.
func addBandedLine(p *plot.Plot, st Style, pts, band plotter.XYs, alpha uint8) (*plotter.Line, *plotter.Scatter, error) {
	if len(pts) > 1 {
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return nil, nil, err
		}
		poly.Color = translucent(st.Color, alpha)
		poly.LineStyle.Width = 0
		p.Add(poly)
	}
	l, sc, err := plotter.NewLinePoints(pts)
	if err != nil {
		return nil, nil, err
	}
	l.Color, sc.Color, sc.Shape = st.Color, st.Color, st.Glyph
	l.Width = vg.Points(1.5)
	if st.Dashed {
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	sc.Radius = vg.Points(3)
	p.Add(l, sc)
	return l, sc, nil
}
