// Package evaluate is ihope's application layer: it evaluates target
// policies on a log, or on shards of one, with a set of options, and
// returns the whole report — a row per estimator with its interval,
// bounds and diagnostics, the estimand notes, the warnings, the ranking
// of several policies, the verdicts against a baseline and the
// recommended estimate.
//
// The command line (ihope estimate) parses flags into Options and prints
// the Report; ihope-beam writes the report of its workers' statistics
// (StreamReport); the HTML report (Report.WriteHTML) and the Python
// package (which reads the JSON of Report.WriteJSON) draw from the same
// report. An evaluation in memory is
//
//	ev, err := evaluate.New(evaluate.Defaults())
//	d, err = ev.Prepare(d) // fits the behavior with Options.FitBehavior
//	rep, err := ev.Evaluate(d, "logs.csv", nil, nil)
//	rep.WriteText(os.Stdout)
//
// and one over shards read one at a time is ev.EvaluateShards.
package evaluate
