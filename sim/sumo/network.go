package sumo

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ihope-ope/ihope/sim/traci"
)

// Timing of one reinforcement-learning step (Appendix D): 6 simulated
// seconds, the first 3 of them yellow when the light changes phase.
const (
	StepSeconds   = 6
	YellowSeconds = 3
)

// NumPhases is the number of actions of one light: the green phases
// north-south straight (0), north-south left (1), east-west straight (2)
// and east-west left (3). Right turns go with the straight phase.
const NumPhases = 4

// ObsPerLight is the length of one light's part of the state: for the
// approaches from the north, east, south and west in turn, the number of
// vehicles on the detectors of the two straight lanes (right turns share
// the outer one) and on the detector of the left-turn lane.
const ObsPerLight = 8

// Directions of approach, in the order of the state and of the link
// indices of a light.
const (
	north = iota
	east
	south
	west
)

var dirNames = [4]string{"N", "E", "S", "W"}

// Config describes a traffic network; zero fields take the documented
// defaults.
type Config struct {
	// Grid is the number of traffic lights along each side of a square
	// grid: 1 (a single intersection, the default) or 2 (a 2x2 grid).
	Grid int `json:"grid"`
	// Length is the length in metres of every road between two
	// junctions; if 0, 200.
	Length float64 `json:"length"`
	// DetectorLength is the length in metres of the lane-area detectors
	// that end 1 m before each stop line; if 0, Length - 20, which covers
	// the whole lane (SUMO clips a detector to its lane). Appendix D
	// counts "the total number of vehicles on each lane": with whole-lane
	// detectors the state sees every queue, and the reward, minus the
	// vehicles on the detectors, is the paper's stand-in for the total
	// travel time. Short detectors (say 50 m, 7 cars) hide the queue
	// behind them, a slowly moving hidden state that makes the counts far
	// from Markov.
	DetectorLength float64 `json:"detector_length"`
	// Demand scales every route's insertion probability; if 0, 1.
	Demand float64 `json:"demand"`
	// Warmup is the number of simulated seconds run under a fixed-time
	// plan before the first logged step (each green held 30 s, in the
	// order 0, 1, 2, 3); if 0, 300; if negative, none. It is rounded up
	// to a multiple of 6.
	Warmup int `json:"warmup"`
	// Sumo and NetConvert are SUMO's executables; if empty, "sumo" and
	// "netconvert" from PATH.
	Sumo       string `json:"-"`
	NetConvert string `json:"-"`
}

func (c Config) withDefaults() (Config, error) {
	if c.Grid == 0 {
		c.Grid = 1
	}
	if c.Length == 0 {
		c.Length = 200
	}
	if c.DetectorLength == 0 {
		c.DetectorLength = c.Length - 20
	}
	if c.Demand == 0 {
		c.Demand = 1
	}
	switch {
	case c.Warmup == 0:
		c.Warmup = 300
	case c.Warmup < 0:
		c.Warmup = 0
	}
	c.Warmup = (c.Warmup + StepSeconds - 1) / StepSeconds * StepSeconds
	switch {
	case c.Grid != 1 && c.Grid != 2:
		return c, fmt.Errorf("sumo: grid of %d lights per side, want 1 or 2", c.Grid)
	case !(c.Length >= 50 && c.Length <= 5000):
		return c, fmt.Errorf("sumo: road length %v m, want 50 to 5000", c.Length)
	case !(c.DetectorLength >= 5 && c.DetectorLength <= c.Length-20):
		return c, fmt.Errorf("sumo: detector length %v m, want 5 to road length - 20", c.DetectorLength)
	case !(c.Demand > 0 && c.Demand <= 5):
		return c, fmt.Errorf("sumo: demand factor %v, want (0, 5]", c.Demand)
	}
	return c, nil
}

// Light is one traffic-light intersection.
type Light struct {
	// ID is the junction and traffic-light id in SUMO.
	ID string
	// Detectors[d] are the lane-area detector ids of the approach from
	// direction d (north, east, south, west): lanes 0 and 1 (straight,
	// and right turns from lane 0) and lane 2 (left turns).
	Detectors [4][3]string
}

