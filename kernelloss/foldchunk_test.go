package kernelloss

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestFoldChunk writes terms of three folds through a FoldChunk, in runs
// that switch folds and runs longer than a chunk, and checks each fold's
// sums against those of its terms added in one chunk of their own: the
// chunking changes the order of additions, not the sums (to rounding).
func TestFoldChunk(t *testing.T) {
	const d, p = 3, 2
	rng := rand.New(rand.NewPCG(1, 2))
	runs := []struct{ fold, n int }{{0, 5}, {2, ChunkLen + 7}, {0, 3}, {1, 2 * ChunkLen}, {2, 1}, {0, 1}}
	type term struct{ l, g []float64 }
	byFold := make([][]term, 3)
	w := FoldChunk{Chunk: NewChunk(ChunkLen, d, p), Folds: make([]*Quadratic, 3), Used: make([]bool, 3), D: d, P: p,
		Add: func(q *Quadratic, ch *Chunk, n int) { q.Accumulate(ch, n) }}
	for _, run := range runs {
		for range run.n {
			tm := term{l: []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}, g: []float64{rng.NormFloat64(), rng.NormFloat64()}}
			byFold[run.fold] = append(byFold[run.fold], tm)
			r, q := w.Row(run.fold)
			copy(w.Chunk.L[r*d:(r+1)*d], tm.l)
			copy(w.Chunk.G[r*p:(r+1)*p], tm.g)
			copy(w.Chunk.R[r*p:(r+1)*p], tm.g)
			w.Chunk.C[r], w.Chunk.RC[r] = 1, 1
			q.Z++
		}
	}
	w.Flush()
	for f, terms := range byFold {
		if !w.Used[f] {
			t.Fatalf("fold %d had terms but is not marked used", f)
		}
		want := NewQuadratic(d, p)
		ch := NewChunk(len(terms), d, p)
		for r, tm := range terms {
			copy(ch.L[r*d:(r+1)*d], tm.l)
			copy(ch.G[r*p:(r+1)*p], tm.g)
			copy(ch.R[r*p:(r+1)*p], tm.g)
			ch.C[r], ch.RC[r] = 1, 1
		}
		want.Accumulate(ch, len(terms))
		got := w.Folds[f]
		if got.Z != float64(len(terms)) {
			t.Errorf("fold %d: Z %v, want %d", f, got.Z, len(terms))
		}
		for _, v := range []struct {
			name      string
			got, want []float64
		}{{"S", got.S, want.S}, {"U", got.U, want.U}, {"H", got.H, want.H}, {"Hv", got.Hv, want.Hv}} {
			for i := range v.want {
				if math.Abs(v.got[i]-v.want[i]) > 1e-9*(1+math.Abs(v.want[i])) {
					t.Errorf("fold %d: %s[%d] = %v, want %v", f, v.name, i, v.got[i], v.want[i])
				}
			}
		}
	}
}

// FoldOf: one fold is fold 0; stretches of an episode split it evenly;
// episodes' folds are their ids' hashes, the same for the same id and
// salt, spread over the folds (1,000 ids in 5 folds: each within 4
// standard deviations of 200), and moved by another salt.
func TestFoldOf(t *testing.T) {
	for _, c := range []struct{ folds, t, T, want int }{
		{1, 7, 10, 0}, {5, 0, 10, 0}, {5, 1, 10, 0}, {5, 2, 10, 1}, {5, 9, 10, 4}, {5, 2, 3, 3}, {5, 0, 1, 0},
	} {
		if got := FoldOf(c.folds, false, 1, 99, c.t, c.T); got != c.want {
			t.Errorf("FoldOf(%d folds, step %d of %d) = %d, want %d", c.folds, c.t, c.T, got, c.want)
		}
	}
	count := make([]int, 5)
	moved := 0
	for i := range 1000 {
		h := HashID(fmt.Sprint("episode-", i))
		f := FoldOf(5, true, 7, h, 0, 10)
		if f != FoldOf(5, true, 7, h, 9, 10) {
			t.Fatalf("episode %d: folds differ between its steps", i)
		}
		count[f]++
		if FoldOf(5, true, 8, h, 0, 10) != f {
			moved++
		}
	}
	for f, n := range count {
		if math.Abs(float64(n)-200) > 4*math.Sqrt(1000*0.2*0.8) {
			t.Errorf("fold %d holds %d of 1,000 episodes", f, n)
		}
	}
	if moved < 700 { // 800 expected
		t.Errorf("another salt moved %d of 1,000 episodes", moved)
	}
}
