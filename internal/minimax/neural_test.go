package minimax

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/env/lineargauss"
	"github.com/ihope-ope/ihope/internal/gradcheck"
)

// SampleLoss agrees with the double sum over (state, action) atoms of its
// definition, computed independently, over all pairs and over the pairs
// of different groups, with and without the profiled direction; its
// gradient matches central finite differences; a second Load of the
// same points gives the same bits.
func TestSampleLoss(t *testing.T) {
	const dim, nA, points, h = 2, 3, 13, 0.8
	rng := rand.New(rand.NewPCG(1, 2))
	sl := NewSampleLoss(dim, nA, points+4, h)
	for i := range sl.X {
		sl.X[i] = rng.NormFloat64()
	}
	for i := range sl.C {
		sl.C[i] = rng.NormFloat64()
	}
	for p := range sl.Group {
		sl.Group[p] = int32(p / 3) // groups of 3, the last of 1
	}
	u := make([]float64, len(sl.C))
	for i := range u {
		u[i] = rng.Float64()
	}
	sl.Load(points)
	// direct is the loss of coefficients c - kappa u by its definition.
	direct := func(c []float64, kappa float64, diag bool) float64 {
		s := 0.0
		for p := range points {
			for q := range points {
				if !diag && sl.Group[p] == sl.Group[q] {
					continue
				}
				d2 := 0.0
				for t := range dim {
					d2 += (sl.X[p*dim+t] - sl.X[q*dim+t]) * (sl.X[p*dim+t] - sl.X[q*dim+t])
				}
				k := math.Exp(-d2 / (2 * h * h))
				for a := range nA {
					s += k * (c[p*nA+a] - kappa*u[p*nA+a]) * (c[q*nA+a] - kappa*u[q*nA+a])
				}
			}
		}
		return s
	}
	for _, diag := range []bool{true, false} {
		for _, prof := range []bool{false, true} {
			sl.U = nil
			if prof {
				sl.U = u
			}
			got := sl.Loss(diag, true)
			g := append([]float64(nil), sl.G[:points*nA]...)
			kappa := sl.Kappa
			want := direct(sl.C, kappa, diag)
			if math.Abs(got-want) > 1e-12*math.Abs(want) {
				t.Errorf("V %v, profiled %v: loss %v, the double sum gives %v", diag, prof, got, want)
			}
			if prof { // Kappa minimises the loss along u
				for _, dk := range []float64{-1e-3, 1e-3} {
					if v := direct(sl.C, kappa+dk, diag); v < want {
						t.Errorf("V %v: loss %v at kappa %v + %v, below %v at kappa", diag, v, kappa, dk, want)
					}
				}
			}
			fd := gradcheck.FiniteDifferences(sl.C[:points*nA], func() float64 { return sl.Loss(diag, false) })
			if vec, _ := gradcheck.Compare(g, fd); !(vec <= 1e-6) {
				t.Errorf("V %v, profiled %v: gradient relative error %.3g", diag, prof, vec)
			}
			sl.Load(points)
			if again := sl.Loss(diag, false); math.Float64bits(again) != math.Float64bits(got) {
				t.Errorf("V %v, profiled %v: reloaded loss %v, was %v", diag, prof, again, got)
			}
		}
	}
}

// Sampler draws distinct indices, all of them in order when the sample
// is no smaller than the pool.
func TestSampler(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	s := NewSampler(10, 4)
	for range 3 {
		seen := map[int]bool{}
		for _, i := range s.Draw(rng) {
			if i < 0 || i >= 10 || seen[i] {
				t.Fatalf("sample with %d", i)
			}
			seen[i] = true
		}
		if len(seen) != 4 {
			t.Errorf("%d distinct of 4", len(seen))
		}
	}
	if got := NewSampler(3, 5).Draw(rng); len(got) != 3 || got[0] != 0 || got[2] != 2 {
		t.Errorf("whole pool %v, want 0 1 2", got)
	}
}

