package ope_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

// statelessData returns two different Taxi logs (pi18 behavior, pi19
// target) and the target.
func statelessData(t *testing.T) ([]*dataset.Dataset, ope.Options) {
	t.Helper()
	target, err := taxi.Policy("pi19")
	if err != nil {
		t.Fatal(err)
	}
	behavior, err := taxi.Policy("pi18")
	if err != nil {
		t.Fatal(err)
	}
	sampler := sim.NewSampler(taxi.New())
	var ds []*dataset.Dataset
	for k, size := range [][2]int{{20, 60}, {12, 90}} {
		d, err := rollout.Sample(rand.New(rand.NewPCG(uint64(30+k), 0)), sampler, behavior, target, size[0], size[1])
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	return ds, ope.Options{Target: target}
}

// checkStateless runs one estimator value on every dataset, first one
// after the other, then from several goroutines at once, each running
// every dataset a few times in its own order, and asks for identical
// results, the estimator unchanged and the datasets unchanged. Run with
// -race to catch shared scratch space.
func checkStateless(t *testing.T, est ope.Estimator, ds []*dataset.Dataset, gamma float64) {
	t.Helper()
	before := fmt.Sprintf("%#v", est)
	clones := make([]*dataset.Dataset, len(ds))
	want := make([]ope.Result, len(ds))
	for i, d := range ds {
		clones[i] = d.Clone()
		res, err := est.Estimate(d, gamma)
		if err != nil {
			t.Fatalf("%s on dataset %d: %v", est.Name(), i, err)
		}
		want[i] = res
	}
	if want[0].Value == want[1].Value {
		t.Fatalf("%s: the datasets give the same estimate %v; the test needs different ones", est.Name(), want[0].Value)
	}
	const workers, rounds = 6, 3
	got := make([][]ope.Result, workers) // [worker][round*len(ds)+i]
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				for k := range ds {
					i := (k + w + r) % len(ds) // vary the order between goroutines
					res, err := est.Estimate(ds[i], gamma)
					if err != nil {
						errs[w] = err
						return
					}
					got[w] = append(got[w], res)
				}
			}
		})
	}
	wg.Wait()
	for w := range workers {
		if errs[w] != nil {
			t.Fatalf("%s, goroutine %d: %v", est.Name(), w, errs[w])
		}
		n := 0
		for r := range rounds {
			for k := range ds {
				i := (k + w + r) % len(ds)
				if !reflect.DeepEqual(got[w][n], want[i]) {
					t.Errorf("%s, goroutine %d, round %d, dataset %d: value %v (model %+v), sequential %v (model %+v)",
						est.Name(), w, r, i, got[w][n].Value, got[w][n].Model, want[i].Value, want[i].Model)
				}
				n++
			}
		}
	}
	if after := fmt.Sprintf("%#v", est); after != before {
		t.Errorf("%s changed: %s, was %s", est.Name(), after, before)
	}
	for i, d := range ds {
		if !reflect.DeepEqual(d, clones[i]) {
			t.Errorf("%s changed dataset %d", est.Name(), i)
		}
	}
}

// One DensityRatio value runs on two datasets from several goroutines at
// once with the results of sequential runs: the fitted model lives in the
// Result, not in the estimator.
func TestStatelessDensityRatio(t *testing.T) {
	ds, _ := statelessData(t)
	for _, gamma := range []float64{1, 0.95} {
		checkStateless(t, ope.DensityRatio{Learner: ratio.Tabular{}}, ds, gamma)
	}
	checkStateless(t, ope.DensityRatio{Learner: ratio.Tabular{NonNegative: true}}, ds, 1)
}

// The same holds for every other estimator of the logs that is quick
// enough (all but bch-neural and the oracle).
func TestStatelessRegistry(t *testing.T) {
	ds, o := statelessData(t)
	ests, err := ope.New([]string{"naive", "is-trajectory", "wis-trajectory", "is-stepwise", "wis-stepwise", "model-based"}, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, est := range ests {
		checkStateless(t, est, ds, 0.95)
	}
}
