package policy

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/dataset/logio"
)

// Draws read from CSV (columns in any order), TSV and gzip agree; a state
// is matched by its bits (-0 as 0), and several draws at one state are
// picked among uniformly.
func TestReadDraws(t *testing.T) {
	const csvText = "action_0,state_1,state_0\n0.5,2,1\n-1,4,3\n0.25,2,1\n7,0,-0\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(csvText))
	zw.Close()
	tsv := strings.ReplaceAll(csvText, ",", "\t")
	withIDs := "episode,t,action_0,state_1,state_0\na,0,0.5,2,1\na,1,-1,4,3\nb,0,0.25,2,1\nb,1,7,0,-0\n"
	for _, c := range []struct {
		name string
		data []byte
		f    logio.Format
	}{{"d.csv", []byte(csvText), logio.CSV}, {"d.csv.gz", gz.Bytes(), logio.CSVGzip}, {"d.tsv", []byte(tsv), logio.TSV},
		{"d.CSV", []byte("\ufeff" + csvText), logio.CSV}, {"ids.csv", []byte(withIDs), logio.CSV}} {
		p, err := ReadDraws(bytes.NewReader(c.data), c.f, c.name)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.StateDim() != 2 || p.ActionDim() != 1 || p.MaxPerState() != 2 || !math.IsNaN(p.LogProb([]float64{1, 2}, []float64{0})) {
			t.Errorf("%s: dims %d, %d, max %d", c.name, p.StateDim(), p.ActionDim(), p.MaxPerState())
		}
		rng := rand.New(rand.NewPCG(1, 1))
		if a := p.Sample(rng, []float64{3, 4}); !slices.Equal(a, []float64{-1}) {
			t.Errorf("%s: draw at (3, 4) %v", c.name, a)
		}
		if a := p.Sample(rng, []float64{0, 0}); !slices.Equal(a, []float64{7}) || !p.Has([]float64{math.Copysign(0, -1), 0}) {
			t.Errorf("%s: draw at (0, 0) %v", c.name, a)
		}
		seen := map[float64]int{}
		for range 2000 {
			seen[p.Sample(rng, []float64{1, 2})[0]]++
		}
		if len(seen) != 2 || seen[0.5] < 900 || seen[0.25] < 900 {
			t.Errorf("%s: draws at (1, 2): %v", c.name, seen)
		}
		if p.Has([]float64{1, 2.0000000000000004}) {
			t.Errorf("%s: a state one bit away matched", c.name)
		}
		if a := p.Sample(rng, []float64{5, 5}); len(a) != 1 || !math.IsNaN(a[0]) {
			t.Errorf("%s: draw at a state without draws %v, want NaN", c.name, a)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"state_0,action_0,foo\n1,2,3\n", `row 1, column "foo": unknown column`},
		{"state_0,state_2,action_0\n1,2,3\n", `row 1, column "state_1": column is missing`},
		{"state_0\n1\n", `row 1, column "action_0": required column is missing`},
		{"state_0,action_0\n1,x\n", `row 2, column "action_0": "x" is not a number`},
		{"state_0,action_0\n1,1_0\n", `row 2, column "action_0": "1_0" is not a number`},
		{"state_0,action_0\nNaN,1\n", `row 2, column "state_0": NaN is not allowed`},
		{"state_0,action_0\n", "no draws after the header"},
	} {
		if _, err := ReadDraws(strings.NewReader(c.in), logio.CSV, "d.csv"); err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "d.csv: ") {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

// Draws written for a log's states read back the same, in every text
// format; Check passes on that log, and names the first state a longer
// log has without a draw.
func TestDrawsRoundTripAndCheck(t *testing.T) {
	d := &dataset.Dataset{StateDim: 1, ActionDim: 1, IDs: []string{"a"}, Start: []int{0, 2},
		Obs: []float64{0.1, 1.0 / 3}, HasFinal: []bool{true}, FinalObs: []float64{-0.3}}
	pi, err := NewDraws([][]float64{{0.1}, {1.0 / 3}, {-0.3}}, [][]float64{{1}, {2}, {3}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []logio.Format{logio.CSV, logio.TSV, logio.CSVGzip, logio.TSVGzip} {
		var buf bytes.Buffer
		if err := WriteDraws(&buf, f, d, pi, rand.New(rand.NewPCG(1, 1))); err != nil {
			t.Fatal(err)
		}
		back, err := ReadDraws(&buf, f, "d")
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := back.Check(d); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		for i, s := range [][]float64{{0.1}, {1.0 / 3}, {-0.3}} {
			if a := back.Sample(nil, s); a[0] != float64(i+1) {
				t.Errorf("%s: draw at %v: %v, want %d", f, s, a, i+1)
			}
		}
	}
	if err := WriteDraws(io.Discard, logio.Parquet, d, pi, nil); err == nil {
		t.Error("Parquet draws written")
	}
	longer := *d
	longer.Start, longer.Obs = []int{0, 3}, []float64{0.1, 1.0 / 3, 0.5}
	if err := pi.Check(&longer); err == nil || err.Error() != `no target draw at the state of episode "a", t = 2 (1 state of the log without one; the states must be written as in the log, bit for bit)` {
		t.Errorf("longer log: %v", err)
	}
}