// Route is a path through the network with at most one turn, and the
// probability that a vehicle enters it in any second.
type Route struct {
	ID    string
	Edges []string
	Turns int
	Prob  float64
}

// Network is a generated road network, its traffic and its detectors,
// written to Dir. It is read-only once built and may serve many
// simulations at once.
type Network struct {
	Config Config
	Dir    string
	Lights []Light
	Routes []Route

	netFile, routeFile, addFile string
}

// NumLights returns the number of traffic lights.
func (n *Network) NumLights() int { return len(n.Lights) }

// NumActions returns the number of joint actions, 4^NumLights.
func (n *Network) NumActions() int { return pow4(len(n.Lights)) }

// ObsDim returns the length of the state vector, 8 per light.
func (n *Network) ObsDim() int { return ObsPerLight * len(n.Lights) }

func pow4(k int) int { return 1 << (2 * k) }

// Build writes the network, routes and detectors for cfg to dir (which
// must exist) and compiles the network with netconvert. The files are
// plain SUMO XML: nodes, edges, lane connections and the traffic-light
// program (n.nod.xml, n.edg.xml, n.con.xml, n.tll.xml, compiled to
// n.net.xml), routes with one flow each (n.rou.xml) and lane-area
// detectors (n.add.xml).
func Build(ctx context.Context, dir string, cfg Config) (*Network, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	g := newGrid(cfg)
	n := &Network{
		Config: cfg, Dir: dir, Lights: g.lights(), Routes: g.routes(),
		netFile:   filepath.Join(dir, "n.net.xml"),
		routeFile: filepath.Join(dir, "n.rou.xml"),
		addFile:   filepath.Join(dir, "n.add.xml"),
	}
	files := map[string][]byte{
		"n.nod.xml": g.nodesXML(),
		"n.edg.xml": g.edgesXML(),
		"n.con.xml": g.connectionsXML(false),
		"n.tll.xml": g.tlsXML(),
		"n.rou.xml": routesXML(n.Routes),
		"n.add.xml": g.detectorsXML(),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, fmt.Errorf("sumo: %w", err)
		}
	}
	bin := cfg.NetConvert
	if bin == "" {
		bin = "netconvert"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("sumo: netconvert: %w", traci.ErrNotFound)
	}
	cmd := exec.CommandContext(ctx, path,
		"--node-files", filepath.Join(dir, "n.nod.xml"),
		"--edge-files", filepath.Join(dir, "n.edg.xml"),
		"--connection-files", filepath.Join(dir, "n.con.xml"),
		"--tllogic-files", filepath.Join(dir, "n.tll.xml"),
		"--no-turnarounds", "true",
		"--xml-validation", "never",
		"--no-warnings", "true",
		"-o", n.netFile)
	cmd.Env = traci.Env()
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("sumo: netconvert: %v: %s", err, strings.Join(strings.Fields(string(out)), " "))
	}
	return n, nil
}

// sumoArgs returns SUMO's arguments for a run with the given seed.
func (n *Network) sumoArgs(seed int) []string {
	return []string{
		"-n", n.netFile, "-r", n.routeFile, "-a", n.addFile,
		"--seed", fmt.Sprint(seed),
		"--step-length", "1",
		"--xml-validation", "never",
		"--no-step-log", "true",
		"--no-warnings", "true",
		"--duration-log.disable", "true",
		// A vehicle that cannot enter within 30 s (its entry lane is
		// full) is dropped, so the insertion backlog stays bounded and
		// the process stationary under any policy.
		"--max-depart-delay", "30",
	}
}

// grid is the geometry of a k x k grid of lights J<row><col> (row 0 in
// the north, column 0 in the west) with fringe nodes n<col>, s<col>,
// w<row>, e<row> one road length outside.
type grid struct {
	cfg Config
	k   int
}

func newGrid(cfg Config) grid { return grid{cfg: cfg, k: cfg.Grid} }

