package experiment

import (
	"hash/fnv"
	"math/rand/v2"
	"sync"
)

// Cell is the context of one computation: the experiment, the seed, and
// the run's shared caches.
type Cell struct {
	Experiment string
	Seed       int
	memo       *memo
	seedMemo   *memo
}

// Rand returns a generator determined by the experiment, the stream name
// and the seed only, so a cell's numbers do not depend on the worker that
// runs it or on what ran before. Different stream names give independent
// streams; a stream name that leaves out a parameter (say n) gives the
// same numbers for every value of it, which makes the n = 30 dataset of a
// seed the first 30 episodes of its n = 800 dataset.
func (c *Cell) Rand(stream string) *rand.Rand {
	return Rand(c.Experiment, stream, c.Seed)
}

// Rand returns the generator of (experiment, stream, seed), the one
// Cell.Rand gives a cell of that experiment and seed: a PCG seeded with
// the FNV-1a hash of the experiment and stream names and the seed. A
// computation shared by all seeds (a Monte Carlo truth under Cell.Memo)
// draws from it with a seed of its own choosing.
func Rand(experiment, stream string, seed int) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(experiment))
	h.Write([]byte{0})
	h.Write([]byte(stream))
	return rand.New(rand.NewPCG(h.Sum64(), uint64(seed)))
}

// NewCell returns a cell of experiment at seed outside a Runner, for
// tests and benchmarks of a Setting's Run: its Memo and SeedMemo cache as
// in a run. Cells made from it by WithSeed share its Memo.
func NewCell(experiment string, seed int) *Cell {
	return &Cell{Experiment: experiment, Seed: seed, memo: &memo{}, seedMemo: &memo{}}
}

// WithSeed returns a cell of the same run at another seed: it shares c's
// Memo and has a SeedMemo of its own (none if c has none).
func (c *Cell) WithSeed(seed int) *Cell {
	d := &Cell{Experiment: c.Experiment, Seed: seed, memo: c.memo}
	if c.seedMemo != nil {
		d.seedMemo = &memo{}
	}
	return d
}

// Memo returns f's value, computing it once per key for the whole run
// (all cells, all workers). Use it for quantities that do not depend on
// the seed, such as the exact truth of a setting. f must be deterministic.
func (c *Cell) Memo(key string, f func() (any, error)) (any, error) {
	if c.memo == nil {
		return f()
	}
	return c.memo.get(key, f)
}

// SeedMemo returns f's value, computing it once per key for this cell's
// seed. The value is dropped when the seed's last cell of the run is
// done, so it suits data that several cells of a seed share but that
// would not fit in memory for every seed at once, such as a pool of
// logged episodes whose prefixes are the datasets of the seed's cells.
// f must be deterministic.
func (c *Cell) SeedMemo(key string, f func() (any, error)) (any, error) {
	if c.seedMemo == nil {
		return f()
	}
	return c.seedMemo.get(key, f)
}

// memo is a concurrent once-per-key cache.
type memo struct {
	mu sync.Mutex
	m  map[string]*memoEntry
}

type memoEntry struct {
	once sync.Once
	v    any
	err  error
}

func (m *memo) get(key string, f func() (any, error)) (any, error) {
	m.mu.Lock()
	if m.m == nil {
		m.m = make(map[string]*memoEntry)
	}
	e, ok := m.m[key]
	if !ok {
		e = &memoEntry{}
		m.m[key] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.v, e.err = f() })
	return e.v, e.err
}

// seedMemos holds one memo per seed of a run and drops it once the
// seed's jobs are all done (the jobs are seed-major, so about one seed's
// values are alive at a time).
type seedMemos struct {
	mu   sync.Mutex
	m    map[int]*memo
	left map[int]int
}

func newSeedMemos(jobs []*job) *seedMemos {
	s := &seedMemos{m: map[int]*memo{}, left: map[int]int{}}
	for _, j := range jobs {
		s.left[j.seed]++
	}
	return s
}

func (s *seedMemos) get(seed int) *memo {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.m[seed]
	if !ok {
		m = &memo{}
		s.m[seed] = m
	}
	return m
}

func (s *seedMemos) done(seed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.left[seed]--; s.left[seed] <= 0 {
		delete(s.m, seed)
	}
}
