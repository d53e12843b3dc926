package sumo

import (
	"context"
	"math"
	"strings"
	"testing"
)

func TestPhaseStates(t *testing.T) {
	// Links per approach (N, E, S, W): right, straight, straight, left.
	for a, want := range []string{
		"GGGrrrrrGGGrrrrr", // north-south straight and right
		"rrrGrrrrrrrGrrrr", // north-south left
		"rrrrGGGrrrrrGGGr", // east-west straight and right
		"rrrrrrrGrrrrrrrG", // east-west left
	} {
		if got := GreenState(a); got != want {
			t.Errorf("GreenState(%d) = %s, want %s", a, got, want)
		}
		if got, w := YellowState(a), strings.ReplaceAll(want, "G", "y"); got != w {
			t.Errorf("YellowState(%d) = %s, want %s", a, got, w)
		}
	}
}

func TestYellowPhase(t *testing.T) {
	want := map[[2]int]int{
		{0, 1}: 4, {0, 2}: 5, {0, 3}: 6,
		{1, 0}: 7, {1, 2}: 8, {1, 3}: 9,
		{2, 0}: 10, {2, 1}: 11, {2, 3}: 12,
		{3, 0}: 13, {3, 1}: 14, {3, 2}: 15,
	}
	for k, w := range want {
		if got := YellowPhase(k[0], k[1]); got != w {
			t.Errorf("YellowPhase(%d, %d) = %d, want %d", k[0], k[1], got, w)
		}
	}
	// The program written for netconvert lists them in that order, each
	// handing over to its target green.
	xml := string(newGrid(Config{Grid: 1, Length: 200}).tlsXML())
	phases := strings.Split(xml, "<phase ")[1:]
	if len(phases) != 16 {
		t.Fatalf("%d phases, want 16", len(phases))
	}
	for k, w := range want {
		p := phases[w]
		if !strings.Contains(p, `state="`+YellowState(k[0])+`"`) || !strings.Contains(p, `next="`+string(rune('0'+k[1]))+`"`) ||
			!strings.Contains(p, `duration="3"`) {
			t.Errorf("phase %d = %s, want yellow of %d then %d", w, p, k[0], k[1])
		}
	}
}

// heading returns the compass direction (0 N, 1 E, 2 S, 3 W) of travel
// along an edge "from_to" of grid g.
func heading(t *testing.T, g grid, edge string) int {
	t.Helper()
	pos := map[string][2]float64{}
	g.eachLight(func(c node) {
		pos[c.id] = [2]float64{c.x, c.y}
		for d := range 4 {
			nb := g.neighbor(c.i, c.j, d)
			pos[nb.id] = [2]float64{nb.x, nb.y}
		}
	})
	ends := strings.Split(edge, "_")
	a, b := pos[ends[0]], pos[ends[1]]
	dx, dy := b[0]-a[0], b[1]-a[1]
	switch {
	case dx == 0 && dy > 0:
		return 0
	case dy == 0 && dx > 0:
		return 1
	case dx == 0 && dy < 0:
		return 2
	case dy == 0 && dx < 0:
		return 3
	}
	t.Fatalf("edge %s from %v to %v is not axis-aligned", edge, a, b)
	return -1
}

func TestRoutes(t *testing.T) {
	for _, tc := range []struct {
		grid, routes, straight int
		total                  float64
	}{
		// 4 entries x (straight, right, left).
		{1, 12, 4, 0},
		// 8 entries x (straight + 2 turns at either of 2 lights).
		{2, 40, 8, 0},
	} {
		g := newGrid(Config{Grid: tc.grid, Length: 200, Demand: 1})
		routes := g.routes()
		if len(routes) != tc.routes {
			t.Fatalf("grid %d: %d routes, want %d", tc.grid, len(routes), tc.routes)
		}
		ids := map[string]bool{}
		probs := map[float64]bool{}
		straight := 0
		for _, r := range routes {
			if ids[r.ID] {
				t.Errorf("grid %d: route %s twice", tc.grid, r.ID)
			}
			ids[r.ID] = true
			probs[r.Prob] = true
			turns := 0
			for k := 1; k < len(r.Edges); k++ {
				if heading(t, g, r.Edges[k]) != heading(t, g, r.Edges[k-1]) {
					turns++
				}
			}
			if turns != r.Turns || turns > 1 {
				t.Errorf("grid %d: route %s %v turns %d times (recorded %d)", tc.grid, r.ID, r.Edges, turns, r.Turns)
			}
			if turns == 0 {
				straight++
				if len(r.Edges) != tc.grid+1 {
					t.Errorf("grid %d: straight route %s has %d edges", tc.grid, r.ID, len(r.Edges))
				}
			}
			base := baseProb[turnNone]
			if turns == 1 {
				base = math.Min(baseProb[turnRight], baseProb[turnLeft])
				if tc.grid > 1 {
					base /= 2
				}
			}
			if !(r.Prob >= 0.5*base-1e-4 && r.Prob <= 1.5*math.Max(base, baseProb[turnLeft])+1e-4) {
				t.Errorf("grid %d: route %s probability %v outside its range", tc.grid, r.ID, r.Prob)
			}
		}
		if straight != tc.straight {
			t.Errorf("grid %d: %d straight routes, want %d", tc.grid, straight, tc.straight)
		}
		if len(probs) != len(routes) {
			t.Errorf("grid %d: %d distinct probabilities among %d routes", tc.grid, len(probs), len(routes))
		}
	}
	// Single intersection: the three routes from the north.
	routes := newGrid(Config{Grid: 1, Length: 200, Demand: 1}).routes()
	for _, want := range []string{"n0-s0 n0_J00 J00_s0", "n0-w0 n0_J00 J00_w0", "n0-e0 n0_J00 J00_e0"} {
		f := strings.Fields(want)
		found := false
		for _, r := range routes {
			if r.ID == f[0] && strings.Join(r.Edges, " ") == strings.Join(f[1:], " ") {
				found = true
			}
		}
		if !found {
			t.Errorf("no route %s", want)
		}
	}
}

func TestConfigDefaultsAndErrors(t *testing.T) {
	c, err := Config{}.withDefaults()
	if err != nil || c.Grid != 1 || c.Length != 200 || c.DetectorLength != 180 || c.Demand != 1 || c.Warmup != 300 {
		t.Errorf("defaults %+v, %v", c, err)
	}
	if c, _ := (Config{Warmup: 301}).withDefaults(); c.Warmup != 306 {
		t.Errorf("warm-up 301 rounds to %d, want 306", c.Warmup)
	}
	if c, _ := (Config{Warmup: -1}).withDefaults(); c.Warmup != 0 {
		t.Errorf("warm-up -1 gives %d, want 0 (none)", c.Warmup)
	}
	for i, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Grid: 3}, "grid of 3"},
		{Config{Length: 10}, "road length 10"},
		{Config{DetectorLength: 190}, "detector length 190"},
		{Config{Demand: -1}, "demand factor -1"},
	} {
		if _, err := Build(context.Background(), t.TempDir(), tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("case %d: error %v, want %q", i, err, tc.want)
		}
	}
}
