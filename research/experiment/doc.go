// Package experiment is the framework that runs experiments: grids of
// (setting x seed) cells computed in parallel, appended to a results file
// as they finish (package results), and summarised as mean squared
// errors over seeds for the figures (package figure). It knows no
// experiment itself: package paper registers the paper's.
//
// # Experiments
//
// An Experiment is a named list of panels (one figure each); a Panel is a
// list of settings along an x axis (n, T, gamma, the behavior policy, ...);
// a Setting computes one cell per seed. A Panel is the description the
// figures use (results.PanelOf) with settings that compute; Describe
// gives that description alone. Experiments are found by name in a
// registry (Register, Lookup, Names); a package adds one by registering
// an Experiment value in an init function.
//
// # Running
//
// A Runner runs the cells of an experiment that its results file does not
// hold yet, Workers at a time, and appends each one as soon as it is done;
// Runner.Quick selects the experiment's tiny grid and a results file of
// its own, Runner.Seeds the number of seeds. Cancelling the context stops
// the run with the finished cells saved; running again computes the rest.
//
// # Randomness and reproducibility
//
// A cell draws every random number from Cell.Rand(stream), a PCG seeded by
// the FNV-1a hash of (experiment, stream) and the seed, so its numbers do
// not depend on the worker count or on the order in which cells run.
// Quantities that do not depend on the seed (the exact truth of a
// setting) are computed once per run with Cell.Memo. Settings of different
// panels that are the same computation (the default setting appears in
// every panel) share a Key and are computed once per seed.
//
// # Results file
//
// The results of experiment NAME live in DIR/NAME.jsonl (DIR/NAME.quick.jsonl
// in quick mode, Runner.Quick), one JSON line per cell, written as soon as
// the cell is done; package results describes the format and summarises
// it. A rerun reads the file, drops a torn last line (the trace of a
// kill), skips the cells present and computes the rest. After a complete
// run the file is rewritten in canonical order (panel, setting, seed in
// grid order), so an interrupted and resumed run ends with the same bytes
// as an uninterrupted one.
package experiment
