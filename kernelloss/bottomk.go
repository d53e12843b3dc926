package kernelloss

import "sort"

// HashID returns the 64-bit FNV-1a hash of an episode id.
func HashID(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// Mix is SplitMix64's output function (Steele, Lea, Flood 2014).
func Mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// StepKey is the sampling key of step t of the episode whose id hashes
// to idHash, for a seed (a use's own salt added): a fixed function, so
// that every process and machine gives a step the same key.
func StepKey(seed, idHash uint64, t int) uint64 {
	return Mix(idHash ^ Mix(seed) + uint64(t+1)*0x9e3779b97f4a7c15)
}

// BottomK is a bottom-k sample of rows: the K rows of smallest key seen,
// each of Dim values, kept as a max-heap on the key. With keys that are a
// fixed hash of what a row is (StepKey), it is a uniform sample without
// replacement that is the same whatever order the rows come in and
// however they are split among partial samples (Merge).
type BottomK struct {
	K, Dim int
	Keys   []uint64
	Rows   []float64
}

func (s *BottomK) swap(i, j int) {
	s.Keys[i], s.Keys[j] = s.Keys[j], s.Keys[i]
	a, b := s.Rows[i*s.Dim:(i+1)*s.Dim], s.Rows[j*s.Dim:(j+1)*s.Dim]
	for k := range a {
		a[k], b[k] = b[k], a[k]
	}
}

// Admits reports whether a row of this key would enter the sample (so
// that a caller forms the row only then).
func (s *BottomK) Admits(key uint64) bool {
	return len(s.Keys) < s.K || s.K > 0 && key < s.Keys[0]
}

// Add offers a row with its key.
func (s *BottomK) Add(key uint64, row []float64) {
	if len(s.Keys) < s.K {
		s.Keys = append(s.Keys, key)
		s.Rows = append(s.Rows, row...)
		for i := len(s.Keys) - 1; i > 0; { // sift up
			p := (i - 1) / 2
			if s.Keys[p] >= s.Keys[i] {
				break
			}
			s.swap(i, p)
			i = p
		}
		return
	}
	if s.K == 0 || key >= s.Keys[0] {
		return
	}
	s.Keys[0] = key
	copy(s.Rows[:s.Dim], row)
	n := len(s.Keys)
	for i := 0; ; { // sift down
		l, big := 2*i+1, i
		if l < n && s.Keys[l] > s.Keys[big] {
			big = l
		}
		if l+1 < n && s.Keys[l+1] > s.Keys[big] {
			big = l + 1
		}
		if big == i {
			break
		}
		s.swap(i, big)
		i = big
	}
}

// Merge offers every row of o.
func (s *BottomK) Merge(o *BottomK) {
	for i, k := range o.Keys {
		s.Add(k, o.Rows[i*o.Dim:(i+1)*o.Dim])
	}
}

// Sorted returns the rows in increasing order of key.
func (s *BottomK) Sorted() []float64 {
	idx := make([]int, len(s.Keys))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return s.Keys[idx[a]] < s.Keys[idx[b]] })
	out := make([]float64, 0, len(s.Rows))
	for _, i := range idx {
		out = append(out, s.Rows[i*s.Dim:(i+1)*s.Dim]...)
	}
	return out
}
