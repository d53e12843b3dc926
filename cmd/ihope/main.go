// Command ihope estimates how good a target policy would be from
// trajectories logged under another policy (off-policy evaluation), with
// the stationary density-ratio estimator of Liu et al. (2018) and the
// classic baselines. Run "ihope --help" for the verbs.
package main

import (
	"os"

	"github.com/ihope-ope/ihope/internal/cli"
	"github.com/ihope-ope/ihope/internal/gcstart"
)

// gcFree is the memory a run uses before its first garbage collection: a
// short run (the paper's Taxi seed allocates about 20 MB) never collects,
// a large one collects from there on as GOGC paces it (and the CLI
// collects once after reading a log of 2^18 steps or more).
const gcFree = 64 << 20

func main() {
	gcstart.Defer(gcFree)
	os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr))
}