type node struct {
	id    string
	x, y  float64
	light bool
	i, j  int
}

func (g grid) light(i, j int) node {
	L := g.cfg.Length
	return node{id: fmt.Sprintf("J%d%d", i, j), x: float64(j) * L, y: -float64(i) * L, light: true, i: i, j: j}
}

// neighbor returns the node next to light (i, j) in direction d.
func (g grid) neighbor(i, j, d int) node {
	L, k := g.cfg.Length, g.k
	switch d {
	case north:
		if i > 0 {
			return g.light(i-1, j)
		}
		return node{id: fmt.Sprintf("n%d", j), x: float64(j) * L, y: L}
	case east:
		if j < k-1 {
			return g.light(i, j+1)
		}
		return node{id: fmt.Sprintf("e%d", i), x: float64(k) * L, y: -float64(i) * L}
	case south:
		if i < k-1 {
			return g.light(i+1, j)
		}
		return node{id: fmt.Sprintf("s%d", j), x: float64(j) * L, y: -float64(k) * L}
	default:
		if j > 0 {
			return g.light(i, j-1)
		}
		return node{id: fmt.Sprintf("w%d", i), x: -L, y: -float64(i) * L}
	}
}

func edgeID(from, to string) string { return from + "_" + to }

// Turning movements relative to the approach direction d (the side the
// vehicle comes from): straight leaves towards the opposite side, right
// and left as seen by the driver (right-hand traffic).
func straightOut(d int) int { return (d + 2) % 4 }
func rightOut(d int) int    { return (d + 3) % 4 }
func leftOut(d int) int     { return (d + 1) % 4 }

func (g grid) eachLight(f func(n node)) {
	for i := 0; i < g.k; i++ {
		for j := 0; j < g.k; j++ {
			f(g.light(i, j))
		}
	}
}

func (g grid) lights() []Light {
	var out []Light
	g.eachLight(func(c node) {
		l := Light{ID: c.id}
		for d := range 4 {
			for lane := range 3 {
				l.Detectors[d][lane] = fmt.Sprintf("%s_%s_%d", c.id, dirNames[d], lane)
			}
		}
		out = append(out, l)
	})
	return out
}

func (g grid) nodesXML() []byte {
	var b bytes.Buffer
	b.WriteString("<nodes>\n")
	seen := map[string]bool{}
	add := func(n node) {
		if seen[n.id] {
			return
		}
		seen[n.id] = true
		typ := "priority"
		if n.light {
			typ = "traffic_light"
		}
		fmt.Fprintf(&b, "  <node id=\"%s\" x=\"%g\" y=\"%g\" type=\"%s\"/>\n", n.id, n.x, n.y, typ)
	}
	g.eachLight(func(c node) {
		add(c)
		for d := range 4 {
			add(g.neighbor(c.i, c.j, d))
		}
	})
	b.WriteString("</nodes>\n")
	return b.Bytes()
}

// Every road has three lanes in each direction at 50 km/h.
const (
	lanes = 3
	speed = 13.89
)

func (g grid) edgesXML() []byte {
	var b bytes.Buffer
	b.WriteString("<edges>\n")
	seen := map[string]bool{}
	add := func(from, to string) {
		id := edgeID(from, to)
		if seen[id] {
			return
		}
		seen[id] = true
		fmt.Fprintf(&b, "  <edge id=\"%s\" from=\"%s\" to=\"%s\" numLanes=\"%d\" speed=\"%g\"/>\n", id, from, to, lanes, speed)
	}
	g.eachLight(func(c node) {
		for d := range 4 {
			nb := g.neighbor(c.i, c.j, d)
			add(nb.id, c.id)
			add(c.id, nb.id)
		}
	})
	b.WriteString("</edges>\n")
	return b.Bytes()
}

// link is one controlled connection of a light: link index 4d+k for the
// approach from d, with k = 0 right turn (lane 0), 1 and 2 straight
// (lanes 0 and 1), 3 left turn (lane 2).
type link struct {
	from, to         string
	fromLane, toLane int
}

