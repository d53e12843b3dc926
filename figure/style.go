package figure

import (
	"hash/fnv"
	"image/color"

	"gonum.org/v1/plot/vg/draw"

	"github.com/ihope-ope/ihope/ope"
)

// Style is how one estimator is drawn in every figure.
type Style struct {
	// Color of its line, markers and (translucent) band.
	Color color.NRGBA
	// Glyph is its marker shape.
	Glyph draw.GlyphDrawer
	// Label is its legend entry, readable without the paper.
	Label string
	// Dashed draws its line dashed (the oracle and the naive baseline,
	// which are references rather than competitors).
	Dashed bool
}

// styles fixes a colour and a marker per estimator name, so an estimator
// looks the same in every figure. Colours follow the Okabe-Ito palette
// (distinguishable with colour-blindness); the paper's estimator is the
// strong red.
var styles = map[string]Style{
	"on-policy":      {Color: color.NRGBA{0, 0, 0, 255}, Glyph: draw.CrossGlyph{}, Dashed: true},
	"naive":          {Color: color.NRGBA{128, 128, 128, 255}, Glyph: draw.PlusGlyph{}, Dashed: true},
	"is-trajectory":  {Color: color.NRGBA{230, 159, 0, 255}, Glyph: draw.RingGlyph{}},
	"wis-trajectory": {Color: color.NRGBA{213, 94, 0, 255}, Glyph: draw.TriangleGlyph{}},
	"is-stepwise":    {Color: color.NRGBA{86, 180, 233, 255}, Glyph: draw.BoxGlyph{}},
	"wis-stepwise":   {Color: color.NRGBA{0, 114, 178, 255}, Glyph: draw.SquareGlyph{}},
	"model-based":    {Color: color.NRGBA{0, 158, 115, 255}, Glyph: draw.PyramidGlyph{}},
	"bch-tabular":    {Color: color.NRGBA{200, 0, 40, 255}, Glyph: draw.CircleGlyph{}},
	"bch-kernel":     {Color: color.NRGBA{110, 20, 60, 255}, Glyph: draw.RingGlyph{}},
	"bch-neural":     {Color: color.NRGBA{204, 121, 167, 255}, Glyph: draw.CircleGlyph{}},
	"fqe":            {Color: color.NRGBA{0, 90, 60, 255}, Glyph: draw.PyramidGlyph{}},
	"mis":            {Color: color.NRGBA{120, 70, 160, 255}, Glyph: draw.TriangleGlyph{}},
	"dr":             {Color: color.NRGBA{150, 110, 0, 255}, Glyph: draw.SquareGlyph{}},
	"mwl":            {Color: color.NRGBA{0, 140, 140, 255}, Glyph: draw.TriangleGlyph{}},
	"mql":            {Color: color.NRGBA{140, 80, 30, 255}, Glyph: draw.PyramidGlyph{}},
	"dualdice":       {Color: color.NRGBA{170, 0, 170, 255}, Glyph: draw.BoxGlyph{}},
}

// EstimatorStyle returns the fixed style of an estimator, its legend label
// from the estimator registry (ope.Lookup). Names without a fixed style
// get a colour derived from the name (stable across figures) and a ring
// marker.
func EstimatorStyle(name string) Style {
	label := name
	if e, ok := ope.Lookup(name); ok {
		label = e.Label
	}
	if s, ok := styles[name]; ok {
		s.Label = label
		return s
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	return Style{
		Color: color.NRGBA{uint8(40 + v%150), uint8(40 + (v>>8)%150), uint8(40 + (v>>16)%150), 255},
		Glyph: draw.RingGlyph{},
		Label: label,
	}
}

// translucent returns c with the given alpha (non-premultiplied, so the
// colour keeps its hue, as gonum/plot expects of color.NRGBA).
func translucent(c color.NRGBA, alpha uint8) color.NRGBA {
	c.A = alpha
	return c
}
