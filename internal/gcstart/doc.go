// Package gcstart holds the garbage collector off at the start of a
// short-lived process.
//
// A Go program starts with a heap goal of 4 MB and collects every time the
// heap doubles, so a run that allocates a few tens of megabytes and ends
// (ihope estimate on the paper's Taxi seed: 80,000 steps, about 20 MB in
// all) spends about a seventh of its CPU time in collections that free
// memory it would never reuse. Defer turns the collector off until the
// heap reaches a bound, then hands it back to its usual pacing, so a large
// run keeps the peak memory GOGC gives it.
package gcstart
