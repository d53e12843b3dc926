// Package taxi is the infinite-horizon Taxi world of the paper's Section 5
// (after Dietterich's Taxi), with the dynamics of the authors' code, and the
// six tabular policies pi14 ... pi19 the authors evaluated on it.
//
// The taxi drives on a 5x5 grid without inner walls. Passengers wait at the
// four corners (0,0), (0,4), (4,0), (4,4) (corner i is bit i of a 4-bit
// mask). Each step the taxi takes one of six actions:
//
//	0: x+1   1: y+1   2: x-1   3: y-1   (a move off the grid stays in place)
//	4: pick up                          5: drop off
//
// A pick-up at a corner whose passenger is waiting clears that corner's bit
// and draws the passenger's destination uniformly among the three other
// corners; this also happens when the taxi is already carrying someone (the
// earlier passenger is replaced). A drop-off while carrying empties the
// taxi and pays +20 at the destination, -1 elsewhere. Every other step,
// including pick-ups and drop-offs of an empty taxi, pays -1.
//
// After the action's effect, every corner updates independently: a waiting
// passenger leaves with probability (0.05, 0.1, 0.1, 0.05) and an empty
// corner gets a new passenger with probability (0.3, 0.05, 0.1, 0.2), in
// corner order. The update applies to the mask after the pick-up cleared
// its bit, so a corner just served can get a new passenger on the same step
// (the authors' step() calls change_passenger_status() after the action).
//
// The state is (x, y, mask, status), status 4 meaning empty and 0..3
// carrying a passenger to that corner, encoded as
//
//	s = status + 5*(mask + 16*(5*x + y)),   2000 states.
//
// The reset draws x, y uniformly in 0..4, the mask uniformly in 0..15, and
// starts empty. There is no terminal state: the task is continuing.
//
// The embedded policies are the authors' CSV files (state,p0..p5, one row per
// state). With gamma = 1 and 400 steps from the reset distribution, pi19
// (DefaultTarget) has normalised value -0.141180 (package mdp).
//
// References:
//
//	Liu, Li, Tang, Zhou. Breaking the Curse of Horizon: Infinite-Horizon
//	Off-Policy Estimation. NeurIPS 2018. Section 5, "Taxi environment".
//	Dietterich. Hierarchical reinforcement learning with the MAXQ value
//	function decomposition. JAIR 13, 2000.
package taxi
