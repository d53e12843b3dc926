package benchmark_test

import (
	"fmt"

	"github.com/ihope-ope/ihope/research/benchmark"
)

// The benchmark's worlds: each logs n episodes of T steps under its
// behavior and ranks a family of targets on that one log.
func ExampleSuite_Worlds() {
	suites, err := benchmark.Suites(benchmark.All)
	if err != nil {
		panic(err)
	}
	for _, s := range suites {
		worlds, err := s.Worlds(false)
		if err != nil {
			panic(err)
		}
		for _, w := range worlds {
			fmt.Printf("%-5s %-9s n = %3d, T = %3d, gamma = %4g, %2d targets: %s ... %s\n", s.Name, w.Name,
				w.N, w.T, w.Gamma, len(w.Targets), w.Targets[0].Name, w.Targets[len(w.Targets)-1].Name)
		}
	}
	// Output:
	// cobs  graph     n = 256, T =  16, gamma = 0.98, 10 targets: P(A0)=0.001 ... P(A0)=0.9
	// cobs  toymc     n = 128, T = 250, gamma = 0.99, 10 targets: P(Right)=0.001 ... P(Right)=0.9
	// cobs  modelfail n = 256, T =   2, gamma =    1, 10 targets: P(A0)=0.001 ... P(A0)=0.9
	// cobs  modelwin  n = 256, T =  20, gamma =    1, 10 targets: P(A0)=0.001 ... P(A0)=0.9
	// dice  gridwalk  n = 100, T = 100, gamma = 0.99,  6 targets: alpha=1 ... alpha=0.75
	// paper taxi      n = 200, T = 400, gamma =    1,  6 targets: pi14 ... pi19
	// paper ring      n =  20, T = 100, gamma =    1,  8 targets: P(R)=0.15 ... P(R)=0.85
}
