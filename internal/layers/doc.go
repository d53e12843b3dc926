// Package layers holds one test: that imports run only downwards through
// ihope's three rooms (docs/ARCHITECTURE.md). The library (every package
// outside sim/ and research/) links no world and no part of the research
// harness; the worlds under sim/ link no harness; and the Beam module
// links no internal/ package of the main module except through its
// public ones, and never the command line.
package layers
