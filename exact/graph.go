package exact

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

// scc labels the strongly connected components of the chain's graph
// (Tarjan's algorithm, iterative so that long chains cannot exhaust the
// stack).
func (c *chain) scc() (comp []int, ncomp int) {
	n := c.n
	index := make([]int, n) // 0 = unvisited, else visit order + 1
	low := make([]int, n)
	onStack := make([]bool, n)
	comp = make([]int, n)
	var stack []int
	type frame struct{ s, k int }
	var call []frame
	counter := 0
	for root := 0; root < n; root++ {
		if index[root] != 0 {
			continue
		}
		call = append(call, frame{root, int(c.start[root])})
		counter++
		index[root], low[root] = counter, counter
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			s := f.s
			if f.k < int(c.start[s+1]) {
				j := int(c.next[f.k])
				f.k++
				if index[j] == 0 {
					counter++
					index[j], low[j] = counter, counter
					stack = append(stack, j)
					onStack[j] = true
					call = append(call, frame{j, int(c.start[j])})
				} else if onStack[j] {
					low[s] = min(low[s], index[j])
				}
				continue
			}
			// s is finished.
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].s
				low[p] = min(low[p], low[s])
			}
			if low[s] == index[s] {
				for {
					j := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[j] = false
					comp[j] = ncomp
					if j == s {
						break
					}
				}
				ncomp++
			}
		}
	}
	return comp, ncomp
}

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
