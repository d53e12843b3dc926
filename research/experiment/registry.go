package experiment

import (
	"sort"
	"sync"
)

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
