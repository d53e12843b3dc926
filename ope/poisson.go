package ope

import "math"

// The Poisson bootstrap (Hanley and MacGibbon 2006; Chamandy, Muralidharan,
// Najmi, Naidu 2012, "Estimating uncertainty for massive data streams")
// gives every episode, in every resample, an independent Poisson(1)
// multiplicity instead of drawing m episodes with replacement. A
// multiplicity depends only on the seed, the episode's id and the
// resample's index, so a stream over shards, or any machine of a cluster,
// computes each episode's share of every resample without knowing the
// other episodes or how many there are. As m grows the Poisson resample
// approaches the multinomial one (its size m' is Poisson(m) rather than m).

// PoissonCount returns the multiplicity of the episode with the given id in
// bootstrap resample r (0, 1, ...) under seed: a Poisson(1) draw by
// inversion of its distribution function from the uniform
//
//	u = (x >> 11) 2^-53,   x = fmix64(h + (r+1) 0x9e3779b97f4a7c15),
//	h = fnv1a64(id) XOR fmix64(seed + 0x9e3779b97f4a7c15),
//
// fmix64 being SplitMix64's output function (Steele, Lea, Flood 2014) and
// fnv1a64 the 64-bit FNV-1a hash of the id's bytes. So for a fixed id and
// seed the uniforms are the outputs of a SplitMix64 generator seeded with
// h. Both functions are fixed here (never hash/maphash, whose seed differs
// between processes), so every process, machine and version gives the
// same counts.
func PoissonCount(seed uint64, id string, r int) int {
	return poisson1(poissonUniform(poissonKey(seed, id), r))
}

// PoissonCounts sets mult[r] to PoissonCount(seed, id, r) for every r <
// len(mult), hashing the id once.
func PoissonCounts(seed uint64, id string, mult []int) {
	h := poissonKey(seed, id)
	for r := range mult {
		mult[r] = poisson1(poissonUniform(h, r))
	}
}

// BlockCounts sets mult[r] to the multiplicity of block b (steps b L to
// (b+1) L - 1) of the episode with the given id in resample r: the
// Poisson bootstrap of one long episode cut into blocks (BlockSums), each
// block a unit with its own Poisson(1) draws. Block b's key is the
// episode's mixed with b, so no two blocks share their draws, and they
// differ from the episode's own (PoissonCounts).
func BlockCounts(seed uint64, id string, b int, mult []int) {
	h := fmix64(poissonKey(seed, id) ^ fmix64(uint64(b)+blockSalt))
	for r := range mult {
		mult[r] = poisson1(poissonUniform(h, r))
	}
}

// blockSalt separates BlockCounts's keys from PoissonCounts's.
const blockSalt = 0x626c6f636b73 // "blocks"

const golden = 0x9e3779b97f4a7c15

// poissonKey is h of PoissonCount.
func poissonKey(seed uint64, id string) uint64 {
	h := uint64(14695981039346656037) // FNV-1a offset basis
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211 // FNV prime
	}
	return h ^ fmix64(seed+golden)
}

// poissonUniform is u of PoissonCount, in [0, 1).
func poissonUniform(h uint64, r int) float64 {
	return float64(fmix64(h+uint64(r+1)*golden)>>11) * 0x1p-53
}

// fmix64 is SplitMix64's output function.
func fmix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// poisson1 returns the Poisson(1) quantile of u: the least k with
// P(K <= k) > u, summing e^-1 / j! (exact up to rounding of the
// distribution function, whose tail beyond k = 18 is below 2^-53).
func poisson1(u float64) int {
	p := 1 / math.E
	cdf := p
	k := 0
	for u >= cdf && k < 30 {
		k++
		p /= float64(k)
		cdf += p
	}
	return k
}
