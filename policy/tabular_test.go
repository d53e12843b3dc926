package policy

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestNewTabularErrors(t *testing.T) {
	for i, probs := range [][][]float64{
		nil,
		{{}},
		{{0.5, 0.5}, {1}},
		{{0.5, 0.6}},
		{{-0.1, 1.1}},
		{{math.NaN(), 1}},
		{{math.Inf(1), 0}},
	} {
		if _, err := NewTabular(probs); err == nil {
			t.Errorf("%d: %v accepted", i, probs)
		}
	}
}

func TestMixtureAndSoftmax(t *testing.T) {
	a, _ := NewTabular([][]float64{{1, 0}, {0.5, 0.5}})
	b, _ := NewTabular([][]float64{{0, 1}, {0.25, 0.75}})
	m, err := Mixture(0.25, a, b)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{0.75, 0.25}, {0.4375, 0.5625}}
	for s := range want {
		for act, w := range want[s] {
			if got := m.Prob(s, act); math.Abs(got-w) > 1e-15 {
				t.Errorf("mixture(%d,%d) = %v, want %v", s, act, got, w)
			}
		}
	}
	if _, err := Mixture(1.5, a, b); err == nil {
		t.Error("alpha 1.5 accepted")
	}
	// exp(Q/temp): Q = (0, 2 ln 2) at temperature 2 gives (1/3, 2/3); a
	// huge Q does not overflow.
	sm, err := SoftmaxQ([][]float64{{0, 2 * math.Ln2}, {1e308, 1e308}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := sm.Row(0); math.Abs(got[0]-1.0/3) > 1e-15 || math.Abs(got[1]-2.0/3) > 1e-15 {
		t.Errorf("softmax row 0 = %v", got)
	}
	if got := sm.Row(1); got[0] != 0.5 || got[1] != 0.5 {
		t.Errorf("softmax row 1 = %v", got)
	}
	if _, err := SoftmaxQ([][]float64{{0}}, 0); err == nil {
		t.Error("temperature 0 accepted")
	}
}

// The authors' policy files round-trip exactly through ReadCSV/WriteCSV.
func TestCSVRoundTrip(t *testing.T) {
	raw, err := os.ReadFile("../sim/taxi/policies/pi19.csv")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ReadCSV(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if p.NumStates() != 2000 || p.NumActions() != 6 {
		t.Fatalf("%dx%d", p.NumStates(), p.NumActions())
	}
	if got := p.Prob(0, 0); math.Abs(got-0.1792821212272683) > 1e-16 {
		t.Errorf("pi19(0|0) = %.17g", got)
	}
	var buf bytes.Buffer
	if err := p.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	q, err := ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, q) {
		t.Error("round trip changed the policy")
	}

	// The same rows shuffled, with CRLF line ends and a byte-order mark
	// (Excel's "CSV UTF-8"), read the same.
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	body := lines[1:]
	rand.New(rand.NewPCG(1, 1)).Shuffle(len(body), func(i, j int) { body[i], body[j] = body[j], body[i] })
	excel := "\ufeff" + strings.Join(append(lines[:1:1], body...), "\r\n") + "\r\n"
	r, err := ReadCSV(strings.NewReader(excel))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, r) {
		t.Error("shuffled rows with a byte-order mark read another policy")
	}
	for i, c := range []struct{ bad, want string }{
		{"", "header"},
		{"state,p1\n0,1\n", "column 2"},
		{"s,p0\n0,1\n", "header"},
		{"state,p0,p1\n1,0.5,0.5\n", "no row for state 0 (states 0 ... 1 must each have one)"},
		{"state,p0,p1\n0,0.5,0.5\n1,0.5,0.5\n0,1,0\n", "row 4: state 0 again (first on row 2)"},
		{"state,p0,p1\n-1,0.5,0.5\n", "row 2: state \"-1\" is not a state id"},
		{"state,p0,p1\n+0,0.5,0.5\n", "row 2: state \"+0\" is not a state id"},
		{"state,p0,p1\n0,0.5,0.5\n01,0.5,0.5\n", "row 3: state \"01\" is not a state id"},
		{"state,p0,p1\n0,0.5,0.5\n1000000000,0.5,0.5\n", "no row for state 1 (states 0 ... 1000000000 must each have one)"},
		{"state,p0,p1\n0,0.5,0x1p-1\n", "row 2 column p1: \"0x1p-1\" is not a number"},
		{"state,p0,p1\n0,0.5,x\n", "row 2 column p1"},
		{"state,p0,p1\n0,0.5,0.5\n1,0.5,0.6\n", "row 3 (state 1): probabilities sum to 1.1, want 1"},
		{"state,p0,p1\n0,0.5,0.5\n1,1.5,-0.5\n", "row 3 (state 1) action 1: probability -0.5"},
	} {
		if _, err := ReadCSV(strings.NewReader(c.bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d: %q: error %v, want one with %q", i, c.bad, err, c.want)
		}
	}
}

// Sampling follows the row: frequencies within 5 standard errors, and
// zero-probability actions never drawn.
func TestSample(t *testing.T) {
	p, _ := NewTabular([][]float64{{0.2, 0, 0.5, 0.3}})
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 200000
	counts := make([]int, 4)
	for range n {
		counts[p.Sample(rng, 0)]++
	}
	for a, c := range counts {
		pa := p.Prob(0, a)
		se := math.Sqrt(pa * (1 - pa) / n)
		if math.Abs(float64(c)/n-pa) > 5*se+1e-12 {
			t.Errorf("action %d: frequency %v, want %v", a, float64(c)/n, pa)
		}
	}
	if counts[1] != 0 {
		t.Error("drew a zero-probability action")
	}
}
