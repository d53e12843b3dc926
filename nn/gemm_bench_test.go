package nn

import (
	"math/rand/v2"
	"testing"
)

func benchGemm(b *testing.B, rows, cols, kk int, trans bool) {
	rng := rand.New(rand.NewPCG(3, 0))
	fill := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		return x
	}
	a, bm, c := fill(rows*kk), fill(kk*cols), fill(rows*cols)
	sa, sq := kk, 1
	if trans {
		sa, sq = 1, rows
	}
	b.SetBytes(int64(8 * rows * cols * kk)) // "bytes" = multiply-adds x 8
	b.ResetTimer()
	for range b.N {
		gemm(rows, cols, kk, a, sa, sq, bm, cols, c, cols, nil)
	}
}

// BenchmarkGemm: the products of one training step of a 64-64 hidden
// network on 512 rows: forward Z = A W and backward dW = A^T dZ.
func BenchmarkGemm(b *testing.B) {
	b.Run("NN-512x64x64", func(b *testing.B) { benchGemm(b, 512, 64, 64, false) })
	b.Run("TN-64x64x512", func(b *testing.B) { benchGemm(b, 64, 64, 512, true) })
	b.Run("Go-NN-512x64x64", func(b *testing.B) { withGo(func() { benchGemm(b, 512, 64, 64, false) }) })
}

func BenchmarkExpTo(b *testing.B) {
	x := make([]float64, 4096)
	for i := range x {
		x[i] = -float64(i) / 500
	}
	y := make([]float64, len(x))
	b.SetBytes(int64(8 * len(x)))
	for range b.N {
		ExpTo(y, x)
	}
}

func BenchmarkTanhTo(b *testing.B) {
	x := make([]float64, 4096)
	for i := range x {
		x[i] = float64(i-2048) / 500
	}
	y := make([]float64, len(x))
	b.SetBytes(int64(8 * len(x)))
	for range b.N {
		TanhTo(y, x)
	}
}
