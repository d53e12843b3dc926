// Package testsets says which of ihope's three test sets a run of go test
// includes, so that every package decides it the same way:
//
//   - the everyday set, always: what a contributor runs after each change
//     (go test ./..., a few minutes on two cores). A slow statistical test
//     has a smaller version here (fewer seeds with a looser bound, a
//     smaller log, one case of several) whose assertion can still fail.
//   - the statistical set, with IHOPE_STAT=1: the full versions of those
//     tests (more seeds, tighter bounds, every case), which CI also runs
//     (go test ./ope/ ./ratio/ ... with IHOPE_STAT=1; see .ci/run).
//   - the long sweeps, with IHOPE_LONG=1: the tables the documentation
//     quotes (hours on two cores). IHOPE_LONG=1 includes the statistical
//     set.
//
// The sets are chosen by environment variables, not build tags, so that
// every test compiles and is vetted in the everyday run, and go test's
// cache, which records the variables a test reads, reruns a package when
// one changes.
package testsets

import "os"

// Stat reports whether the statistical set runs: IHOPE_STAT or
// IHOPE_LONG is set to anything but "" or "0".
func Stat() bool { return on("IHOPE_STAT") || Long() }

// Long reports whether the long sweeps run (IHOPE_LONG set to anything but
// "" or "0").
func Long() bool { return on("IHOPE_LONG") }

func on(name string) bool {
	v := os.Getenv(name)
	return v != "" && v != "0"
}
