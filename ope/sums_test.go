package ope_test

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim/taxi"
	"github.com/ihope-ope/ihope/value"
)

func summers() []ope.Summer {
	return []ope.Summer{&ope.Naive{}, &ope.TrajectoryIS{}, &ope.TrajectoryWIS{}, &ope.StepwiseIS{},
		&ope.StepwiseWIS{}, ope.DensityRatio{Learner: ratio.Tabular{}}}
}

func relClose(a, b, tol float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

// sumsOf adds d's episodes to fresh sums of est in parts (the episodes
// split at the cuts, each part its own sums, merged in order), with
// Poisson multiplicities of seed in copies 1..B.
func sumsOf(t *testing.T, est ope.Summer, d *dataset.Dataset, gamma float64, B int, seed uint64, cuts []int) ope.Sums {
	t.Helper()
	var total ope.Sums
	bounds := append(append([]int{0}, cuts...), d.NumEpisodes())
	mult := make([]int, B+1)
	for p := 0; p+1 < len(bounds); p++ {
		s, err := est.NewSums(gamma, B+1)
		if err != nil {
			t.Fatal(err)
		}
		for e := bounds[p]; e < bounds[p+1]; e++ {
			mult[0] = 1
			ope.PoissonCounts(seed, d.IDs[e], mult[1:])
			if err := s.Add(d, e, mult); err != nil {
				t.Fatal(err)
			}
		}
		if total == nil {
			total = s
		} else if err := total.Merge(s); err != nil {
			t.Fatal(err)
		}
	}
	return total
}

// The sums, merged from parts, give the in-memory estimate (their fold
// in one part, for the estimators defined by their sums), weight
// diagnostics and, copy by copy, Estimate on the log rebuilt with the
// Poisson multiplicities; bch-tabular's in-memory estimate is also
// formed here from the learner's own fit (ratio.Tabular.Fit, which
// counts the log in its own code) and the step-weighted mean written
// out: independent computations of every number. (naive and the IS
// family have their hand values, TestHandValues.)
func TestSumsMatchInMemory(t *testing.T) {
	sets := taxiAndRing(t)
	const B, seed = 8, 3
	for _, set := range sets {
		for _, gamma := range []float64{1, 0.95} {
			for _, est := range summers() {
				want, werr := est.Estimate(set.d, gamma)
				if _, ok := est.(ope.DensityRatio); ok && werr == nil {
					if byFit := fittedRatioEstimate(t, set.d, gamma); !relClose(want.Value, byFit, 1e-12) {
						t.Errorf("%s bch-tabular gamma %v: in memory %v, from the learner's fit %v", set.name, gamma, want.Value, byFit)
					}
				}
				for _, cuts := range [][]int{nil, {7, 30}} {
					// Episodes added one after another give the in-memory
					// sums exactly. Merged parts add them in another order,
					// and the tabular solve's conjugate gradients (stopped
					// at a relative residual of 1e-12) carry that rounding
					// to about 1e-10 in w.
					tol := 1e-12
					if _, ok := est.(ope.DensityRatio); ok && cuts != nil {
						tol = 1e-9
					}
					s := sumsOf(t, est, set.d, gamma, B, seed, cuts)
					got, ws, err := s.Finish(0)
					if (err != nil) != (werr != nil) {
						t.Fatalf("%s %s gamma %v: sums error %v, in-memory error %v", set.name, est.Name(), gamma, err, werr)
					}
					if err != nil {
						continue
					}
					if !relClose(got.Value, want.Value, tol) || got.Estimand != want.Estimand {
						t.Errorf("%s %s gamma %v cuts %v: sums %v (%s), in memory %v (%s)", set.name, est.Name(), gamma, cuts,
							got.Value, got.Estimand, want.Value, want.Estimand)
					}
					if w := want.Weights; w != nil {
						if ws.Units != len(w) || !relClose(ws.ESS, ope.KishESS(w), 1e-9) || !relClose(ws.MaxShare, ope.MaxShare(w), 1e-9) {
							t.Errorf("%s %s gamma %v: weights %+v, in memory ESS %v of %d, share %v", set.name, est.Name(), gamma, ws,
								ope.KishESS(w), len(w), ope.MaxShare(w))
						}
					}
					if !(math.IsNaN(got.Transient) && math.IsNaN(want.Transient)) && !relClose(got.Transient, want.Transient, 1e-9) {
						t.Errorf("%s %s gamma %v: transient %v, in memory %v", set.name, est.Name(), gamma, got.Transient, want.Transient)
					}
					refits, failed := refitResamples(set.d, gamma, est, B, seed, true)
					var copies []float64
					for r := range B {
						if got, _, err := s.Finish(r + 1); err == nil && !math.IsNaN(got.Value) && !math.IsInf(got.Value, 0) {
							copies = append(copies, got.Value)
						}
					}
					if len(copies) != len(refits) || failed == B {
						t.Fatalf("%s %s gamma %v: %d copies finish, %d refits succeed of %d", set.name, est.Name(), gamma, len(copies), len(refits), B)
					}
					rtol := tol
					if _, ok := est.(ope.DensityRatio); ok {
						rtol = 1e-7 // the rebuilt log adds its episodes in another order
					}
					for r := range refits {
						if !relClose(copies[r], refits[r], rtol) {
							t.Errorf("%s %s gamma %v resample %d: sums %v, refit %v", set.name, est.Name(), gamma, r, copies[r], refits[r])
						}
					}
				}
			}
		}
	}
}

// Sums survive JSON and gob exactly, infinities included.
func TestSumsEncode(t *testing.T) {
	d := taxiData(t, 4, 20, 50)
	target, _ := taxi.Policy("pi19")
	if err := d.SetTargetPolicy(target); err != nil { // the tabular learners read target_prob_k
		t.Fatal(err)
	}
	ests := append(summers(), &ope.ModelBased{Estimand: ope.LongRun}, ope.FQE{},
		ope.PairRatio{Learner: ratio.MWL{}}, ope.PairRatio{Learner: ratio.DualDICE{}}, ope.MinimaxQ{})
	for _, est := range ests {
		s := sumsOf(t, est, d, 0.9, 3, 1, nil)
		want, _, err := s.Finish(2)
		if err != nil {
			t.Fatalf("%s: %v", est.Name(), err)
		}
		for _, codec := range []string{"json", "gob"} {
			fresh, _ := est.NewSums(0.9, 4)
			var buf bytes.Buffer
			var err error
			if codec == "json" {
				err = json.NewEncoder(&buf).Encode(s)
			} else {
				err = gob.NewEncoder(&buf).Encode(s)
			}
			if err != nil {
				t.Fatalf("%s %s: %v", est.Name(), codec, err)
			}
			if codec == "json" {
				err = json.NewDecoder(&buf).Decode(fresh)
			} else {
				err = gob.NewDecoder(&buf).Decode(fresh)
			}
			if err != nil {
				t.Fatalf("%s %s: %v", est.Name(), codec, err)
			}
			got, _, _ := fresh.Finish(2)
			if got.Value != want.Value {
				t.Errorf("%s %s: %v after a round trip, %v before", est.Name(), codec, got.Value, want.Value)
			}
		}
	}
	inf := ope.Floats{math.Inf(-1), 1.5, math.NaN(), math.Inf(1)}
	b, _ := json.Marshal(inf)
	var back ope.Floats
	if err := json.Unmarshal(b, &back); err != nil || len(back) != 4 || !math.IsInf(back[0], -1) || back[1] != 1.5 || !math.IsNaN(back[2]) || !math.IsInf(back[3], 1) {
		t.Errorf("Floats JSON %s reads back as %v (%v)", b, back, err)
	}
}

// PoissonCount's counts have the Poisson(1) frequencies, and are fixed
// numbers: the same on every machine.
func TestPoissonCount(t *testing.T) {
	const n = 200000
	var freq [8]int
	sum := 0
	for i := range n {
		k := ope.PoissonCount(7, "episode-"+string(rune('a'+i%26))+string(rune(i)), i%13)
		sum += k
		freq[min(k, 7)]++
	}
	p := 1 / math.E
	for k := range 5 {
		want := p * n
		if math.Abs(float64(freq[k])-want) > 5*math.Sqrt(want) {
			t.Errorf("P(K = %d): %d of %d, want %.0f", k, freq[k], n, want)
		}
		p /= float64(k + 1)
	}
	if mean := float64(sum) / n; math.Abs(mean-1) > 0.01 {
		t.Errorf("mean %v, want 1", mean)
	}
	got := []int{ope.PoissonCount(1, "0", 0), ope.PoissonCount(1, "0", 1), ope.PoissonCount(1, "ep17", 0), ope.PoissonCount(2, "ep17", 0)}
	t.Logf("fixed counts %v", got)
}

// The tabular learners' sums (model-based, fqe, mwl, dualdice, mql under
// both estimands) give their in-memory estimates and, copy by copy, their
// estimates on the Poisson resample rebuilt as a dataset, with the target
// given or read from the target_prob_k columns.
func TestTabularSums(t *testing.T) {
	// Every third episode cut to 30 steps: the horizon estimand reads each
	// start with its own length.
	eps := taxiData(t, 12, 40, 80).Episodes()
	for i := range eps {
		if i%3 == 2 {
			eps[i].Steps = eps[i].Steps[:30]
		}
	}
	d, err := dataset.New(taxi.NumStates, taxi.NumActions, eps)
	if err != nil {
		t.Fatal(err)
	}
	target, _ := taxi.Policy("pi19")
	if err := d.SetTargetPolicy(target); err != nil {
		t.Fatal(err)
	}
	names := []string{"model-based", "fqe", "mwl", "dualdice", "mql"}
	const B, seed = 4, 9
	for _, est := range []ope.Estimand{ope.Horizon, ope.LongRun} {
		mem, err := ope.New(names, ope.Options{Target: target, Estimand: est})
		if err != nil {
			t.Fatal(err)
		}
		for _, given := range []bool{true, false} {
			o := ope.Options{Estimand: est}
			if given {
				o.Target = target
			}
			sums, _ := ope.New(names, o)
			for k, e := range sums {
				for _, gamma := range []float64{1, 0.9} {
					for _, cuts := range [][]int{nil, {13}} {
						// Merged parts sum the rewards in another order:
						// the solves (dense LU, GMRES to a relative
						// residual of 1e-13) carry it to about 1e-14.
						const tol = 1e-12
						s := sumsOf(t, e.(ope.Summer), d, gamma, B, seed, cuts)
						got, _, err := s.Finish(0)
						want, err2 := mem[k].Estimate(d, gamma)
						if err != nil || err2 != nil || !relClose(got.Value, want.Value, tol) || got.Estimand != want.Estimand {
							t.Errorf("%s %s given %v gamma %v cuts %v: sums %v %s (%v), in memory %v %s (%v)", e.Name(), est, given, gamma, cuts,
								got.Value, got.Estimand, err, want.Value, want.Estimand, err2)
						}
						for r := range B {
							var idx []int
							for i, id := range d.IDs {
								for range ope.PoissonCount(seed, id, r) {
									idx = append(idx, i)
								}
							}
							got, _, err := s.Finish(r + 1)
							want, err2 := mem[k].Estimate(d.Subset(idx), gamma)
							if err != nil || err2 != nil || !relClose(got.Value, want.Value, tol) {
								t.Errorf("%s %s given %v gamma %v resample %d: sums %v (%v), rebuilt %v (%v)", e.Name(), est, given, gamma, r, got.Value, err, want.Value, err2)
							}
						}
					}
				}
			}
		}
	}
	// The neural forms stream in two passes, trained on a sample of
	// episodes drawn in the first (ope.SampleSums, checked against the
	// in-memory estimators in package stream), and their statistics
	// refuse to encode: they hold networks trained in this process.
	for _, c := range []struct{ name, form string }{
		{"mwl", "mwl in its neural form"},
		{"dualdice", "dualdice in its neural form"},
		{"mql", "mql in its neural form"},
		{"fqe", "fqe with the neural value learner"},
	} {
		e, _ := ope.New([]string{c.name}, ope.Options{RatioModel: "neural", ValueModel: "neural", Estimand: ope.LongRun})
		s, err := e[0].(ope.Summer).NewSums(0.9, 1)
		ss, ok := s.(*ope.SampleSums)
		if err != nil || !ok || !ss.FirstPass() || ss.Form() != c.form {
			t.Errorf("%s neural: %T %v", c.name, s, err)
			continue
		}
		if _, err := ss.MarshalJSON(); err == nil || !strings.Contains(err.Error(), "no encoding") {
			t.Errorf("%s neural: encoded (%v)", c.name, err)
		}
		if _, _, err := ss.Finish(0); err == nil || !strings.Contains(err.Error(), "first pass has not ended") {
			t.Errorf("%s neural: finished before the first pass ended (%v)", c.name, err)
		}
	}
	// A value learner that neither sums nor trains on a sample is refused.
	if _, err := (ope.FQE{Value: value.MQL{}, Estimand: ope.LongRun}).NewSums(0.9, 1); err == nil || !strings.Contains(err.Error(), "fqe cannot stream with the mql value learner") {
		t.Errorf("fqe with mql's learner: %v", err)
	}
}

// fittedRatioEstimate is bch-tabular's estimate (Eq. 6) from
// ratio.Tabular.Fit: sum_j v_j r_j / sum_j v_j, v_j = gamma^t w(s_j)
// beta_j.
func fittedRatioEstimate(t *testing.T, d *dataset.Dataset, gamma float64) float64 {
	t.Helper()
	m, err := ratio.Tabular{}.Fit(d, gamma)
	if err != nil {
		t.Fatal(err)
	}
	w, err := m.StepRatios(d)
	if err != nil {
		t.Fatal(err)
	}
	var num, den float64
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		g := 1.0
		for j := lo; j < hi; j++ {
			v := g * w[j] * math.Exp(d.LogRatio(j))
			num += v * d.Reward[j]
			den += v
			g *= gamma
		}
	}
	return num / den
}
