package experiment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Experiment is a named grid of panels. Register it with Register; the
// CLI (ihope experiment NAME) and the figures find it by Name.
type Experiment struct {
	// Name is the command-line name, e.g. "taxi-average".
	Name string
	// Description is one line for "ihope experiment list".
	Description string
	// Seeds is the default number of seeds of a full run; QuickSeeds the
	// number in --quick mode. Zero means 100 and 2.
	Seeds, QuickSeeds int
	// Panels builds the grid; quick asks for the tiny grid of --quick.
	// It must return the same panels, settings and order every time.
	Panels func(quick bool) ([]Panel, error)
}

// DefaultSeeds returns the number of seeds run when the user gives none.
func (e *Experiment) DefaultSeeds(quick bool) int {
	if quick {
		if e.QuickSeeds > 0 {
			return e.QuickSeeds
		}
		return 2
	}
	if e.Seeds > 0 {
		return e.Seeds
	}
	return 100
}

// Kind says how a panel is summarised and drawn.
type Kind string

const (
	// KindMSE panels hold estimator records; the figure shows the mean
	// squared error over seeds against X, one line per estimator.
	KindMSE Kind = "mse"
	// KindMetric panels hold a scalar Metric per cell; the figure shows
	// its mean over seeds against X, with an optional exact Reference
	// metric drawn as a line.
	KindMetric Kind = "metric"
	// KindScatter panels hold two vectors per cell; the figure shows the
	// pairs (ScatterX[i], ScatterY[i]) of the first seed and the diagonal.
	KindScatter Kind = "scatter"
)

// Panel is one figure: a list of settings along an x axis.
type Panel struct {
	// Name is a short id used in cell keys and figure file names, e.g.
	// "n", "behavior", "T". Unique within the experiment.
	Name string
	// Title names the experiment and the settings held fixed.
	Title string
	// XName is the varied parameter as stored in the results file.
	XName string
	// XLabel and YLabel are axis labels a reader understands without
	// the paper; YLabel may be empty for the kind's default.
	XLabel, YLabel string
	// LogX draws the x axis on a log scale.
	LogX bool
	// Kind selects the summary and the figure.
	Kind Kind
	// Metric is the scalar drawn by a KindMetric panel, MetricLabel its
	// legend entry; Reference, if set, is a metric known exactly (the
	// same in every seed) drawn as a line, with ReferenceLabel.
	Metric, MetricLabel       string
	Reference, ReferenceLabel string
	// Estimator, if set, is the estimator a metric or scatter panel is
	// about; the figure uses its colour.
	Estimator string
	// LinearY draws a metric panel's y axis linearly (default: log scale
	// when every value is positive). MSE panels are always log scale.
	LinearY bool
	// ScatterX and ScatterY name the vectors of a KindScatter panel.
	ScatterX, ScatterY string
	// MaxSeeds, if positive, runs at most this many seeds (a scatter
	// needs one).
	MaxSeeds int
	// KeepVectors keeps the cells' Vectors in this panel's lines; other
	// panels drop them to keep the results file small.
	KeepVectors bool
	// Settings are the points of the x axis, in drawing order.
	Settings []Setting
}

// Setting is one point of a panel's x axis.
type Setting struct {
	// ID identifies the setting within its panel, stably across runs,
	// e.g. "n=100". Cells are keyed by panel, ID and seed.
	ID string
	// X is the x coordinate; for a categorical axis, the position.
	X float64
	// Tick, if not empty, labels X on a categorical axis.
	Tick string
	// Key identifies the computation: settings of any panel with the
	// same non-empty Key run once per seed and share the outcome (e.g.
	// the default setting appears in every panel of a figure). Empty
	// means the setting shares with nothing.
	Key string
	// Run computes one cell. It must draw all randomness from c.Rand and
	// return the same outcome for the same (experiment, stream, seed),
	// whatever else runs concurrently.
	Run func(ctx context.Context, c *Cell) (*Outcome, error)
}

// Outcome is what a cell computes.
type Outcome struct {
	// Truth is the quantity estimated, TruthSE its standard error (0 when
	// exact) and TruthMethod "exact" or "monte-carlo".
	Truth, TruthSE float64
	TruthMethod    string
	// Records holds one entry per estimator.
	Records []Record
	// Metrics and Vectors hold anything else the figures need.
	Metrics map[string]float64
	Vectors map[string][]float64
}

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
	return newRand(c.Experiment, stream, c.Seed)
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

var (
	registryMu sync.Mutex
	registry   = map[string]*Experiment{}
)

// Register adds an experiment to the registry. It panics on a duplicate
// or empty name, a programmer's mistake.
func Register(e *Experiment) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if e.Name == "" || e.Panels == nil {
		panic("experiment: Register needs a name and panels")
	}
	if _, dup := registry[e.Name]; dup {
		panic("experiment: " + e.Name + " registered twice")
	}
	registry[e.Name] = e
}

// Lookup returns the registered experiment of that name.
func Lookup(name string) (*Experiment, bool) {
	registryMu.Lock()
	defer registryMu.Unlock()
	e, ok := registry[name]
	return e, ok
}

// Names returns the registered experiment names, sorted.
func Names() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// checkPanels verifies the grid a Panels function returned.
func checkPanels(exp string, panels []Panel) error {
	seen := map[string]bool{}
	for _, p := range panels {
		if p.Name == "" || strings.ContainsAny(p.Name, "/ ") {
			return fmt.Errorf("experiment %s: bad panel name %q", exp, p.Name)
		}
		if seen[p.Name] {
			return fmt.Errorf("experiment %s: panel %q twice", exp, p.Name)
		}
		seen[p.Name] = true
		switch p.Kind {
		case KindMSE, KindMetric, KindScatter:
		default:
			return fmt.Errorf("experiment %s: panel %s has unknown kind %q", exp, p.Name, p.Kind)
		}
		var ids []string
		for _, s := range p.Settings {
			if s.ID == "" || s.Run == nil {
				return fmt.Errorf("experiment %s: panel %s has a setting without ID or Run", exp, p.Name)
			}
			if slices.Contains(ids, s.ID) {
				return fmt.Errorf("experiment %s: panel %s: setting %q twice", exp, p.Name, s.ID)
			}
			ids = append(ids, s.ID)
		}
	}
	return nil
}
