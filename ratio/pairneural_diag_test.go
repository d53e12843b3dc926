package ratio

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/env/lineargauss"
	"github.com/ihope-ope/ihope/internal/minimax"
	"github.com/ihope-ope/ihope/value"
)

// trueRatio returns w(s, a) = d_pi(s) pi(a|s) / (d_D(s) pi_b(a|s)) for the
// discrete problem, d_D the mean over t < T of the behavior's marginals.
func trueRatio(sys *lineargauss.Discrete, target, behavior lineargauss.Softmax, gamma float64, T int) func(s float64, a int) float64 {
	x, dpi, err := sys.Visitation(target, gamma)
	if err != nil {
		panic(err)
	}
	N := len(x)
	h := x[1] - x[0]
	nA := len(sys.Actions)
	p := make([]float64, N)
	for i, xi := range x {
		p[i] = math.Exp(-xi*xi/2) / math.Sqrt(2*math.Pi)
	}
	dD := make([]float64, N)
	pb := make([]float64, nA)
	// kernel K[i][j] = sum_a pb(a|x_i) N(x_j; A x_i + B u_a, sigma^2)
	K := make([]float64, N*N)
	norm := 1 / (sys.Sigma * math.Sqrt(2*math.Pi))
	for i, xi := range x {
		behavior.Probs(pb, xi)
		for j, xj := range x {
			k := 0.0
			for a, pa := range pb {
				z := (xj - sys.A*xi - sys.B*sys.Actions[a]) / sys.Sigma
				k += pa * norm * math.Exp(-z*z/2)
			}
			K[i*N+j] = k
		}
	}
	q := make([]float64, N)
	for range T {
		for i := range dD {
			dD[i] += p[i] / float64(T)
		}
		clear(q)
		for i := range N {
			for j := range N {
				q[j] += h * p[i] * K[i*N+j]
			}
		}
		p, q = q, p
	}
	pt := make([]float64, nA)
	return func(s float64, a int) float64 {
		f := (s - x[0]) / h
		i := int(f)
		if i < 0 || i >= N-1 {
			return 0
		}
		t := f - float64(i)
		num := (1-t)*dpi[i] + t*dpi[i+1]
		den := (1-t)*dD[i] + t*dD[i+1]
		target.Probs(pt, s)
		behavior.Probs(pb, s)
		return num * pt[a] / (den * pb[a])
	}
}

// lossAt evaluates the MWL measure loss with per-transition weights w
// (normalised by their batch mean) on the transitions idx and starts st.
func lossAt(nd *minimax.NeuralData, w []float64, idx, st []int, gamma, h float64, diag bool) float64 {
	n, dim, nA := len(idx), nd.Dim, nd.NumActions
	per := 3
	if gamma == 1 {
		per = 2
	}
	ml := minimax.NewSampleLoss(dim, nA, per*n, h)
	z := 0.0
	for _, i := range idx {
		z += w[i] / float64(n)
	}
	for k, i := range idx {
		a := int(nd.A[i])
		wi := w[i] / z
		p := k * per
		for q := range per {
			ml.Group[p+q] = int32(k)
		}
		copy(ml.X[p*dim:(p+1)*dim], nd.S[i*dim:(i+1)*dim])
		ml.C[p*nA+a] = -wi
		copy(ml.X[(p+1)*dim:(p+2)*dim], nd.Next[i*dim:(i+1)*dim])
		for c, pc := range nd.PiNext[i*nA : (i+1)*nA] {
			ml.C[(p+1)*nA+c] = gamma * wi * pc
		}
		if per == 3 {
			s := st[k]
			copy(ml.X[(p+2)*dim:(p+3)*dim], nd.S0[s*dim:(s+1)*dim])
			for c, pc := range nd.Pi0[s*nA : (s+1)*nA] {
				ml.C[(p+2)*nA+c] = (1 - gamma) * pc
			}
		}
	}
	for i := range ml.C {
		ml.C[i] /= float64(n)
	}
	ml.Load(per * n)
	return ml.Loss(diag, false)
}

