package ope

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
)

// stepESSLog is a random log of m episodes of 1 to maxT steps, with
// heterogeneous ratios and a share zeroFrac of episodes whose first action
// the target never takes.
func stepESSLog(t *testing.T, seed uint64, m, maxT int, zeroFrac float64) *dataset.Dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	var eps []dataset.Episode
	for i := range m {
		n := 1 + rng.IntN(maxT)
		steps := make([]dataset.Step, n)
		zero := rng.Float64() < zeroFrac
		for j := range steps {
			pb := 0.5
			pt := 0.1 + 0.8*rng.Float64()
			lt := math.Log(pt)
			if zero && j == 0 {
				lt = math.Inf(-1)
			}
			steps[j] = dataset.Step{State: 0, Action: 0, Reward: rng.Float64(), HasNext: true, NextState: 0,
				LogBehavior: math.Log(pb), LogTarget: lt}
		}
		eps = append(eps, dataset.Episode{ID: fmt.Sprint(i), Steps: steps})
	}
	d, err := dataset.New(1, 2, eps)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// streamedStepESS is the StepESS of est's sums over d's episodes in
// order, cut into parts at cuts, each part through codec ("", "json" or
// "gob") and merged.
func streamedStepESS(t *testing.T, est Summer, d *dataset.Dataset, gamma float64, order []int, cuts []int, codec string) *StepESS {
	var total Sums
	bounds := append(append([]int{0}, cuts...), len(order))
	for p := 0; p+1 < len(bounds); p++ {
		s, _ := est.NewSums(gamma, 1)
		for _, e := range order[bounds[p]:bounds[p+1]] {
			if err := s.Add(d, e, []int{1}); err != nil {
				t.Fatal(err)
			}
		}
		if codec != "" {
			fresh, _ := est.NewSums(gamma, 1)
			var buf bytes.Buffer
			if codec == "json" {
				if err := json.NewEncoder(&buf).Encode(s); err != nil {
					t.Fatal(err)
				}
				if err := json.NewDecoder(&buf).Decode(fresh); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := gob.NewEncoder(&buf).Encode(s); err != nil {
					t.Fatal(err)
				}
				if err := gob.NewDecoder(&buf).Decode(fresh); err != nil {
					t.Fatal(err)
				}
			}
			s = fresh
		}
		if total == nil {
			total = s
		} else if err := total.Merge(s); err != nil {
			t.Fatal(err)
		}
	}
	switch s := total.(type) {
	case *StepwiseISSums:
		return &s.ESS
	case *StepwiseWISSums:
		return &s.ESS
	}
	return nil
}

// The per-step effective sample size of a stream (any order of the
// episodes, any cut into shards, through JSON or gob) is the in-memory
// one, for step-wise IS and WIS, with episodes of weight 0 among them.
func TestStepESSStreamMatchesMemory(t *testing.T) {
	for _, zf := range []float64{0, 0.5} {
		d := stepESSLog(t, 7, 60, 30, zf)
		for _, gamma := range []float64{1, 0.9} {
			buf := make([]float64, d.NumSteps())
			for i := range d.NumEpisodes() {
				lo, hi := d.Span(i)
				if _, _, err := walkEpisode("x", d, i, gamma, buf[lo:hi]); err != nil {
					t.Fatal(err)
				}
			}
			wantE, wantS := stepESSOf(d, gamma, buf).Mean()
			for _, est := range []Summer{&StepwiseIS{}, &StepwiseWIS{}} {
				rng := rand.New(rand.NewPCG(1, 2))
				for trial := range 6 {
					order := rng.Perm(d.NumEpisodes())
					cuts := []int{5 + trial, 20, 41}
					for _, codec := range []string{"", "json", "gob"} {
						gotE, gotS := streamedStepESS(t, est, d, gamma, order, cuts, codec).Mean()
						if math.Abs(gotE-wantE) > 1e-9*wantE || math.Abs(gotS-wantS) > 1e-9 {
							t.Errorf("zero share %v, gamma %v, %T, trial %d, codec %q: streamed (%v, %v), in memory (%v, %v)", zf, gamma, est, trial, codec, gotE, gotS, wantE, wantS)
						}
					}
				}
			}
		}
	}
}

// Merging per-step sums of another length (another version's encoding)
// is an error, not a panic.
func TestStepESSMergeRefusesShortSums(t *testing.T) {
	d := stepESSLog(t, 3, 10, 5, 0)
	for _, est := range []Summer{&StepwiseIS{}, &StepwiseWIS{}} {
		a, _ := est.NewSums(0.9, 1)
		b, _ := est.NewSums(0.9, 1)
		for i := range 5 {
			a.Add(d, i, []int{1})
			b.Add(d, i+5, []int{1})
		}
		switch s := b.(type) {
		case *StepwiseISSums:
			s.ESS.Sq = s.ESS.Sq[:1]
		case *StepwiseWISSums:
			s.E2 = s.E2[:1]
		}
		if err := a.Merge(b); err == nil {
			t.Errorf("%T: merging short per-step sums succeeded", est)
		}
	}
}

// stepESSOf is the StepESS of the cumulative log ratios logw of d
// (log w^i_{0:t}, episode after episode in step order) with normalised
// discounts for gamma.
func stepESSOf(d *dataset.Dataset, gamma float64, logw []float64) *StepESS {
	s := &StepESS{}
	s.grow(d.MaxLen())
	for i := range d.NumEpisodes() {
		lo, hi := d.Span(i)
		g, _ := discountStart(gamma, hi-lo)
		for k := lo; k < hi; k++ {
			s.add(k-lo, logw[k], g)
			g *= gamma
		}
	}
	return s
}