func (g grid) links(c node) []link {
	var out []link
	for d := range 4 {
		in := edgeID(g.neighbor(c.i, c.j, d).id, c.id)
		out1 := func(o int) string { return edgeID(c.id, g.neighbor(c.i, c.j, o).id) }
		out = append(out,
			link{in, out1(rightOut(d)), 0, 0},
			link{in, out1(straightOut(d)), 0, 0},
			link{in, out1(straightOut(d)), 1, 1},
			link{in, out1(leftOut(d)), 2, 2},
		)
	}
	return out
}

func (g grid) connectionsXML(withTL bool) []byte {
	var b bytes.Buffer
	if !withTL {
		b.WriteString("<connections>\n")
	}
	g.eachLight(func(c node) {
		for k, l := range g.links(c) {
			fmt.Fprintf(&b, "  <connection from=\"%s\" to=\"%s\" fromLane=\"%d\" toLane=\"%d\"", l.from, l.to, l.fromLane, l.toLane)
			if withTL {
				fmt.Fprintf(&b, " tl=\"%s\" linkIndex=\"%d\"", c.id, k)
			}
			b.WriteString("/>\n")
		}
	})
	if !withTL {
		b.WriteString("</connections>\n")
	}
	return b.Bytes()
}

// GreenState returns the signal state of green phase a (0..3) over the 16
// links of a light: 'G' for the links the phase serves, 'r' elsewhere.
func GreenState(a int) string {
	s := []byte(strings.Repeat("r", 4*NumPhases))
	dirs := [2]int{north, south}
	if a >= 2 {
		dirs = [2]int{east, west}
	}
	for _, d := range dirs {
		if a%2 == 0 {
			s[4*d], s[4*d+1], s[4*d+2] = 'G', 'G', 'G'
		} else {
			s[4*d+3] = 'G'
		}
	}
	return string(s)
}

// YellowState returns the state of the yellow transition out of green
// phase a: its green links turn yellow.
func YellowState(a int) string { return strings.ReplaceAll(GreenState(a), "G", "y") }

// greenDuration is long enough that a green phase never ends by itself
// during an episode; every change is the agent's.
const greenDuration = 1000000

// YellowPhase returns the index, in the program of every light, of the
// yellow transition from green a to green b (a != b): 4 + 3a + j, where j
// counts the greens other than a below b. The transition lasts 3 s and
// then hands over to green b by itself (the phase's next attribute), so
// that one TraCI set command starts a whole changing step.
func YellowPhase(a, b int) int {
	j := b
	if b > a {
		j--
	}
	return NumPhases + (NumPhases-1)*a + j
}

func (g grid) tlsXML() []byte {
	var b bytes.Buffer
	b.WriteString("<tlLogics>\n")
	g.eachLight(func(c node) {
		fmt.Fprintf(&b, "  <tlLogic id=\"%s\" type=\"static\" programID=\"ihope\" offset=\"0\">\n", c.id)
		for a := range NumPhases {
			fmt.Fprintf(&b, "    <phase duration=\"%d\" state=\"%s\" next=\"%d\"/>\n", greenDuration, GreenState(a), a)
		}
		for a := range NumPhases {
			for nb := range NumPhases {
				if nb != a {
					fmt.Fprintf(&b, "    <phase duration=\"%d\" state=\"%s\" next=\"%d\"/>\n", YellowSeconds, YellowState(a), nb)
				}
			}
		}
		b.WriteString("  </tlLogic>\n")
	})
	b.Write(g.connectionsXML(true))
	b.WriteString("</tlLogics>\n")
	return b.Bytes()
}

func (g grid) detectorsXML() []byte {
	var b bytes.Buffer
	b.WriteString("<additional>\n")
	g.eachLight(func(c node) {
		for d := range 4 {
			in := edgeID(g.neighbor(c.i, c.j, d).id, c.id)
			for lane := range lanes {
				fmt.Fprintf(&b, "  <laneAreaDetector id=\"%s_%s_%d\" lane=\"%s_%d\" endPos=\"-1\" length=\"%g\" friendlyPos=\"true\" period=\"86400\" file=\"NUL\"/>\n",
					c.id, dirNames[d], lane, in, lane, g.cfg.DetectorLength)
			}
		}
	})
	b.WriteString("</additional>\n")
	return b.Bytes()
}

