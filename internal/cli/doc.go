// Package cli implements the ihope command line: one file per verb (demo,
// estimate, sample, ...), each with an options struct and a run function
// that tests call directly. Results go to stdout, progress and messages to
// stderr; exit code 0 is success, 1 a data or runtime error, 2 a usage
// error.
package cli
