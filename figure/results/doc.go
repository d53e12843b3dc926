// Package results is the schema of an experiment's results: the panels
// (one figure each, Panel), the results file (one JSON line per cell,
// Line), and the summaries the figures draw (SummarizeMSE,
// SummarizeMetric). It computes nothing and imports no simulator, so
// drawing or summarising a results file (package figure, "ihope plot")
// needs only this package; running an experiment is package experiment's
// job.
//
// # Results file
//
// The results of experiment NAME live in DIR/NAME.jsonl (DIR/NAME.quick.jsonl
// for the quick grid, FileName): JSON lines, one line per cell, each
// written with a single write as soon as the cell is done (Appender), so a
// killed run loses only the cells in flight. A line holds
//
//	experiment    experiment name
//	panel         panel name (the figure), e.g. "n"
//	setting       setting id within the panel, e.g. "n=100"
//	x_name, x     the varied parameter and its value (position on a
//	              categorical axis)
//	x_tick        the tick label of a categorical axis (optional)
//	seed          0, 1, ...
//	truth         the quantity estimated (the normalised T-step value)
//	truth_se      its standard error: 0 when exact
//	truth_method  "exact" or "monte-carlo"
//	truths        (optional) the truth of every estimand the records
//	              may target, by name ("horizon", "long-run")
//	records       one per estimator: estimator, estimate, sq_error =
//	              (estimate - truth)^2, and error when the estimator failed
//	              (estimate and sq_error are then "NaN"); optionally the
//	              estimand it targets (its sq_error is then against that
//	              estimand's truth in truths), and its interval low, high
//	              and how it was computed (interval: "bootstrap", "wald")
//	metrics       named scalars (e.g. "tv", "var_mc")
//	vectors       named vectors, kept only in panels that draw them
//	              (e.g. "d_hat" and "d_true" for the scatter)
//
// Non-finite numbers are written as the strings "NaN", "+Inf", "-Inf"
// (Float). A cell is identified by panel/setting/seed (CellKey). Read
// drops a torn last line (the trace of a kill) and reports it, so a rerun
// can skip the cells present and compute the rest. After a complete run
// the file is rewritten in canonical order (panel, setting, seed in grid
// order; WriteCanonical), so an interrupted and resumed run ends with the
// same bytes as an uninterrupted one. Lines of seeds beyond the requested
// number are kept, and all seeds in the file are summarised.
//
// # Summaries
//
// SummarizeMSE gives, per estimator and setting, the mean squared error
// over seeds and the 5%-95% range of that mean over bootstrap resamples of
// the seeds (fixed resampling seed, so redrawing gives the same band).
// SummarizeMetric does the same for a scalar metric. CheckTruth warns when
// a Monte Carlo truth's standard error exceeds a tenth of the smallest
// root-MSE drawn. InferPanels rebuilds panels from the lines alone, for a
// results file of an experiment the build does not know.
package results
