package sim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/mdp"
)

// chain is a 3-state table with a zero-probability outcome in the middle.
type chain struct{}

func (chain) NumStates() int     { return 3 }
func (chain) NumActions() int    { return 1 }
func (chain) Initial() []float64 { return []float64{0.5, 0, 0.5} }
func (chain) Outcomes(s, a int) []mdp.Outcome {
	return []mdp.Outcome{{Next: 0, Prob: 0.25, Reward: 1}, {Next: 1, Prob: 0, Reward: 5}, {Next: 2, Prob: 0.75, Reward: -1}}
}

func TestSamplerFollowsTable(t *testing.T) {
	s := NewSampler(chain{})
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 100000
	var starts, nexts [3]int
	for range n {
		starts[s.Reset(rng)]++
		next, r := s.Step(rng, 0, 0)
		nexts[next]++
		if want := map[int]float64{0: 1, 2: -1}[next]; r != want {
			t.Fatalf("reward %v for next %d", r, next)
		}
	}
	if starts[1] != 0 || nexts[1] != 0 {
		t.Error("a zero-probability state was drawn")
	}
	for i, c := range []struct {
		got  int
		want float64
	}{{starts[0], 0.5}, {nexts[0], 0.25}} {
		if math.Abs(float64(c.got)/n-c.want) > 5*math.Sqrt(c.want*(1-c.want)/n) {
			t.Errorf("%d: frequency %v, want %v", i, float64(c.got)/n, c.want)
		}
	}
	if got := mdp.ExpectedReward(chain{}, 0, 0); got != 0.25-0.75 {
		t.Errorf("expected reward %v", got)
	}
}

func TestSearch(t *testing.T) {
	cdf := []float64{0.25, 0.25, 1, 1}
	for i, c := range []struct {
		u    float64
		want int
	}{{0, 0}, {0.2499, 0}, {0.25, 2}, {0.9999, 2}, {1, 2}} {
		if got := search(cdf, c.u); got != c.want {
			t.Errorf("%d: search(%v) = %d, want %d", i, c.u, got, c.want)
		}
	}
}

type broken struct{ chain }

func (broken) Outcomes(s, a int) []mdp.Outcome { return []mdp.Outcome{{Next: 0, Prob: 0.5}} }

func TestCheck(t *testing.T) {
	if err := mdp.Check(chain{}); err != nil {
		t.Error(err)
	}
	if err := mdp.Check(broken{}); err == nil {
		t.Error("probabilities summing to 0.5 accepted")
	}
}
