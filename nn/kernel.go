package nn

import "math"

// RBFRow computes one row of a Gaussian (RBF) kernel matrix against n
// points and uses it twice without storing it: with
//
//	k_j = exp(c * sum_{t<d} (x[t*ld + j] - y[t])^2),   j < n, c <= 0,
//
// it adds k_j*v to acc[j] and returns sum_j k_j u[j]. The points are
// stored by coordinate (coordinate t of point j at x[t*ld+j]) so that
// consecutive points are consecutive in memory; d = len(y).
//
// This is the inner loop of the kernel loss of the density-ratio learner:
// with c = -1/(2h^2), u = v-weights Delta and K symmetric, the rows
// i = 0..m-1 against the points j > i accumulate K Delta from half of K.
// The exponential is ExpTo's; the sum over j uses four lanes (j mod 4)
// for the first n rounded down to a multiple of 4 points, summed as
// (l0 + l1) + (l2 + l3), then the rest, with the same bits with or without
// the assembly.
func RBFRow(n int, x []float64, ld int, y []float64, c float64, u []float64, v float64, acc []float64) float64 {
	d := len(y)
	if n <= 0 {
		return 0
	}
	if d == 0 || len(x) < (d-1)*ld+n || len(u) < n || len(acc) < n || ld < n {
		panic("nn: RBFRow slice lengths")
	}
	n4 := n &^ 3
	var l [4]float64
	j := 0
	if useAVX2 && n4 > 0 {
		rbfRowAVX2(n4, &x[0], ld, &y[0], d, c, &u[0], v, &acc[0], &l)
		j = n4
	} else {
		for ; j < n4; j++ {
			k := rbfOne(x, ld, y, c, j)
			l[j&3] = math.FMA(k, u[j], l[j&3])
			acc[j] = math.FMA(k, v, acc[j])
		}
	}
	s := (l[0] + l[1]) + (l[2] + l[3])
	for ; j < n; j++ {
		k := rbfOne(x, ld, y, c, j)
		s = math.FMA(k, u[j], s)
		acc[j] = math.FMA(k, v, acc[j])
	}
	return s
}

// rbfOne returns k_j of RBFRow.
func rbfOne(x []float64, ld int, y []float64, c float64, j int) float64 {
	s := 0.0
	for t, yt := range y {
		diff := x[t*ld+j] - yt
		s = math.FMA(diff, diff, s)
	}
	return exp1(s * c)
}
