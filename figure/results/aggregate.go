package results

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat"

	"github.com/ihope-ope/ihope/internal/quantile"
)

// BootstrapResamples is the number of seed resamples behind every band.
const BootstrapResamples = 2000

// Point summarises one series at one setting over the seeds.
type Point struct {
	Setting string
	X       float64
	Tick    string
	// Mean is the mean over seeds: the MSE for an estimator, the mean
	// metric otherwise. It is +Inf if any seed's value is +Inf.
	Mean float64
	// Lo and Hi are the 5% and 95% quantiles of the mean over
	// BootstrapResamples resamples of the seeds with replacement (a fixed
	// seed per point, so redrawing gives the same band).
	Lo, Hi float64
	// Seeds is the number of seeds with a value; Failed the number whose
	// estimator returned an error (left out of Mean).
	Seeds, Failed int
}

// Series is one line of a figure.
type Series struct {
	Name   string
	Points []Point
}

// exactMSE is the MSE (relative to the squared truth, when that exceeds
// 1) below which an estimate is exact up to rounding.
const exactMSE = 1e-20

// ExactMSE returns the MSE at or below which an estimator of panel p is
// exact up to rounding: 1e-20, times the largest squared truth of the
// panel's lines when that exceeds 1. An MSE of 0 has no logarithm, and
// rounding leaves exact estimators (a model-based estimate on the ring)
// MSEs of 1e-30 or so whose logarithms mean nothing: the figures draw such
// points on the bottom edge and the summaries print them as exact.
func ExactMSE(p Panel, lines []Line) float64 {
	truth := 0.0
	for _, l := range lines {
		if l.Panel == p.Name {
			truth = math.Max(truth, math.Abs(float64(l.Truth)))
		}
	}
	return exactMSE * math.Max(1, truth*truth)
}

// SummarizeMSE returns, for an MSE panel, one series per estimator in the
// order the estimators first appear, each with one point per setting in
// the panel's order (settings without lines are left out):
//
//	MSE(x) = (1/K) sum_k (estimate_k(x) - truth(x))^2   over seeds k.
func SummarizeMSE(p Panel, lines []Line) []Series {
	var names []string
	vals := map[string]map[string][]float64{} // estimator -> setting -> sq errors
	fails := map[string]map[string]int{}
	for _, l := range lines {
		if l.Panel != p.Name {
			continue
		}
		for _, r := range l.Records {
			if vals[r.Estimator] == nil {
				names = append(names, r.Estimator)
				vals[r.Estimator] = map[string][]float64{}
				fails[r.Estimator] = map[string]int{}
			}
			if r.Error != "" || math.IsNaN(float64(r.SqError)) {
				fails[r.Estimator][l.Setting]++
				continue
			}
			vals[r.Estimator][l.Setting] = append(vals[r.Estimator][l.Setting], float64(r.SqError))
		}
	}
	out := make([]Series, 0, len(names))
	for _, name := range names {
		s := Series{Name: name}
		for _, st := range settingsOf(p, lines) {
			v, f := vals[name][st.ID], fails[name][st.ID]
			if len(v) == 0 && f == 0 {
				continue
			}
			s.Points = append(s.Points, summarize(p.Name+"/"+st.ID+"/"+name, st, v, f))
		}
		out = append(out, s)
	}
	return out
}

// SummarizeMetric returns the series of a metric's mean over seeds, one
// point per setting that has it.
func SummarizeMetric(p Panel, lines []Line, metric string) Series {
	vals := map[string][]float64{}
	for _, l := range lines {
		if l.Panel != p.Name {
			continue
		}
		if v := l.Metric(metric); !math.IsNaN(v) {
			vals[l.Setting] = append(vals[l.Setting], v)
		}
	}
	s := Series{Name: metric}
	for _, st := range settingsOf(p, lines) {
		if v := vals[st.ID]; len(v) > 0 {
			s.Points = append(s.Points, summarize(p.Name+"/"+st.ID+"/"+metric, st, v, 0))
		}
	}
	return s
}

