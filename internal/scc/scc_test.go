package scc

import (
	"slices"
	"testing"
)

// Small graphs whose components are known, given as adjacency lists:
// the components (as sets of nodes) and an order that respects reachability
// (a component is numbered after every component it reaches).
func TestTarjan(t *testing.T) {
	for _, c := range []struct {
		name  string
		adj   [][]int32
		comps [][]int // the components, each sorted, in Tarjan's order
	}{
		{"one node, no edge", [][]int32{{}}, [][]int{{0}}},
		{"self loop", [][]int32{{0}}, [][]int{{0}}},
		{"a cycle", [][]int32{{1}, {2}, {0}}, [][]int{{0, 1, 2}}},
		{"a chain: each node its own component, the last first", [][]int32{{1}, {2}, {}}, [][]int{{2}, {1}, {0}}},
		// 0 <-> 1 -> 2 <-> 3, 4 -> 0: {2,3} closed, then {0,1}, then {4}.
		{"two cycles joined", [][]int32{{1}, {0, 2}, {3}, {2}, {0}}, [][]int{{2, 3}, {0, 1}, {4}}},
		// Two disjoint cycles: components in the order of their roots.
		{"disjoint", [][]int32{{1}, {0}, {3}, {2}}, [][]int{{0, 1}, {2, 3}}},
	} {
		n := len(c.adj)
		start := []int32{0}
		var next []int32
		for _, a := range c.adj {
			next = append(next, a...)
			start = append(start, int32(len(next)))
		}
		comp, ncomp := Tarjan(n, start, next)
		got := make([][]int, ncomp)
		for s, k := range comp {
			got[k] = append(got[k], s)
		}
		if !slices.EqualFunc(got, c.comps, slices.Equal[[]int]) {
			t.Errorf("%s: components %v, want %v", c.name, got, c.comps)
		}
	}
}

// A chain of a million nodes does not exhaust the stack (the algorithm is
// iterative) and gives a million components.
func TestTarjanLongChain(t *testing.T) {
	const n = 1 << 20
	start := make([]int32, n+1)
	next := make([]int32, 0, n-1)
	for s := range n {
		if s+1 < n {
			next = append(next, int32(s+1))
		}
		start[s+1] = int32(len(next))
	}
	comp, ncomp := Tarjan(n, start, next)
	if ncomp != n || comp[0] != n-1 || comp[n-1] != 0 {
		t.Errorf("%d components, node 0 in %d, node %d in %d", ncomp, comp[0], n-1, comp[n-1])
	}
}
