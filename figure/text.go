package figure

import (
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// Scripts is a text handler that draws x_y with y as a subscript and x^y
// with y as a superscript, where y is one character or a {group}; "\_"
// and "\^" are the characters themselves, and so is an '_' or '^' with
// nothing after it. Everything else it draws as text.Plain does. Labels
// such as "A_ρ^L" or "π(a_t|s_t)" then read as they do in the paper,
// not with literal underscores. (gonum's text.Latex handler does this in
// math mode, but it panics on text it cannot parse and sets ordinary
// text in its own way; labels here are mostly words.)
type Scripts struct {
	Fonts *font.Cache
}

var _ text.Handler = Scripts{}

// Sizes and shifts of scripts, as fractions of the font size.
const (
	scriptScale = 0.7
	supRaise    = 0.4
	subDrop     = 0.2
)

// segment is a piece of a line at one level: 0 on the baseline, +1 a
// superscript, -1 a subscript.
type segment struct {
	s     string
	level int
}

// segments splits a line into its pieces.
func segments(line string) []segment {
	var out []segment
	var cur strings.Builder
	flush := func(level int) {
		if cur.Len() > 0 {
			out = append(out, segment{cur.String(), level})
			cur.Reset()
		}
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\\' && i+1 < len(rs) && (rs[i+1] == '_' || rs[i+1] == '^'):
			cur.WriteRune(rs[i+1])
			i++
		case (r == '_' || r == '^') && i+1 < len(rs) && rs[i+1] != ' ':
			level := 1
			if r == '_' {
				level = -1
			}
			flush(0)
			j := i + 1
			if rs[j] == '{' {
				end := j + 1
				for end < len(rs) && rs[end] != '}' {
					end++
				}
				cur.WriteString(string(rs[j+1 : end]))
				i = end // past the closing brace (or the end)
			} else {
				cur.WriteRune(rs[j])
				i = j
			}
			flush(level)
		default:
			cur.WriteRune(r)
		}
	}
	flush(0)
	return out
}

// Cache returns the cache of fonts used by the text handler.
func (h Scripts) Cache() *font.Cache { return h.Fonts }

// Extents returns the Extents of a font.
func (h Scripts) Extents(fnt font.Font) font.Extents {
	f := h.Fonts.Lookup(fnt, fnt.Size)
	return f.Extents()
}

// Lines splits a given block of text into separate lines.
func (h Scripts) Lines(txt string) []string {
	return strings.Split(strings.TrimRight(txt, "\n"), "\n")
}

// face returns the face of a segment's level.
func (h Scripts) face(fnt font.Font, level int) font.Face {
	if level != 0 {
		fnt.Size *= scriptScale
	}
	return h.Fonts.Lookup(fnt, fnt.Size)
}

// shift is the baseline offset of a level.
func shift(size vg.Length, level int) vg.Length {
	switch level {
	case 1:
		return supRaise * size
	case -1:
		return -subDrop * size
	}
	return 0
}

// Box returns the bounding box of the given non-multiline text where:
//   - width is the horizontal space from the origin.
//   - height is the vertical space above the baseline.
//   - depth is the vertical space below the baseline, a positive number.
func (h Scripts) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	e := h.Extents(fnt)
	height, depth = e.Ascent, e.Descent
	for _, s := range segments(txt) {
		f := h.face(fnt, s.level)
		width += f.Width(s.s)
		fe := f.Extents()
		dy := shift(fnt.Size, s.level)
		height = vg.Length(math.Max(float64(height), float64(dy+fe.Ascent)))
		depth = vg.Length(math.Max(float64(depth), float64(fe.Descent-dy)))
	}
	return width, height, depth
}

// Draw renders the given text with the provided style and position on
// the canvas, as text.Plain does, each segment at its level.
func (h Scripts) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	txt = strings.TrimRight(txt, "\n")
	if len(txt) == 0 {
		return
	}
	c.SetColor(sty.Color)
	if sty.Rotation != 0 {
		c.Push()
		c.Rotate(sty.Rotation)
		defer c.Pop()
	}
	sin64, cos64 := math.Sincos(sty.Rotation)
	cos, sin := vg.Length(cos64), vg.Length(sin64)
	pt.X, pt.Y = pt.Y*sin+pt.X*cos, pt.Y*cos-pt.X*sin

	lines := h.Lines(txt)
	pt.Y += sty.Height(txt)*vg.Length(sty.YAlign) - h.Extents(sty.Font).Ascent
	for i, line := range lines {
		w, _, _ := h.Box(line, sty.Font)
		n := vg.Length(len(lines) - i)
		at := pt.Add(vg.Point{X: vg.Length(sty.XAlign) * w, Y: n * sty.Font.Size})
		for _, s := range segments(line) {
			f := h.face(sty.Font, s.level)
			c.FillString(f, vg.Point{X: at.X, Y: at.Y + shift(sty.Font.Size, s.level)}, s.s)
			at.X += f.Width(s.s)
		}
	}
}

// scripted sets the Scripts handler on every text of p.
func scripted(p *plot.Plot) {
	h := Scripts{Fonts: plot.DefaultTextHandler.Cache()}
	p.Title.TextStyle.Handler = h
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Handler = h
		ax.Tick.Label.Handler = h
	}
}

// newPlot returns a plot whose texts draw sub- and superscripts.
func newPlot() *plot.Plot {
	p := plot.New()
	scripted(p)
	return p
}
