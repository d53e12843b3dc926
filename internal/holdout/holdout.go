// Package holdout chooses the episodes the neural learners (the ratio's
// and the value model's) keep aside to monitor their held-out loss, so
// that both split logs the same way.
package holdout

import (
	"math"
	"math/rand/v2"
)

// Episodes returns which of n episodes are held out: round(n * frac) of
// them drawn by rng.Perm when that is at least one (byEpisode true);
// otherwise none, and the caller holds out the last steps of every
// episode instead (one long episode).
func Episodes(rng *rand.Rand, n int, frac float64) (held []bool, byEpisode bool) {
	held = make([]bool, n)
	byEpisode = frac > 0 && float64(n)*frac >= 1
	if byEpisode {
		k := int(math.Round(float64(n) * frac))
		for _, e := range rng.Perm(n)[:k] {
			held[e] = true
		}
	}
	return held, byEpisode
}
