package holdout

import (
	"math/rand/v2"
	"testing"
)

func TestEpisodes(t *testing.T) {
	for _, c := range []struct {
		n         int
		frac      float64
		held      int
		byEpisode bool
	}{
		{10, 0.1, 1, true},
		{25, 0.1, 3, true}, // round(2.5) = 3
		{24, 0.1, 2, true}, // round(2.4) = 2
		{9, 0.1, 0, false}, // 0.9 episodes: hold out steps instead
		{1, 0.5, 0, false}, // one long episode
		{40, 0, 0, false},  // nothing held out
		{40, -1, 0, false}, // likewise
		{3, 1, 3, true},    // every episode
	} {
		held, by := Episodes(rand.New(rand.NewPCG(1, 2)), c.n, c.frac)
		k := 0
		for _, h := range held {
			if h {
				k++
			}
		}
		if len(held) != c.n || k != c.held || by != c.byEpisode {
			t.Errorf("n %d frac %g: %d of %d held, by episode %v; want %d, %v", c.n, c.frac, k, len(held), by, c.held, c.byEpisode)
		}
	}
	// The same seed holds out the same episodes.
	a, _ := Episodes(rand.New(rand.NewPCG(7, 7)), 50, 0.2)
	b, _ := Episodes(rand.New(rand.NewPCG(7, 7)), 50, 0.2)
	for e := range a {
		if a[e] != b[e] {
			t.Fatalf("episode %d: held %v, then %v with the same seed", e, a[e], b[e])
		}
	}
}