// settingsOf returns the panel's settings, or, for a panel unknown to
// the registry (no settings), those found in the lines ordered by X.
func settingsOf(p Panel, lines []Line) []Setting {
	if len(p.Settings) > 0 {
		return p.Settings
	}
	seen := map[string]bool{}
	var out []Setting
	for _, l := range lines {
		if l.Panel == p.Name && !seen[l.Setting] {
			seen[l.Setting] = true
			out = append(out, Setting{ID: l.Setting, X: float64(l.X), Tick: l.Tick})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].X < out[j].X })
	return out
}

func summarize(id string, st Setting, v []float64, failed int) Point {
	pt := Point{Setting: st.ID, X: st.X, Tick: st.Tick, Seeds: len(v), Failed: failed}
	if len(v) == 0 {
		pt.Mean, pt.Lo, pt.Hi = math.NaN(), math.NaN(), math.NaN()
		return pt
	}
	pt.Mean = stat.Mean(v, nil)
	pt.Lo, pt.Hi = BootstrapMean(v, BootstrapResamples, 0.05, seedOf(id))
	return pt
}

// BootstrapMean returns the alpha and 1-alpha quantiles of the mean of v
// over b resamples of v with replacement, drawn from a PCG with the given
// seed. Quantiles interpolate between order statistics (type 7).
func BootstrapMean(v []float64, b int, alpha float64, seed uint64) (lo, hi float64) {
	if len(v) == 0 || b <= 0 {
		return math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	means := make([]float64, b)
	for i := range means {
		s := 0.0
		for range v {
			s += v[rng.IntN(len(v))]
		}
		means[i] = s / float64(len(v))
	}
	slices.Sort(means)
	return quantile.Type7(means, alpha), quantile.Type7(means, 1-alpha)
}

func seedOf(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// CheckTruth returns a warning for each MSE panel whose Monte Carlo truth
// is not precise enough: the largest standard error of the truth must be
// at most a tenth of the smallest root-MSE drawn, or the error of the
// truth itself shows in the figure.
func CheckTruth(panels []Panel, lines []Line) []string {
	var warns []string
	for _, p := range panels {
		if p.Kind != KindMSE {
			continue
		}
		maxSE := 0.0
		for _, l := range lines {
			if l.Panel == p.Name {
				maxSE = math.Max(maxSE, float64(l.TruthSE))
			}
		}
		if maxSE == 0 {
			continue
		}
		minRMSE, who := math.Inf(1), ""
		for _, s := range SummarizeMSE(p, lines) {
			for _, pt := range s.Points {
				if r := math.Sqrt(pt.Mean); r > 0 && r < minRMSE {
					minRMSE, who = r, fmt.Sprintf("%s at %s", s.Name, pt.Setting)
				}
			}
		}
		if 10*maxSE > minRMSE {
			warns = append(warns, fmt.Sprintf(
				"panel %s: the Monte Carlo truth has standard error up to %.3g, more than a tenth of the smallest root-MSE %.3g (%s); that MSE is partly the truth's own error",
				p.Name, maxSE, minRMSE, who))
		}
	}
	return warns
}

// InferPanels builds panels from the lines alone, for a results file of an
// experiment this build does not know: MSE panels where there are
// records, scatter panels where there are two vectors, metric panels
// otherwise.
func InferPanels(lines []Line) []Panel {
	var out []Panel
	idx := map[string]int{}
	for _, l := range lines {
		if _, ok := idx[l.Panel]; ok {
			continue
		}
		idx[l.Panel] = len(out)
		p := Panel{Name: l.Panel, Title: l.Experiment + ": " + l.Panel, XName: l.XName, XLabel: l.XName}
		switch {
		case len(l.Records) > 0:
			p.Kind = KindMSE
		case len(l.Vectors) >= 2:
			p.Kind = KindScatter
			var names []string
			for n := range l.Vectors {
				names = append(names, n)
			}
			sort.Strings(names)
			p.ScatterX, p.ScatterY = names[0], names[1]
		default:
			p.Kind = KindMetric
			var names []string
			for n := range l.Metrics {
				names = append(names, n)
			}
			sort.Strings(names)
			if len(names) > 0 {
				p.Metric, p.MetricLabel = names[0], names[0]
			}
		}
		out = append(out, p)
	}
	return out
}
