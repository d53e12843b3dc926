package results

// Kind says how a panel is summarised and drawn.
type Kind string

const (
	// KindMSE panels hold estimator records; the figure shows the mean
	// squared error over seeds against X, one line per estimator.
	KindMSE Kind = "mse"
	// KindMetric panels hold a scalar Metric per cell; the figure shows
	// its mean over seeds against X, with an optional exact Reference
	// metric drawn as a line.
	KindMetric Kind = "metric"
	// KindScatter panels hold two vectors per cell; the figure shows the
	// pairs (ScatterX[i], ScatterY[i]) of the first seed and the diagonal.
	KindScatter Kind = "scatter"
)

// Panel is one figure as the results file and the figures see it: what
// it shows and the settings along its x axis.
type Panel = PanelOf[Setting]

// PanelOf is a panel whose settings have type S. The figures and the
// summaries use Panel (S = Setting: an id and a position on the x axis);
// the experiment framework uses the same description with settings that
// also say how to compute their cells (experiment.Panel), and turns it
// into a Panel with experiment.Describe. The description is thus written
// once, and this package needs nothing that computes.
type PanelOf[S any] struct {
	// Name is a short id used in cell keys and figure file names, e.g.
	// "n", "behavior", "T". Unique within the experiment.
	Name string
	// Title names the experiment and the settings held fixed.
	Title string
	// XName is the varied parameter as stored in the results file.
	XName string
	// XLabel and YLabel are axis labels a reader understands without
	// the paper; YLabel may be empty for the kind's default.
	XLabel, YLabel string
	// LogX draws the x axis on a log scale.
	LogX bool
	// Kind selects the summary and the figure.
	Kind Kind
	// Metric is the scalar drawn by a KindMetric panel, MetricLabel its
	// legend entry; Reference, if set, is a metric known exactly (the
	// same in every seed) drawn as a line, with ReferenceLabel.
	Metric, MetricLabel       string
	Reference, ReferenceLabel string
	// Estimator, if set, is the estimator a metric or scatter panel is
	// about; the figure uses its colour.
	Estimator string
	// LinearY draws a metric panel's y axis linearly (default: log scale
	// when every value is positive). MSE panels are always log scale.
	LinearY bool
	// ScatterX and ScatterY name the vectors of a KindScatter panel.
	ScatterX, ScatterY string
	// MaxSeeds, if positive, runs at most this many seeds (a scatter
	// needs one).
	MaxSeeds int
	// KeepVectors keeps the cells' Vectors in this panel's lines; other
	// panels drop them to keep the results file small.
	KeepVectors bool
	// Settings are the points of the x axis, in drawing order.
	Settings []S
}

// Setting is one point of a panel's x axis.
type Setting struct {
	// ID identifies the setting within its panel, stably across runs,
	// e.g. "n=100". Cells are keyed by panel, ID and seed.
	ID string
	// X is the x coordinate; for a categorical axis, the position.
	X float64
	// Tick, if not empty, labels X on a categorical axis.
	Tick string
}
