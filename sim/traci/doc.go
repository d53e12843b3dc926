// Package traci is a client for TraCI, the Traffic Control Interface of
// the SUMO traffic simulator, written over net without cgo or SUMO's own
// libraries. It covers what ihope's traffic-light environment (sim/sumo)
// needs: the version handshake, simulation steps, lane-area (E2) detector
// vehicle counts, traffic-light phase get/set, the simulation time, and
// closing; generic typed getters make further variables one line each.
//
// # Protocol
//
// TraCI runs over one TCP connection. Every message, in both directions,
// is a big-endian int32 holding the length of the whole message (the four
// length bytes included) followed by commands. A command is
//
//	ubyte length | ubyte id | content        (length = 2 + len(content) <= 255)
//	ubyte 0 | int32 length | ubyte id | content   (length = 6 + len(content))
//
// the second, long form being used when the short length would not fit
// in one byte. SUMO answers a message with one message holding, for each
// command in order, a status response (id, result 0x00 OK / 0x01 not
// implemented / 0xff error, and a string that carries SUMO's own message)
// followed by the command's result, if any. Strings are an int32 length
// and Latin-1 bytes.
//
// Several commands may travel in one message; SUMO executes them in order
// and answers once. A simulation step is the exception: SUMO 1.15 answers
// a message holding a step with the step's answer alone (the answers of
// the commands before it are lost, and the commands after it run before
// the step), so Batch sends every step in a message of its own and the
// commands between two steps together. Subscriptions make reading cheap:
// after SubscribeInts (for example the vehicle count of a lane-area
// detector, or the phase of a light), every step's answer carries the
// values and the client writes them where asked, at no extra round trip.
// A reinforcement-learning step of sim/sumo thus costs one round trip for
// the phase changes, if any, and one for the step with all its readings.
//
// # Processes
//
// Start launches sumo on a free loopback port with --remote-port, connects
// with retries and checks the version. The returned Process is always
// reaped: Close asks SUMO to close and waits for it, killing its process
// group if it does not exit in time; cancelling the context passed to
// Start kills it too, and on Linux SUMO is killed when the Go process
// dies (Pdeathsig), so an interrupted program leaves no simulator behind.
//
// References:
//
//	SUMO documentation, TraCI/Protocol and TraCI/Control-related commands,
//	https://sumo.dlr.de/docs/TraCI/Protocol.html
//	Krajzewicz, D., Erdmann, J., Behrisch, M., Bieker, L. (2012). Recent
//	development and applications of SUMO - Simulation of Urban MObility.
//	International Journal on Advances in Systems and Measurements 5.
package traci
