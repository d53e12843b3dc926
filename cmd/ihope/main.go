// Command ihope estimates how good a target policy would be from
// trajectories logged under another policy (off-policy evaluation), with
// the stationary density-ratio estimator of Liu et al. (2018) and the
// classic baselines. Run "ihope --help" for the verbs.
package main

import (
	"os"

	"github.com/ihope-ope/ihope/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr))
}