// Route demand: the base probability per second that a vehicle enters a
// route going straight, turning right or turning left, before the
// route's own factor (drawn once, uniform on [0.5, 1.5], from a fixed
// seed, so every route has its own rate and every run the same ones) and
// Config.Demand. On the 2x2 grid a turning route may turn at either of
// the two lights it meets, so its base is halved.
var baseProb = [3]float64{0.06, 0.02, 0.025}

// routeSeed fixes the routes' factors.
const routeSeed = 20181203

const (
	turnNone = iota
	turnRight
	turnLeft
)

// routes lists every path that enters at a fringe node, crosses the grid
// and leaves at another, turning at most once (Appendix D: "we constrain
// our routes with at most one turn in the network to avoid detours").
func (g grid) routes() []Route {
	rng := rand.New(rand.NewPCG(routeSeed, uint64(g.k)))
	var out []Route
	for d := range 4 { // entry side
		for m := range g.k { // which row or column
			// The first light met, and the heading.
			var i, j int
			switch d {
			case north:
				i, j = 0, m
			case east:
				i, j = m, g.k-1
			case south:
				i, j = g.k-1, m
			case west:
				i, j = m, 0
			}
			entry := g.neighbor(i, j, d).id
			for _, turn := range []int{turnNone, turnRight, turnLeft} {
				turnsAt := []int{-1}
				if turn != turnNone {
					turnsAt = nil
					for s := range g.k {
						turnsAt = append(turnsAt, s)
					}
				}
				for _, at := range turnsAt {
					edges := g.walk(entry, i, j, d, turn, at)
					p := baseProb[turn]
					if turn != turnNone && g.k > 1 {
						p /= 2
					}
					p *= (0.5 + rng.Float64()) * g.cfg.Demand
					p = math.Round(min(p, 1)*1e6) / 1e6 // as written to the flow
					first, last := strings.Split(edges[0], "_")[0], strings.Split(edges[len(edges)-1], "_")[1]
					out = append(out, Route{ID: first + "-" + last, Edges: edges, Turns: min(turn, 1), Prob: p})
				}
			}
		}
	}
	return out
}

// walk follows a route from fringe node entry into light (i, j), coming
// from side d; at the at-th light met it turns (turnRight/turnLeft).
func (g grid) walk(entry string, i, j, d, turn, at int) []string {
	from := entry
	var edges []string
	for s := 0; ; s++ {
		c := g.light(i, j)
		edges = append(edges, edgeID(from, c.id))
		out := straightOut(d)
		if s == at {
			if turn == turnRight {
				out = rightOut(d)
			} else {
				out = leftOut(d)
			}
		}
		nb := g.neighbor(i, j, out)
		if !nb.light {
			return append(edges, edgeID(c.id, nb.id))
		}
		from, i, j, d = c.id, nb.i, nb.j, (out+2)%4
	}
}

func routesXML(routes []Route) []byte {
	var b bytes.Buffer
	b.WriteString("<routes>\n")
	b.WriteString("  <vType id=\"car\" accel=\"2.6\" decel=\"4.5\" sigma=\"0.5\" length=\"5\" minGap=\"2.5\" maxSpeed=\"13.89\"/>\n")
	for _, r := range routes {
		fmt.Fprintf(&b, "  <route id=\"%s\" edges=\"%s\"/>\n", r.ID, strings.Join(r.Edges, " "))
	}
	for _, r := range routes {
		fmt.Fprintf(&b, "  <flow id=\"f_%s\" route=\"%s\" type=\"car\" begin=\"0\" end=\"1e7\" probability=\"%g\" departLane=\"best\" departSpeed=\"max\"/>\n",
			r.ID, r.ID, r.Prob)
	}
	b.WriteString("</routes>\n")
	return b.Bytes()
}
