// Package sumo is the paper's traffic-light domain (Section 5 and
// Appendix D): a road network simulated by SUMO, driven step by step
// through TraCI (package traci), formulated as a reinforcement-learning
// problem with a real-vector state and discrete actions.
//
// # Network and traffic
//
// Build writes a network to a directory and compiles it with SUMO's
// netconvert: a square grid of traffic-light junctions (one, the default,
// or 2x2), every road 200 m with three lanes each way (lane 0 straight
// and right, lane 1 straight, lane 2 left), lane-area (E2) detectors
// covering each incoming lane up to 1 m before its stop line, and one
// flow per route.
// Routes join two fringe nodes with at most one turn, and each spawns a
// vehicle in any second with its own fixed probability (Appendix D: "We
// control each route with a fixed probability (different from each route)
// every time step to generate a vehicle, to guarantee a randomized
// environment"). The traffic-light program has the four green phases
// (north-south straight, north-south left, east-west straight, east-west
// left), each lasting until the agent changes it, and the twelve 3-second
// yellow transitions between them, each handing over to its target green
// by itself.
//
// # The reinforcement-learning problem
//
// Sim is one SUMO run. Its state is, per light, the vehicle counts on the
// detectors of the straight lanes and of the left-turn lane of each of the
// four approaches (8 numbers per light); its action is the green phase of
// every light (4 per light, 4^L jointly); one step is 6 simulated seconds,
// the first 3 yellow when a light changes phase; its reward is minus the
// number of vehicles on the detectors. Every run starts with a warm-up of
// 300 s under a fixed-time plan, so the first logged state does not
// depend on the policy. A step costs two TraCI round trips when a light
// changes (one when none does): the phase changes, then the step, whose
// answer carries the detector counts and the lights' phases through
// subscriptions.
//
// Network.Sample logs a dataset (package dataset) of n episodes of T
// steps, each its own SUMO process with its own seed, several at once:
// steps carry the counts in Obs and NextObs (State = -1), the joint action
// in Action, and the exact log-probabilities of the action under the
// behavior and the target policy.
//
// # Policies
//
// LinearSoftmax is the paper's linear softmax policy with a 5% uniform
// mixture, so that every action has a positive probability; the same
// weights drive every light from its own counts. CEM trains it with the
// cross-entropy method. The shipped policies (policies.json, embedded)
// come from a 10-iteration CEM run on the single intersection: Target is
// the last iteration, Behavior(1..4) are iterations 6 to 9 (the paper's
// x-ticks 1-4 of Figure 4(c)). Their Monte Carlo evaluation is stored
// with them (Shipped().Evaluation): with 10 episodes of 400 steps, the
// target's average reward is -16.50 ± 0.45 and the uniform policy's
// -39.69 ± 3.77. To regenerate the file (about 80 s on 2 cores, with SUMO
// installed):
//
//	go generate ./env/sumo
//
// # SUMO
//
// SUMO is not a Go dependency: it must be installed (Debian and Ubuntu:
// apt-get install -y sumo, which provides sumo and netconvert; developed
// with SUMO 1.15.0). Without it, Build and Start return an error wrapping
// traci.ErrNotFound, whose text says how to install it, and the package's
// tests skip.
//
// References:
//
//	Liu, Q., Li, L., Tang, Z., Zhou, D. (2018). Breaking the curse of
//	horizon: Infinite-horizon off-policy estimation. NeurIPS. Section 5
//	and Appendix D.
//	Krajzewicz, D., Erdmann, J., Behrisch, M., Bieker, L. (2012). Recent
//	development and applications of SUMO - Simulation of Urban MObility.
//	International Journal on Advances in Systems and Measurements 5.
package sumo
