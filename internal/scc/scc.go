// Package scc labels the strongly connected components of a sparse
// directed graph, the one routine the exact solvers (package mdp) and
// the tabular value models (package value) both need to find a chain's
// closed classes.
package scc

// Tarjan labels the strongly connected components of the graph whose
// node s has edges to next[start[s]:start[s+1]] (Tarjan's algorithm,
// iterative so that long chains cannot exhaust the stack). comp[s] is the
// component of s, numbered 0..ncomp-1 in the order Tarjan's algorithm
// completes them (a component is completed after every component it
// reaches).
func Tarjan(n int, start, next []int32) (comp []int, ncomp int) {
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
		call = append(call, frame{root, int(start[root])})
		counter++
		index[root], low[root] = counter, counter
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			s := f.s
			if f.k < int(start[s+1]) {
				j := int(next[f.k])
				f.k++
				if index[j] == 0 {
					counter++
					index[j], low[j] = counter, counter
					stack = append(stack, j)
					onStack[j] = true
					call = append(call, frame{j, int(start[j])})
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
