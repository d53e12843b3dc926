package ope

// notDefault lists the registered estimators that ihope estimate leaves
// out when no estimator is named, with the evidence of ihope benchmark
// (20 seeds, seven worlds; docs/benchmark/leaderboard.md): each has a
// self-normalised twin with a lower MSE against the exact truth in every
// world, and is still run when asked for by name.
var notDefault = map[string]string{
	// log10 MSE (is / wis): Graph -0.25 / -1.11, ToyMC -0.24 / -0.45,
	// ModelFail -1.52 / -2.25, ModelWin -2.382 / -2.385, GridWalk
	// -0.10 / -1.50, Taxi -0.71 / -1.69, ring -0.54 / -1.56.
	"is-trajectory": "wis-trajectory",
	// Graph -1.09 / -1.63, ToyMC -0.24 / -0.56, ModelFail -1.86 / -2.46,
	// ModelWin -2.11 / -2.74, GridWalk -0.24 / -2.33, Taxi -1.06 / -1.97,
	// ring -0.79 / -1.82.
	"is-stepwise": "wis-stepwise",
}

// Default reports whether the estimator belongs to the default set, what
// ihope estimate runs (where it applies) when no estimator is named:
// every estimator but plain importance sampling, which ihope benchmark
// shows dominated by its self-normalised form in every world (Dominated).
func (e Entry) Default() bool { return notDefault[e.Name] == "" }

// Dominated returns the estimator that ihope benchmark shows better than
// e in every world, for the estimators left out of the default set, and
// "" for the others.
func (e Entry) Dominated() string { return notDefault[e.Name] }
