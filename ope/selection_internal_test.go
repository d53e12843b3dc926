package ope

import (
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/value"
)

// sliceGreedy is a policy whose type cannot be compared (a slice).
type sliceGreedy []int

func (p sliceGreedy) NumActions() int                { return 2 }
func (p sliceGreedy) Prob(s, a int) float64          { return map[bool]float64{true: 1}[p[s] == a] }
func (p sliceGreedy) Sample(_ *rand.Rand, s int) int { return p[s] }

// The cache of escalated selections answers the same log, discount,
// Select and target, and nothing else: another log (by identity), another
// fold seed, another target, or a target whose type cannot be compared
// (which must not panic); it keeps the last selectionCacheSize entries.
func TestSelectionCache(t *testing.T) {
	var c ValueChoices
	d1, d2 := &dataset.Dataset{}, &dataset.Dataset{}
	pi := value.Target{Seed: 1}
	k := selectionKey{d: d1, gamma: 0.99, seed: 1, escalate: 1}
	c.put(k, pi, value.Neural{}, value.Selection{Winner: "neural"})
	if w, sel, ok := c.get(k, pi); !ok || sel.Winner != "neural" || w.Name() != "neural" {
		t.Fatalf("the entry just put: %v %v %v", w, sel, ok)
	}
	other := k
	other.d = d2
	seed := k
	seed.seed = 2
	for _, miss := range []struct {
		k  selectionKey
		pi value.Target
	}{{other, pi}, {seed, pi}, {k, value.Target{Seed: 2}}, {k, value.Target{Seed: 1, Policy: sliceGreedy{0, 1}}}} {
		if _, _, ok := c.get(miss.k, miss.pi); ok {
			t.Errorf("a hit for %+v", miss)
		}
	}
	uncomparable := value.Target{Policy: sliceGreedy{1, 0}}
	c.put(other, uncomparable, value.Linear{}, value.Selection{Winner: "poly4"})
	if _, _, ok := c.get(other, uncomparable); ok {
		t.Error("a hit for a target that cannot be compared")
	}
	for i := range selectionCacheSize {
		c.put(selectionKey{d: d2, seed: uint64(10 + i)}, pi, value.Linear{}, value.Selection{})
	}
	if _, _, ok := c.get(k, pi); ok || len(c.entries) != selectionCacheSize {
		t.Errorf("%d entries kept, the oldest still answered: %v", len(c.entries), ok)
	}
}
