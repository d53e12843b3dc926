package taxi

import (
	"math"
	"testing"

	"github.com/ihope-ope/ihope/mdp"
)

func TestEncodeDecode(t *testing.T) {
	seen := make([]bool, NumStates)
	for x := 0; x < GridSize; x++ {
		for y := 0; y < GridSize; y++ {
			for mask := 0; mask < NumMasks; mask++ {
				for status := 0; status < NumStatus; status++ {
					s := Encode(x, y, mask, status)
					if s < 0 || s >= NumStates || seen[s] {
						t.Fatalf("Encode(%d, %d, %d, %d) = %d: out of range or repeated", x, y, mask, status, s)
					}
					seen[s] = true
					if gx, gy, gm, gs := Decode(s); gx != x || gy != y || gm != mask || gs != status {
						t.Fatalf("Decode(%d) = (%d, %d, %d, %d), want (%d, %d, %d, %d)", s, gx, gy, gm, gs, x, y, mask, status)
					}
				}
			}
		}
	}
	fixed := []struct{ x, y, mask, status, s int }{
		{0, 0, 0, Empty, 4},
		{1, 2, 5, 0, 585},       // 0 + 5*(5 + 16*7)
		{4, 4, 15, 3, 1998},     // 3 + 5*(15 + 16*24)
		{4, 4, 15, Empty, 1999}, // the last state
	}
	for i, c := range fixed {
		if got := Encode(c.x, c.y, c.mask, c.status); got != c.s {
			t.Errorf("case %d: Encode = %d, want %d", i, got, c.s)
		}
	}
}

func TestTable(t *testing.T) {
	m := New()
	if err := mdp.Check(m); err != nil {
		t.Fatal(err)
	}
	if New() != m {
		t.Error("New built the table twice")
	}
	nonzero := 0
	for s, p := range m.Initial() {
		if p != 0 {
			nonzero++
			if _, _, _, status := Decode(s); status != Empty || p != 1.0/400 {
				t.Errorf("Initial()[%d] = %v (status %d), want 1/400 for empty taxis only", s, p, status)
			}
		}
	}
	if nonzero != 400 {
		t.Errorf("%d start states, want 400", nonzero)
	}
}

// prob returns the probability and reward of reaching next from (s, a).
func prob(m *MDP, s, a, next int) (p, r float64) {
	for _, o := range m.Outcomes(s, a) {
		if o.Next == next {
			return o.Prob, o.Reward
		}
	}
	return 0, math.NaN()
}

