package figure

import (
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Legend names the lines of a figure, one entry under another, each
// with its thumbnail. Unlike plot.Legend it wraps a label that would make
// it wider than MaxWidth onto more lines at its spaces, and gives each
// entry only the lines it needs, so that long notes ("(some seeds
// failed)") neither push the plot aside nor space out every entry.
type Legend struct {
	// TextStyle is the style of the labels.
	TextStyle text.Style
	// ThumbnailWidth is the width of the thumbnails.
	ThumbnailWidth vg.Length
	// MaxWidth bounds the legend's width, thumbnails included; 0 means
	// no bound. A word wider than the room left is set in a smaller font.
	MaxWidth vg.Length
	// Padding is the space between entries.
	Padding vg.Length

	entries []legendEntry
}

type legendEntry struct {
	text   string
	thumbs []plot.Thumbnailer
}

// NewLegend returns an empty legend with 9 pt labels that draw sub- and
// superscripts (Scripts).
func NewLegend() *Legend {
	return &Legend{
		TextStyle: text.Style{
			Font:    font.From(plot.DefaultFont, vg.Points(9)),
			Handler: Scripts{Fonts: plot.DefaultTextHandler.Cache()},
		},
		ThumbnailWidth: vg.Points(20),
		Padding:        vg.Points(3),
	}
}

// Add adds an entry whose thumbnail is drawn by every thumbs in turn.
func (l *Legend) Add(label string, thumbs ...plot.Thumbnailer) {
	l.entries = append(l.entries, legendEntry{text: label, thumbs: thumbs})
}

// Len returns the number of entries.
func (l *Legend) Len() int { return len(l.entries) }

// Labels returns the text of the entries, as added.
func (l *Legend) Labels() []string {
	out := make([]string, len(l.entries))
	for i, e := range l.entries {
		out[i] = e.text
	}
	return out
}

// gap is the space between a thumbnail and its label.
func (l *Legend) gap() vg.Length { return l.TextStyle.Font.Size / 2 }

// layout returns the text style to draw with and every entry's lines:
// labels wrapped at spaces to fit MaxWidth, in a smaller font if a word
// alone is too wide (down to 6 pt).
func (l *Legend) layout() (text.Style, [][]string) {
	sty := l.TextStyle
	room := l.MaxWidth - l.ThumbnailWidth - l.gap()
	for {
		lines, widest := make([][]string, len(l.entries)), vg.Length(0)
		for i, e := range l.entries {
			lines[i] = wrap(e.text, sty, room, l.MaxWidth > 0)
			for _, ln := range lines[i] {
				widest = max(widest, sty.Width(ln))
			}
		}
		if l.MaxWidth <= 0 || widest <= room || sty.Font.Size <= vg.Points(6) {
			return sty, lines
		}
		sty.Font.Size = max(vg.Points(6), sty.Font.Size*room/widest)
	}
}

// wrap splits a label into lines at its spaces (and its own line breaks)
// so that each is at most room wide where words allow.
func wrap(label string, sty text.Style, room vg.Length, bounded bool) []string {
	var out []string
	for _, para := range strings.Split(label, "\n") {
		words := strings.Fields(para)
		if !bounded || len(words) == 0 {
			out = append(out, para)
			continue
		}
		line := words[0]
		for _, w := range words[1:] {
			if sty.Width(line+" "+w) <= room {
				line += " " + w
				continue
			}
			out = append(out, line)
			line = w
		}
		out = append(out, line)
	}
	return out
}

// lineHeight is the height of a line of a label in style sty: 1.2
// times the font size, or more for a line whose sub- or superscripts
// reach further.
func lineHeight(sty text.Style, line string) vg.Length {
	_, h, d := sty.Handler.Box(line, sty.Font)
	return max(sty.Font.Size*1.2, h+d+sty.Font.Size*0.2)
}

// Size returns the legend's width and height.
func (l *Legend) Size() (w, h vg.Length) {
	if len(l.entries) == 0 {
		return 0, 0
	}
	sty, lines := l.layout()
	for i, ls := range lines {
		for _, ln := range ls {
			w = max(w, sty.Width(ln))
		}
		for _, ln := range ls {
			h += lineHeight(sty, ln)
		}
		if i > 0 {
			h += l.Padding
		}
	}
	return l.ThumbnailWidth + l.gap() + w, h
}

// Draw draws the legend in the top left corner of c.
func (l *Legend) Draw(c draw.Canvas) {
	sty, lines := l.layout()
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
	y := c.Max.Y
	for i, e := range l.entries {
		for k, ln := range lines[i] {
			lh := lineHeight(sty, ln)
			if k == 0 { // the thumbnail beside the first line
				icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
					Min: vg.Point{X: c.Min.X, Y: y - lh},
					Max: vg.Point{X: c.Min.X + l.ThumbnailWidth, Y: y},
				}}
				for _, t := range e.thumbs {
					t.Thumbnail(&icon)
				}
			}
			// Centre the line's text in its height.
			c.FillText(sty, vg.Point{X: c.Min.X + l.ThumbnailWidth + l.gap(), Y: y - (lh-sty.Height(ln))/2}, ln)
			y -= lh
		}
		y -= l.Padding
	}
}
