// Package figure draws the figures of an experiment's results file with
// gonum/plot: one PNG and one SVG per panel.
//
// An MSE panel shows, against the varied parameter, the mean squared
// error over seeds of every estimator on a log axis, with a translucent
// band for the 5%-95% range of that mean over bootstrap resamples of the
// seeds (results.SummarizeMSE). Each estimator keeps one colour and
// marker in every figure (EstimatorStyle). A metric panel shows a scalar's
// mean over seeds (say the total-variation distance of the learned
// stationary distribution) with its band and an optional exact reference
// curve; a scatter panel shows two vectors of one cell against each other
// with the diagonal (the paper's Figure 1(d)). Legends sit to the right of
// the plot, take at most a quarter of the figure's width (long labels
// wrap) and name each estimator as the command line does. Labels and
// titles draw x_y and x^y as sub- and superscripts (Scripts).
//
// For the HTML report of "ihope estimate --report", Forest draws each
// estimator's estimate and interval for one target policy, and Weights
// the distribution of an estimator's weights with its effective sample
// size.
//
// Figures are drawn from the results file alone, so "ihope plot DIR"
// redraws them without rerunning anything. The package needs only the
// results schema (package results) and gonum/plot: drawing links no
// simulator and no estimator.
package figure
