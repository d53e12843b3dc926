package mdp

import "github.com/ihope-ope/ihope/internal/scc"

// closedClasses returns the closed communicating classes of the chain (the
// strongly connected components of its graph with no edge leaving them),
// each sorted increasingly, ordered by their smallest state. A finite chain
// has a unique stationary distribution if and only if it has exactly one.
func (c *chain) closedClasses() [][]int {
	comp, ncomp := c.scc()
	leaves := make([]bool, ncomp)
	for s := 0; s < c.n; s++ {
		for k := c.start[s]; k < c.start[s+1]; k++ {
			if comp[c.next[k]] != comp[s] {
				leaves[comp[s]] = true
			}
		}
	}
	byComp := map[int]int{} // component -> index in classes
	var classes [][]int
	for s := 0; s < c.n; s++ {
		if leaves[comp[s]] {
			continue
		}
		i, ok := byComp[comp[s]]
		if !ok {
			i = len(classes)
			byComp[comp[s]] = i
			classes = append(classes, nil)
		}
		classes[i] = append(classes[i], s)
	}
	return classes
}

// scc labels the strongly connected components of the chain's graph.
func (c *chain) scc() (comp []int, ncomp int) { return scc.Tarjan(c.n, c.start, c.next) }

// reachable returns, in increasing order, the states reachable from the
// support of d0 (including it).
func (c *chain) reachable(d0 []float64) []int {
	seen := make([]bool, c.n)
	var queue []int
	for s, p := range d0 {
		if p > 0 {
			seen[s] = true
			queue = append(queue, s)
		}
	}
	for len(queue) > 0 {
		s := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for k := c.start[s]; k < c.start[s+1]; k++ {
			if j := c.next[k]; !seen[j] {
				seen[j] = true
				queue = append(queue, int(j))
			}
		}
	}
	var out []int
	for s, ok := range seen {
		if ok {
			out = append(out, s)
		}
	}
	return out
}
