package synthetic

import "math"

// mt19937 is numpy's legacy RandomState generator: the Mersenne Twister
// seeded from a 32-bit integer (init_genrand) and its standard normals by
// Marsaglia's polar method, the second of each pair kept for the next
// draw. SyntheticEnv draws its coefficients from RandomState(random_state);
// reproducing that stream gives the same world as SCOPE-RL's for the same
// seed, without shipping numbers of unclear origin.
type mt19937 struct {
	key      [624]uint32
	pos      int
	hasGauss bool
	gauss    float64
}

func newMT19937(seed uint32) *mt19937 {
	m := &mt19937{pos: 624}
	for i := range m.key {
		m.key[i] = seed
		seed = 1812433253*(seed^(seed>>30)) + uint32(i) + 1
	}
	return m
}

// uint32 returns the next tempered 32-bit output.
func (m *mt19937) uint32() uint32 {
	const (
		n, mid          = 624, 397
		matrix          = 0x9908b0df
		upper, lowerMsk = 0x80000000, 0x7fffffff
	)
	if m.pos == n {
		for i := 0; i < n; i++ {
			y := m.key[i]&upper | m.key[(i+1)%n]&lowerMsk
			v := m.key[(i+mid)%n] ^ y>>1
			if y&1 == 1 {
				v ^= matrix
			}
			m.key[i] = v
		}
		m.pos = 0
	}
	y := m.key[m.pos]
	m.pos++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// float64 returns a uniform draw in [0, 1) with 53 random bits
// (genrand_res53).
func (m *mt19937) float64() float64 {
	a, b := m.uint32()>>5, m.uint32()>>6
	return (float64(a)*67108864 + float64(b)) / 9007199254740992
}

// normal returns a standard normal draw (numpy's legacy_gauss).
func (m *mt19937) normal() float64 {
	if m.hasGauss {
		m.hasGauss = false
		return m.gauss
	}
	for {
		x1, x2 := 2*m.float64()-1, 2*m.float64()-1
		r2 := x1*x1 + x2*x2
		if r2 < 1 && r2 != 0 {
			f := math.Sqrt(-2 * math.Log(r2) / r2)
			m.gauss, m.hasGauss = f*x1, true
			return f * x2
		}
	}
}

// normals returns the next n standard normal draws, as
// RandomState.normal(size=n) gives them.
func (m *mt19937) normals(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = m.normal()
	}
	return x
}