// TestTransitions checks single transitions by hand. Mask laws: from mask
// 0 every corner appears independently with (0.3, 0.05, 0.1, 0.2); from 15
// each leaves with (0.05, 0.1, 0.1, 0.05).
func TestTransitions(t *testing.T) {
	m := New()
	cases := []struct {
		name               string
		x, y, mask, status int
		a                  int
		nx, ny, nmask, nst int
		p, r               float64
		outcomes           int
	}{
		{"x+1 at the east wall stays, no arrival", 4, 2, 0, Empty, XPlus, 4, 2, 0, Empty, 0.7 * 0.95 * 0.9 * 0.8, -1, 16},
		{"x+1 at the east wall, all arrive", 4, 2, 0, Empty, XPlus, 4, 2, 15, Empty, 0.3 * 0.05 * 0.1 * 0.2, -1, 16},
		{"y-1 all stay", 2, 2, 15, Empty, YMinus, 2, 1, 15, Empty, 0.95 * 0.9 * 0.9 * 0.95, -1, 16},
		{"y-1 all leave", 2, 2, 15, 1, YMinus, 2, 1, 0, 1, 0.05 * 0.1 * 0.1 * 0.05, -1, 16},
		{"x-1 at the west wall", 0, 3, 0, 2, XMinus, 0, 3, 1, 2, 0.3 * 0.95 * 0.9 * 0.8, -1, 16},
		{"y+1 at the north wall", 3, 4, 8, Empty, YPlus, 3, 4, 8, Empty, 0.7 * 0.95 * 0.9 * 0.95, -1, 16},
		// Pick-up at corner 1 = (0,4): bit 1 cleared, destination 0, 2 or 3
		// w.p. 1/3; the served corner can get a new passenger at once (0.05).
		{"pick-up, corner refills", 0, 4, 2, Empty, PickUp, 0, 4, 2, 0, 1.0 / 3 * 0.7 * 0.05 * 0.9 * 0.8, -1, 48},
		{"pick-up, corner stays empty", 0, 4, 2, Empty, PickUp, 0, 4, 0, 3, 1.0 / 3 * 0.7 * 0.95 * 0.9 * 0.8, -1, 48},
		{"pick-up never to the own corner", 0, 4, 2, Empty, PickUp, 0, 4, 0, 1, 0, math.NaN(), 48},
		// Pick-up while carrying replaces the passenger.
		{"pick-up while carrying", 4, 4, 8, 0, PickUp, 4, 4, 0, 0, 1.0 / 3 * 0.7 * 0.95 * 0.9 * 0.8, -1, 48},
		{"pick-up with nobody waiting", 0, 0, 14, Empty, PickUp, 0, 0, 14, Empty, 0.7 * 0.9 * 0.9 * 0.95, -1, 16},
		{"pick-up off the corners", 2, 2, 15, Empty, PickUp, 2, 2, 15, Empty, 0.95 * 0.9 * 0.9 * 0.95, -1, 16},
		{"drop-off at the destination", 4, 0, 0, 2, DropOff, 4, 0, 0, Empty, 0.7 * 0.95 * 0.9 * 0.8, 20, 16},
		{"drop-off elsewhere", 4, 0, 0, 3, DropOff, 4, 0, 0, Empty, 0.7 * 0.95 * 0.9 * 0.8, -1, 16},
		{"drop-off while empty", 4, 0, 0, Empty, DropOff, 4, 0, 0, Empty, 0.7 * 0.95 * 0.9 * 0.8, -1, 16},
	}
	for _, c := range cases {
		s := Encode(c.x, c.y, c.mask, c.status)
		if n := len(m.Outcomes(s, c.a)); n != c.outcomes {
			t.Errorf("%s: %d outcomes, want %d", c.name, n, c.outcomes)
		}
		p, r := prob(m, s, c.a, Encode(c.nx, c.ny, c.nmask, c.nst))
		if math.Abs(p-c.p) > 1e-15 || (c.p > 0 && r != c.r) {
			t.Errorf("%s: P = %.17g, reward %v; want %.17g, %v", c.name, p, r, c.p, c.r)
		}
	}
	// Expected rewards: +20 only for a drop-off at the destination.
	rewards := []struct {
		s, a int
		want float64
	}{
		{Encode(4, 4, 0, 3), DropOff, 20},
		{Encode(4, 4, 0, 2), DropOff, -1},
		{Encode(4, 4, 8, Empty), PickUp, -1},
		{Encode(0, 0, 0, 0), XPlus, -1},
	}
	for i, c := range rewards {
		if got := mdp.ExpectedReward(m, c.s, c.a); math.Abs(got-c.want) > 1e-13 {
			t.Errorf("case %d: expected reward %v, want %v", i, got, c.want)
		}
	}
}

func TestPolicies(t *testing.T) {
	names := PolicyNames()
	if len(names) != 6 || names[0] != "pi14" || names[5] != "pi19" {
		t.Fatalf("PolicyNames() = %v", names)
	}
	names[0] = "changed" // the caller's copy
	if PolicyNames()[0] != "pi14" {
		t.Error("PolicyNames returned the package's slice")
	}
	for _, name := range PolicyNames() {
		p, err := Policy(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.NumStates() != NumStates || p.NumActions() != NumActions {
			t.Errorf("%s: %dx%d", name, p.NumStates(), p.NumActions())
		}
		if q, _ := Policy(name); q != p {
			t.Errorf("%s parsed twice", name)
		}
	}
	// pi19.csv, state 0: 0.1792821212272683,0.17858902656497358,...
	p, _ := Policy(DefaultTarget)
	if got := p.Prob(0, 0); math.Abs(got-0.1792821212272683) > 1e-15 {
		t.Errorf("pi19(0|0) = %.17g", got)
	}
	if got := p.Prob(1, 5); math.Abs(got-0.033329011988094508) > 1e-15 {
		t.Errorf("pi19(5|1) = %.17g", got)
	}
	if _, err := Policy(DefaultBehavior); err != nil {
		t.Error(err)
	}
	if _, err := Policy("pi20"); err == nil {
		t.Error("Policy(pi20): no error")
	}
}