func TestPairNeuralDiag(t *testing.T) {
	if os.Getenv("IHOPE_DIAG") == "" {
		t.Skip()
	}
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, err := sys.Sample(rand.New(rand.NewPCG(1, 7)), behavior, target, 160, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, gamma := range []float64{0.9, 1} {
		truth, _ := sys.LongRun(target, gamma)
		wt := trueRatio(sys, target, behavior, gamma, 100)
		km, err := MWL{}.FitPairs(d, gamma, value.Target{})
		if err != nil {
			t.Fatal(err)
		}
		wk, _ := km.StepRatios(d)
		mean, scale := minimax.Scaling(d)
		nd := minimax.NewNeuralData(d, mean, scale)
		wtrue := make([]float64, nd.Len())
		ones := make([]float64, nd.Len())
		for j := range wtrue {
			wtrue[j] = wt(d.ObsAt(j)[0], int(d.Action[j]))
			ones[j] = 1
		}
		est := func(w []float64) float64 {
			s, z := 0.0, 0.0
			for j, v := range w {
				s += v * d.Reward[j]
				z += v
			}
			return s / z
		}
		t.Logf("gamma %g truth %.4f: estimates true-w %.4f kernel-w %.4f ones %.4f", gamma, truth, est(wtrue), est(wk), est(ones))
		rng := rand.New(rand.NewPCG(5, 5))
		hm, _ := minimax.Median(rng, nd.S, 1, 1000)
		for _, hf := range []float64{1, 0.5, 0.25} {
			for _, m := range []int{256, 2048} {
				for _, diag := range []bool{false, true} {
					var lt, lk, l1 []float64
					for range 5 {
						idx, st := make([]int, m), make([]int, m)
						for k := range idx {
							idx[k] = rng.IntN(nd.Len())
							st[k] = rng.IntN(nd.Starts())
						}
						lt = append(lt, lossAt(nd, wtrue, idx, st, gamma, hm*hf, diag))
						lk = append(lk, lossAt(nd, wk, idx, st, gamma, hm*hf, diag))
						l1 = append(l1, lossAt(nd, ones, idx, st, gamma, hm*hf, diag))
					}
					t.Logf("gamma %g h %.2f*med m %d V %v: true %.2e kernel %.2e ones %.2e", gamma, hf, m, diag, lt, lk, l1)
				}
			}
		}
		_ = dataset.Dataset{}
	}
}

func quantiles(w []float64) []float64 {
	s := append([]float64(nil), w...)
	slicesSort(s)
	out := []float64{}
	for _, q := range []float64{0, 0.1, 0.5, 0.9, 0.99, 1} {
		out = append(out, s[int(q*float64(len(s)-1))])
	}
	return out
}

func TestPairNeuralDiagFit(t *testing.T) {
	if os.Getenv("IHOPE_DIAG") == "" {
		t.Skip()
	}
	sys, target, behavior := lineargauss.DiscreteProblem()
	n := 160
	if v := os.Getenv("DIAG_N"); v != "" {
		n = atoi(v)
	}
	d, err := sys.Sample(rand.New(rand.NewPCG(1, 7)), behavior, target, n, 100)
	if err != nil {
		t.Fatal(err)
	}
	gammas := []float64{0.9, 1}
	if os.Getenv("DIAG_G") != "" {
		gammas = gammas[:1]
	}
	for _, gamma := range gammas {
		truth, _ := sys.LongRun(target, gamma)
		wt := trueRatio(sys, target, behavior, gamma, 100)
		mean, scale := minimax.Scaling(d)
		nd := minimax.NewNeuralData(d, mean, scale)
		wtrue := make([]float64, nd.Len())
		for j := range wtrue {
			wtrue[j] = wt(d.ObsAt(j)[0], int(d.Action[j]))
		}
		est := func(w []float64) float64 {
			s, z := 0.0, 0.0
			for j, v := range w {
				s += v * d.Reward[j]
				z += v
			}
			return s / z
		}
		rng := rand.New(rand.NewPCG(5, 5))
		idx, st := make([]int, 2048), make([]int, 2048)
		for k := range idx {
			idx[k] = rng.IntN(nd.Len())
			st[k] = rng.IntN(nd.Starts())
		}
		hm, _ := minimax.Median(rng, nd.S, 1, 1000)
		t.Logf("median %.3f", hm)
		t.Logf("gamma %g truth %.4f true-w est %.4f loss %.2e quantiles %.3g", gamma, truth, est(wtrue), lossAt(nd, wtrue, idx, st, gamma, hm, false), quantiles(wtrue))
		for _, cfg := range diagConfigs() {
			m, err := fitPairNeural("mwl", d, gamma, value.Target{}, cfg, false)
			if err != nil {
				t.Fatal(err)
			}
			w, _ := m.StepRatios(d)
			t.Logf("gamma %g %+v: err %+.4f iters %d best %d train %.2e held %.2e loss %.2e q %.3g", gamma, cfg, est(w)-truth, m.Iterations, m.BestIter, m.TrainLoss, m.HeldOutLoss,
				lossAt(nd, w, idx, st, gamma, hm, false), quantiles(w))
		}
	}
}

func TestPairNeuralDiagFloor(t *testing.T) {
	if os.Getenv("IHOPE_DIAG") == "" {
		t.Skip()
	}
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, _ := sys.Sample(rand.New(rand.NewPCG(1, 7)), behavior, target, 160, 100)
	gamma := 0.9
	truth, _ := sys.LongRun(target, gamma)
	wt := trueRatio(sys, target, behavior, gamma, 100)
	mean, scale := minimax.Scaling(d)
	nd := minimax.NewNeuralData(d, mean, scale)
	wtrue := make([]float64, nd.Len())
	for j := range wtrue {
		wtrue[j] = wt(d.ObsAt(j)[0], int(d.Action[j]))
	}
	est := func(w []float64) float64 {
		s, z := 0.0, 0.0
		for j, v := range w {
			s += v * d.Reward[j]
			z += v
		}
		return s / z
	}
	rng := rand.New(rand.NewPCG(5, 5))
	hm, _ := minimax.Median(rng, nd.S, 1, 1000)
	var batches [][2][]int
	for range 4 {
		idx, st := make([]int, 4096), make([]int, 4096)
		for k := range idx {
			idx[k] = rng.IntN(nd.Len())
			st[k] = rng.IntN(nd.Starts())
		}
		batches = append(batches, [2][]int{idx, st})
	}
	for _, fl := range []float64{0, 0.01, 0.03, 0.07, 0.2} {
		w := make([]float64, len(wtrue))
		for j, v := range wtrue {
			w[j] = max(v, fl)
		}
		for _, hf := range []float64{1, 0.5, 0.25} {
			var ls []float64
			for _, b := range batches {
				ls = append(ls, lossAt(nd, w, b[0], b[1], gamma, hf*hm, false))
			}
			t.Logf("floor %.2f: err %+.4f h %.2f loss %.3e", fl, est(w)-truth, hf, ls)
		}
	}
}

// featLoss is the V-statistic FeatureLoss of w over all transitions and starts.
func featLoss(nd *minimax.NeuralData, w []float64, gamma, h float64, D int) float64 {
	n, dim, nA := nd.Len(), nd.Dim, nd.NumActions
	S := nd.Starts()
	if gamma == 1 {
		S = 0
	}
	fl := minimax.NewFeatureLoss(rand.New(rand.NewPCG(9, 9)), dim, nA, 2*n+S, D, h)
	z := 0.0
	for _, v := range w {
		z += v / float64(n)
	}
	for i := range n {
		a := int(nd.A[i])
		wi := w[i] / z / float64(n)
		copy(fl.X[2*i*dim:], nd.S[i*dim:(i+1)*dim])
		copy(fl.X[(2*i+1)*dim:], nd.Next[i*dim:(i+1)*dim])
		fl.C[2*i*nA+a] = -wi
		for c, pc := range nd.PiNext[i*nA : (i+1)*nA] {
			fl.C[(2*i+1)*nA+c] = gamma * wi * pc
		}
	}
	for k := range S {
		p := 2*n + k
		copy(fl.X[p*dim:], nd.S0[k*dim:(k+1)*dim])
		for c, pc := range nd.Pi0[k*nA : (k+1)*nA] {
			fl.C[p*nA+c] = (1 - gamma) * pc / float64(S)
		}
	}
	fl.Load(2*n + S)
	return fl.Loss(false)
}

func TestPairNeuralDiagFull(t *testing.T) {
	if os.Getenv("IHOPE_DIAG") == "" {
		t.Skip()
	}
	sys, target, behavior := lineargauss.DiscreteProblem()
	d, _ := sys.Sample(rand.New(rand.NewPCG(1, 7)), behavior, target, 160, 100)
	for _, gamma := range []float64{0.9, 1} {
		truth, _ := sys.LongRun(target, gamma)
		wt := trueRatio(sys, target, behavior, gamma, 100)
		mean, scale := minimax.Scaling(d)
		nd := minimax.NewNeuralData(d, mean, scale)
		wtrue := make([]float64, nd.Len())
		for j := range wtrue {
			wtrue[j] = wt(d.ObsAt(j)[0], int(d.Action[j]))
		}
		km, _ := MWL{}.FitPairs(d, gamma, value.Target{})
		wk, _ := km.StepRatios(d)
		ones := make([]float64, nd.Len())
		for i := range ones {
			ones[i] = 1
		}
		hm, _ := minimax.Median(rand.New(rand.NewPCG(5, 5)), nd.S, 1, 1000)
		for _, hf := range []float64{1, 0.5, 0.25} {
			t.Logf("gamma %g truth %.3f h %.2f: V loss true %.3e kernel %.3e ones %.3e", gamma, truth, hf, featLoss(nd, wtrue, gamma, hf*hm, 256), featLoss(nd, wk, gamma, hf*hm, 256), featLoss(nd, ones, gamma, hf*hm, 256))
		}
	}
}
