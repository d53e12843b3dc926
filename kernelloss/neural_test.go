package kernelloss

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/internal/gradcheck"
	"github.com/ihope-ope/ihope/sim/lineargauss"
)

// FeatureLoss agrees with the double sum over (state, action) atoms of
// its definition with the features' kernel psi(x)^T psi(x~), computed
// independently, with and without the profiled direction; with many
// features that kernel is the Gaussian one; its gradient matches central
// finite differences; the embeddings of two loads add up to that of one.
func TestFeatureLoss(t *testing.T) {
	const dim, nA, points, h = 2, 3, 13, 0.8
	rng := rand.New(rand.NewPCG(1, 2))
	fl := NewFeatureLoss(rand.New(rand.NewPCG(3, 4)), dim, nA, points, 64, h)
	for i := range fl.X {
		fl.X[i] = rng.NormFloat64()
	}
	for i := range fl.C {
		fl.C[i] = rng.NormFloat64()
	}
	u := make([]float64, len(fl.C))
	for i := range u {
		u[i] = rng.Float64()
	}
	fl.Load(points)
	// kern is the features' kernel by its definition.
	kern := func(f *FeatureLoss, p, q int) float64 {
		s := 0.0
		for j := range f.D / 2 {
			var wp, wq float64
			for t := range dim {
				wp += f.omega[j*dim+t] * f.X[p*dim+t]
				wq += f.omega[j*dim+t] * f.X[q*dim+t]
			}
			s += 2 / float64(f.D) * math.Cos(wp-wq)
		}
		return s
	}
	direct := func(c []float64, kappa float64) float64 {
		s := 0.0
		for p := range points {
			for q := range points {
				k := kern(fl, p, q)
				for a := range nA {
					s += k * (c[p*nA+a] - kappa*u[p*nA+a]) * (c[q*nA+a] - kappa*u[q*nA+a])
				}
			}
		}
		return s
	}
	for _, prof := range []bool{false, true} {
		fl.U = nil
		if prof {
			fl.U = u
		}
		got := fl.Loss(true)
		g := append([]float64(nil), fl.G...)
		kappa := fl.Kappa
		want := direct(fl.C, kappa)
		if math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("profiled %v: loss %v, the double sum gives %v", prof, got, want)
		}
		if prof { // Kappa minimises the loss along u
			for _, dk := range []float64{-1e-3, 1e-3} {
				if v := direct(fl.C, kappa+dk); v < want {
					t.Errorf("loss %v at kappa %v + %v, below %v at kappa", v, kappa, dk, want)
				}
			}
		}
		fd := gradcheck.FiniteDifferences(fl.C, func() float64 { return fl.Loss(false) })
		if vec, _ := gradcheck.Compare(g, fd); !(vec <= 1e-6) {
			t.Errorf("profiled %v: gradient relative error %.3g", prof, vec)
		}
	}
	// Two loads of the first and last points embed as one load of all.
	fl.U = u
	eAll, uAll := make([]float64, nA*fl.D), make([]float64, nA*fl.D)
	fl.AddEmbedding(eAll, uAll)
	half := fl.Resize(points)
	e, eu := make([]float64, nA*fl.D), make([]float64, nA*fl.D)
	for _, part := range [][2]int{{0, 6}, {6, points}} {
		lo, hi := part[0], part[1]
		copy(half.X, fl.X[lo*dim:hi*dim])
		copy(half.C, fl.C[lo*nA:hi*nA])
		half.U = u[lo*nA : hi*nA]
		half.Load(hi - lo)
		half.AddEmbedding(e, eu)
	}
	for i := range e {
		if math.Abs(e[i]-eAll[i]) > 1e-12 || math.Abs(eu[i]-uAll[i]) > 1e-12 {
			t.Fatalf("embedding %d: %v and %v in two loads, %v and %v in one", i, e[i], eu[i], eAll[i], uAll[i])
		}
	}
	// With 20,000 features the kernel is the Gaussian one to about 0.01.
	big := NewFeatureLoss(rand.New(rand.NewPCG(5, 6)), dim, nA, points, 20000, h)
	copy(big.X, fl.X)
	worst := 0.0
	for p := range 4 {
		for q := range 4 {
			d2 := 0.0
			for t := range dim {
				d2 += (fl.X[p*dim+t] - fl.X[q*dim+t]) * (fl.X[p*dim+t] - fl.X[q*dim+t])
			}
			worst = max(worst, math.Abs(kern(big, p, q)-math.Exp(-d2/(2*h*h))))
		}
	}
	if worst > 0.03 {
		t.Errorf("20,000 features: kernel off the Gaussian by %v", worst)
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