// Schedule keeps the parameters of the best held-out loss and stops after
// Patience evaluations without improvement.
func TestSchedule(t *testing.T) {
	p := []float64{0}
	held := []float64{5, 3, 4, 2, 6, 7, 1}
	k := 0
	rec, err := Schedule{MaxIter: 100, EvalEvery: 2, Patience: 2}.Run([][]float64{p},
		func() (float64, error) { p[0]++; return p[0], nil },
		func() (float64, error) { k++; return held[k-1], nil })
	if err != nil {
		t.Fatal(err)
	}
	// Evaluations at 2, 4, ..., 12: best 2 at iteration 8, then 6 and 7.
	if rec.Iterations != 12 || rec.BestIter != 8 || p[0] != 8 || rec.HeldOutLoss != 2 || rec.TrainLoss != 11.5 {
		t.Errorf("record %+v, parameter %v; want 12 iterations, best 8 with loss 2, parameter 8, train loss 11.5", rec, p[0])
	}
}

// Split partitions the transitions: by whole episodes when there are
// enough (every transition once, each with its own episode's start), by
// the last steps of every episode otherwise.
func TestSplit(t *testing.T) {
	sys, target, behavior := lineargauss.DiscreteProblem()
	for _, tc := range []struct {
		episodes  int
		byEpisode bool
	}{{20, true}, {3, false}} {
		d, err := sys.Sample(rand.New(rand.NewPCG(1, 1)), behavior, target, tc.episodes, 10)
		if err != nil {
			t.Fatal(err)
		}
		mean, scale := Scaling(d)
		nd := NewNeuralData(d, mean, scale)
		train, held := nd.Split(rand.New(rand.NewPCG(2, 2)), 0.1)
		if held == nil || train.Len()+held.Len() != nd.Len() {
			t.Fatalf("%d episodes: %d + %v transitions of %d", tc.episodes, train.Len(), held, nd.Len())
		}
		seen := map[float64]int{}
		for _, part := range []*NeuralData{train, held} {
			for i := range part.Len() {
				seen[part.S[i]]++
				// The transition's start is its own episode's.
				e := part.Episode[part.Start[i]]
				lo, hi := d.Span(int(e))
				found := false
				for j := lo; j < hi; j++ {
					found = found || (d.ObsAt(j)[0]-mean[0])/scale[0] == part.S[i]
				}
				if !found {
					t.Errorf("%d episodes: a transition paired with episode %d's start is not in it", tc.episodes, e)
				}
			}
		}
		for s, k := range seen {
			if k != 1 {
				t.Errorf("%d episodes: state %v appears %d times", tc.episodes, s, k)
			}
		}
		if tc.byEpisode && train.Starts()+held.Starts() != nd.Starts() || !tc.byEpisode && held.Starts() != nd.Starts() {
			t.Errorf("%d episodes: starts %d + %d of %d", tc.episodes, train.Starts(), held.Starts(), nd.Starts())
		}
		if want := tc.episodes * 1; !tc.byEpisode && held.Len() != want {
			t.Errorf("%d episodes: %d held-out transitions, want the last of each episode (%d)", tc.episodes, held.Len(), want)
		}
	}
}

// With Average, the model is the moving average of the iterates (their
// mean while there are fewer than Average), and the held-out loss is
// evaluated on it.
func TestScheduleAverage(t *testing.T) {
	p := []float64{0}
	rec, err := Schedule{MaxIter: 4, EvalEvery: 2, Patience: 5, Average: 10}.Run([][]float64{p},
		func() (float64, error) { p[0]++; return 0, nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p[0] != 2.5 || rec.Iterations != 4 {
		t.Errorf("parameter %v after %d iterations, want the mean 2.5 of 1..4", p[0], rec.Iterations)
	}
	p[0] = 0
	var seen []float64
	_, err = Schedule{MaxIter: 4, EvalEvery: 2, Patience: 5, Average: 2}.Run([][]float64{p},
		func() (float64, error) { p[0] += 2; return 0, nil },
		func() (float64, error) { seen = append(seen, p[0]); return -p[0], nil })
	if err != nil {
		t.Fatal(err)
	}
	// Iterates 2, 4, 6, 8; averages 2, 3 (evaluated), 4.5, 6.25 (evaluated, kept).
	if len(seen) != 2 || seen[0] != 3 || seen[1] != 6.25 || p[0] != 6.25 {
		t.Errorf("held-out evaluated at %v, kept %v; want 3 and 6.25, kept 6.25", seen, p[0])
	}
}
