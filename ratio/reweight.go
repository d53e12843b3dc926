package ratio

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
)

// Reweighting aggregates many reweightings of one dataset's episodes, as
// an episode bootstrap needs: the distinct (s, s') pairs and each step's
// place among them are found once, so a resample given as episode
// multiplicities is aggregated with a few multiply-adds per step and no
// exponentials, sorting or hashing. Counts(mult) equals Aggregate on the
// dataset that repeats episode i mult[i] times (up to the order of
// floating-point sums).
//
// A Reweighting is read-only after construction and safe for concurrent
// use.
type Reweighting struct {
	nS      int
	gamma   float64
	edges   []Edge  // distinct (From, To) pairs of the whole dataset
	epStart []int   // steps of episode i are epStart[i]:epStart[i+1]
	edge    []int32 // per step: index into edges, -1 without a next state
	rho     []float64
	rhoBeta []float64
	state   []int32
	disc    []float64 // gamma^t per step
	first   []int32   // s_0 of every episode
}

// NewReweighting prepares d for repeated aggregation with discount gamma.
// It checks d as Aggregate does.
func NewReweighting(d *dataset.Dataset, gamma float64) (*Reweighting, error) {
	// Aggregate validates the data and finds the distinct pairs.
	c, err := Aggregate(d, gamma)
	if err != nil {
		return nil, err
	}
	nS := d.NumStates
	r := &Reweighting{nS: nS, gamma: gamma, edges: c.Edges}
	// Index the pairs by From (Aggregate groups them by From).
	start := make([]int, nS+1)
	for _, e := range c.Edges {
		start[e.From+1]++
	}
	for s := 0; s < nS; s++ {
		start[s+1] += start[s]
	}
	n := d.NumSteps()
	m := d.NumEpisodes()
	r.epStart = d.Start
	r.edge = make([]int32, n)
	r.rho = make([]float64, n)
	r.rhoBeta = make([]float64, n)
	r.state = d.State
	r.disc = d.Discounts(gamma) // as Aggregate's Norm
	r.first = make([]int32, m)
	for i := range m {
		lo, hi := d.Span(i)
		if hi > lo {
			r.first[i] = d.State[lo]
		}
		g := 1.0
		for k := lo; k < hi; k++ {
			g1 := g * gamma
			r.edge[k] = -1
			if next, ok := d.NextState(i, k); ok {
				j := start[d.State[k]]
				for c.Edges[j].To != next {
					j++
				}
				r.edge[k] = int32(j)
				r.rho[k] = g1
				r.rhoBeta[k] = g1 * math.Exp(d.LogTarget[k]-d.LogBehavior[k])
			}
			g = g1
		}
	}
	return r, nil
}

// Counts returns the aggregated transitions of the dataset in which
// episode i appears mult[i] times.
func (r *Reweighting) Counts(mult []int) (*Counts, error) {
	if len(mult) != len(r.first) {
		return nil, fmt.Errorf("ratio: %d multiplicities for %d episodes", len(mult), len(r.first))
	}
	w := make([]float64, 2*len(r.edges))
	wt, rw := w[:len(r.edges)], w[len(r.edges):]
	c := &Counts{NumStates: r.nS, Norm: make([]float64, r.nS)}
	if r.gamma < 1 {
		c.Restart = make([]float64, r.nS)
	}
	for i, m := range mult {
		if m == 0 {
			continue
		}
		fm := float64(m)
		if c.Restart != nil && r.epStart[i+1] > r.epStart[i] {
			c.Restart[r.first[i]] += fm
		}
		for k := r.epStart[i]; k < r.epStart[i+1]; k++ {
			c.Norm[r.state[k]] += fm * r.disc[k]
			if j := r.edge[k]; j >= 0 {
				wt[j] += fm * r.rho[k]
				rw[j] += fm * r.rhoBeta[k]
			}
		}
	}
	c.Edges = make([]Edge, 0, len(r.edges))
	for j, e := range r.edges {
		if wt[j] != 0 {
			c.Edges = append(c.Edges, Edge{From: e.From, To: e.To, Weight: wt[j], RatioWeight: rw[j]})
		}
	}
	return c, nil
}
