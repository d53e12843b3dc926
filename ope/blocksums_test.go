package ope_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim/lineargauss"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// gaussEpisodes samples n episodes of T steps of the 1-d linear-Gaussian
// system from its behavior's stationary law.
func gaussEpisodes(t *testing.T, n, T int, seed uint64) *dataset.Dataset {
	t.Helper()
	p := lineargauss.Problem1D()
	d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(seed, 17)), p.System, p.Behavior, p.Target, n, T)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// blockSumsOf fills est's sums over d's episodes, in blocks of length
// steps with multiplicities mult(e, b) (AddBlocks), or whole with
// multiplicities mult(e, 0) when length is 0 (Add).
func blockSumsOf(t *testing.T, s ope.Sums, d *dataset.Dataset, length int, mult func(e, b int) []int) ope.Sums {
	t.Helper()
	if tp, ok := s.(ope.TwoPassSums); ok && tp.FirstPass() {
		for e := range d.NumEpisodes() {
			if err := tp.AddFirst(d, e); err != nil {
				t.Fatal(err)
			}
		}
		if err := tp.EndFirst(); err != nil {
			t.Fatal(err)
		}
	}
	for e := range d.NumEpisodes() {
		var err error
		if length == 0 {
			err = s.Add(d, e, mult(e, 0))
		} else {
			err = s.(ope.BlockSums).AddBlocks(d, e, length, func(b int) []int { return mult(e, b) })
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// An episode added in blocks is the episode added whole when every block
// has the episode's multiplicity; and block multiplicities add: blocks
// weighted k_b give the sums of the episode once plus each block k_b - 1
// more times, filled apart and merged. For bch-kernel (sums of its
// loss's moments) and bch-neural (its fitted networks' weighted sums).
func TestBlockSumsAdd(t *testing.T) {
	d := gaussEpisodes(t, 1, 3000, 1)
	const B = 6
	ones := func(int, int) []int { return []int{1, 1, 1, 1, 1, 1, 1} }
	draws := func(_, b int) []int {
		m := make([]int, B+1)
		m[0] = 1
		ope.BlockCounts(7, "x", b, m[1:])
		return m
	}
	extra := func(e, b int) []int { // max(k_b - 1, 0)
		m := draws(e, b)
		for c := range m {
			m[c] = max(m[c]-1, 0)
		}
		return m
	}
	zeroes := func(e, b int) []int { // [k_b = 0]
		m, z := draws(e, b), make([]int, B+1)
		for c := range m {
			if m[c] == 0 {
				z[c] = 1
			}
		}
		return z
	}
	neural := ope.DensityRatio{Learner: ratio.Ensemble{Learner: ratio.Neural{MaxIter: 200, BatchSize: 512, Workers: 1}, Restarts: 2, Seed: 3}}
	fit, err := neural.Estimate(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		new  func() ope.Sums
	}{
		{"bch-kernel", func() ope.Sums {
			s, err := ope.DensityRatio{Learner: ratio.Kernel{}}.NewSums(1, B+1)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"bch-neural", func() ope.Sums {
			s, ok, err := ope.FittedSums(neural, fit, d, 1, B+1)
			if err != nil || !ok {
				t.Fatalf("fitted sums: %v %v", ok, err)
			}
			return s
		}},
	}
	for _, tc := range cases {
		whole := blockSumsOf(t, tc.new(), d, 0, ones)
		for _, L := range []int{1, 97, 3000} {
			blocks := blockSumsOf(t, tc.new(), d, L, ones)
			for c := range B + 1 {
				w, _, err1 := whole.Finish(c)
				b, _, err2 := blocks.Finish(c)
				if err1 != nil || err2 != nil || !relClose(w.Value, b.Value, 1e-10) {
					t.Errorf("%s blocks of %d, copy %d: %v (%v), whole %v (%v)", tc.name, L, c, b.Value, err2, w.Value, err1)
				}
			}
		}
		// Block multiplicities add: k_b + [k_b = 0] = 1 + max(k_b - 1, 0),
		// so draws plus zeroes give the sums of ones plus extra.
		const L = 97
		lhs := blockSumsOf(t, tc.new(), d, L, draws)
		if err := lhs.Merge(blockSumsOf(t, tc.new(), d, L, zeroes)); err != nil {
			t.Fatal(err)
		}
		rhs := blockSumsOf(t, tc.new(), d, L, ones)
		if err := rhs.Merge(blockSumsOf(t, tc.new(), d, L, extra)); err != nil {
			t.Fatal(err)
		}
		for c := 1; c <= B; c++ {
			a, _, err1 := lhs.Finish(c)
			b, _, err2 := rhs.Finish(c)
			if err1 != nil || err2 != nil || !relClose(a.Value, b.Value, 1e-9) {
				t.Errorf("%s copy %d: draws + zeroes %v (%v), ones + extra %v (%v)", tc.name, c, a.Value, err1, b.Value, err2)
			}
		}
	}
}

// FittedSums keeps the model the in-memory estimate trained: its copy 0
// is the in-memory estimate, on several episodes and on one.
func TestFittedSumsMatchInMemory(t *testing.T) {
	for _, n := range []int{1, 12} {
		d := gaussEpisodes(t, n, 3000/n, 2)
		est := ope.DensityRatio{Learner: ratio.Ensemble{Learner: ratio.Neural{MaxIter: 200, BatchSize: 512, Workers: 1}, Restarts: 3, Seed: 5}}
		want, err := est.Estimate(d, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !want.Trained() {
			t.Fatal("bch-neural's result holds no trained model")
		}
		s, ok, err := ope.FittedSums(est, want, d, 1, 1)
		if err != nil || !ok {
			t.Fatalf("fitted sums: %v %v", ok, err)
		}
		s = blockSumsOf(t, s, d, 0, func(int, int) []int { return []int{1} })
		got, _, err := s.Finish(0)
		if err != nil || !relClose(got.Value, want.Value, 1e-12) {
			t.Errorf("%d episodes: fitted sums %v (%v), in memory %v", n, got.Value, err, want.Value)
		}
		if !slicesClose(got.Restarts, want.Restarts, 1e-12) {
			t.Errorf("%d episodes: restarts %v, in memory %v", n, got.Restarts, want.Restarts)
		}
	}
	// A learner that does not train has no fitted sums.
	d := gaussEpisodes(t, 4, 200, 3)
	k := ope.DensityRatio{Learner: ratio.Kernel{}}
	res, err := k.Estimate(d, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ope.FittedSums(k, res, d, 1, 3); ok || res.Trained() {
		t.Error("bch-kernel's result has fitted sums")
	}
}

func slicesClose(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !relClose(a[i], b[i], tol) {
			return false
		}
	}
	return true
}

// Blocks have draws of their own: no two of an episode's blocks, nor a
// block and the episode, share their Poisson counts, and the counts have
// mean 1 and variance 1.
func TestBlockCounts(t *testing.T) {
	const R = 4000
	ep := make([]int, R)
	ope.PoissonCounts(1, "e", ep)
	var sum, sq float64
	prev := make([]int, R)
	for b := range 50 {
		m := make([]int, R)
		ope.BlockCounts(1, "e", b, m)
		same, sameEp := 0, 0
		for r := range R {
			sum += float64(m[r])
			sq += float64(m[r] * m[r])
			if m[r] == prev[r] {
				same++
			}
			if m[r] == ep[r] {
				sameEp++
			}
		}
		// Independent Poisson(1) pairs agree with probability
		// sum_k (e^-1/k!)^2 = 0.308.
		if b > 0 && (same > R*36/100 || same < R*26/100) || sameEp > R*36/100 || sameEp < R*26/100 {
			t.Errorf("block %d agrees with block %d on %d of %d, with the episode on %d", b, b-1, same, R, sameEp)
		}
		prev = m
	}
	n := float64(50 * R)
	if mean, v := sum/n, sq/n-(sum/n)*(sum/n); mean < 0.99 || mean > 1.01 || v < 0.98 || v > 1.02 {
		t.Errorf("block counts: mean %v, variance %v, want 1 and 1", mean, v)
	}
}
