package paper

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/research/experiment"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/taxi"
)

func init() {
	experiment.Register(&experiment.Experiment{
		Name:        "taxi-average",
		Description: "Figure 1: Taxi, average reward; MSE vs n, vs behavior policy, vs T; estimated vs exact d_pi(s); TV distance vs n",
		Seeds:       100,
		QuickSeeds:  2,
		Panels:      func(quick bool) ([]experiment.Panel, error) { return taxiPanels(quick, 1) },
	})
	experiment.Register(&experiment.Experiment{
		Name:        "taxi-discounted",
		Description: "Figure 2: Taxi, discounted reward; MSE vs n, vs behavior policy, vs T, vs gamma",
		Seeds:       100,
		QuickSeeds:  2,
		Panels:      func(quick bool) ([]experiment.Panel, error) { return taxiPanels(quick, 0.99) },
	})
}

// taxiBehavior is one behavior policy of the "behavior" panels.
type taxiBehavior struct {
	id, tick string
	// alpha mixes the target with pi18: (1-alpha) pi19 + alpha pi18; the
	// snapshots pi14..pi18 have base set instead.
	alpha float64
	base  string
}

// taxiBehaviors lists the behavior policies from the closest to the
// target pi19 to the farthest: mixtures (1-alpha) pi19 + alpha pi18, then
// the earlier Q-learning snapshots pi18 (the paper's pi+, alpha = 1) to
// pi14. The order is that of every divergence we checked: E_{d_pi0}[beta^2]
// is 1.0016, 1.0059, 1.0124, 1.0214, 1.0575, 1.1055, 1.1556, 1.2083 and
// the total variation between the stationary distributions 0.018, 0.036,
// 0.056, 0.077, 0.137, 0.186, 0.226, 0.265.
var taxiBehaviors = []taxiBehavior{
	{id: "mix0.25", tick: "α=.25", alpha: 0.25},
	{id: "mix0.5", tick: "α=.5", alpha: 0.5},
	{id: "mix0.75", tick: "α=.75", alpha: 0.75},
	{id: "pi18", tick: "π18", base: "pi18"},
	{id: "pi17", tick: "π17", base: "pi17"},
	{id: "pi16", tick: "π16", base: "pi16"},
	{id: "pi15", tick: "π15", base: "pi15"},
	{id: "pi14", tick: "π14", base: "pi14"},
}

// taxiWorld holds the Taxi table, its simulator and the policies, built
// once per process.
type taxiWorld struct {
	m         *taxi.MDP
	sim       *sim.Sampler
	target    *policy.Tabular
	behaviors map[string]*policy.Tabular
}

var (
	taxiOnce sync.Once
	taxiW    *taxiWorld
	taxiErr  error
)

func loadTaxi() (*taxiWorld, error) {
	taxiOnce.Do(func() {
		w := &taxiWorld{m: taxi.New(), behaviors: map[string]*policy.Tabular{}}
		w.sim = sim.NewSampler(w.m)
		if w.target, taxiErr = taxi.Policy(taxi.DefaultTarget); taxiErr != nil {
			return
		}
		pi18, err := taxi.Policy("pi18")
		if err != nil {
			taxiErr = err
			return
		}
		for _, b := range taxiBehaviors {
			var p *policy.Tabular
			if b.base != "" {
				p, err = taxi.Policy(b.base)
			} else {
				p, err = policy.Mixture(b.alpha, w.target, pi18)
			}
			if err != nil {
				taxiErr = err
				return
			}
			w.behaviors[b.id] = p
		}
		taxiW = w
	})
	return taxiW, taxiErr
}

// taxiParams is one Taxi setting.
type taxiParams struct {
	n, T     int
	behavior string
	gamma    float64
}

func (p taxiParams) key() string {
	return fmt.Sprintf("taxi/n=%d/T=%d/b=%s/g=%g", p.n, p.T, p.behavior, p.gamma)
}

// run computes one Taxi cell: the exact truth, the six estimators on n
// logged trajectories of T steps, and the tabular ratio's estimate of
// d_pi with its total-variation distance to the exact d_pi.
//
// The data stream is named by T and the behavior only, not by n or gamma:
// within a seed, the n = 30 logs are the first 30 trajectories of the
// n = 800 logs, and every gamma sees the same logs (common random numbers,
// which make the curves smoother without biasing any point). The oracle's
// rollouts are shared the same way.
func (w *taxiWorld) run(ctx context.Context, c *experiment.Cell, p taxiParams) (*experiment.Outcome, error) {
	truth, err := c.Memo(fmt.Sprintf("taxi/truth/T=%d/g=%g", p.T, p.gamma), func() (any, error) {
		return mdp.Value(w.m, w.target, nil, p.T, p.gamma), nil
	})
	if err != nil {
		return nil, err
	}
	dTrue, err := c.Memo(fmt.Sprintf("taxi/visitation/g=%g", p.gamma), func() (any, error) {
		return mdp.Visitation(w.m, w.target, p.gamma)
	})
	if err != nil {
		return nil, err
	}
	stream := fmt.Sprintf("T=%d/b=%s", p.T, p.behavior)
	d, err := rollout.Sample(c.Rand("data/"+stream), w.sim, w.behaviors[p.behavior], w.target, p.n, p.T)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ests := tabularEstimators(w.sim, w.target, c.Rand("oracle/"+stream).Uint64(), false)
	recs, res := runEstimators(d, p.gamma, ests)
	out := &experiment.Outcome{Truth: truth.(float64), TruthMethod: "exact", Records: recs}

	var model *ratio.TabularModel
	for i, e := range ests {
		if e.Name() == "bch-tabular" {
			model, _ = res[i].Model.(*ratio.TabularModel)
		}
	}
	if model != nil {
		dHat := stateDistribution(d, p.gamma)
		sum := 0.0
		for s := range dHat {
			dHat[s] *= model.W[s]
			sum += dHat[s]
		}
		tv := 0.0
		exactD := dTrue.([]float64)
		for s := range dHat {
			dHat[s] /= sum
			tv += math.Abs(dHat[s] - exactD[s])
		}
		out.Metrics = map[string]float64{"tv": tv / 2}
		out.Vectors = map[string][]float64{"d_hat": dHat, "d_true": exactD}
	}
	return out, nil
}

func taxiPanels(quick bool, gamma float64) ([]experiment.Panel, error) {
	w, err := loadTaxi()
	if err != nil {
		return nil, err
	}
	average := gamma == 1
	ns := []int{30, 50, 100, 200, 400, 800}
	Ts := []int{50, 100, 200, 400, 800, 1500}
	gammas := []float64{0.95, 0.97, 0.99, 0.995}
	behaviors := taxiBehaviors
	// Defaults: Figure 1 fixes n = 100 in (b)-(d); Figure 2 fixes n = 200,
	// T = 400, gamma = 0.99. Figure 1 does not state T; we use 400 too.
	n0, T0, b0 := 100, 400, "pi18"
	if !average {
		n0 = 200
	}
	if quick {
		ns, Ts, gammas = []int{30, 100}, []int{50, 100}, []float64{0.95, 0.99}
		behaviors = []taxiBehavior{taxiBehaviors[1], taxiBehaviors[3], taxiBehaviors[5]}
		n0, T0 = 100, 100
	}
	quantity := "average reward (γ = 1)"
	if !average {
		quantity = fmt.Sprintf("discounted reward (γ = %g)", gamma)
	}
	title := func(fixed string) string {
		return "Taxi, " + quantity + ", target π19:\n" + fixed
	}
	setting := func(id string, x float64, tick string, p taxiParams) experiment.Setting {
		return experiment.Setting{ID: id, X: x, Tick: tick, Key: p.key(), Run: func(ctx context.Context, c *experiment.Cell) (*experiment.Outcome, error) {
			return w.run(ctx, c, p)
		}}
	}

	nPanel := experiment.Panel{Name: "n", XName: "n", XLabel: "number of logged trajectories n", LogX: true, Kind: results.KindMSE,
		Title: title(fmt.Sprintf("behavior π18, T = %d steps per trajectory", T0))}
	for _, n := range ns {
		nPanel.Settings = append(nPanel.Settings, setting(fmt.Sprintf("n=%d", n), float64(n), "", taxiParams{n, T0, b0, gamma}))
	}
	bPanel := experiment.Panel{Name: "behavior", XName: "behavior", Kind: results.KindMSE,
		XLabel: "behavior policy, farther from the target →  (α: mixture (1-α)·π19 + α·π18)",
		Title:  title(fmt.Sprintf("n = %d trajectories of T = %d steps", n0, T0))}
	for i, b := range behaviors {
		bPanel.Settings = append(bPanel.Settings, setting("b="+b.id, float64(i), b.tick, taxiParams{n0, T0, b.id, gamma}))
	}
	TPanel := experiment.Panel{Name: "T", XName: "T", XLabel: "trajectory length T (steps)", LogX: true, Kind: results.KindMSE,
		Title: title(fmt.Sprintf("behavior π18, n = %d trajectories", n0))}
	for _, T := range Ts {
		TPanel.Settings = append(TPanel.Settings, setting(fmt.Sprintf("T=%d", T), float64(T), "", taxiParams{n0, T, b0, gamma}))
	}
	panels := []experiment.Panel{nPanel, bPanel, TPanel}

	if average {
		def := taxiParams{n0, T0, b0, gamma}
		scatter := experiment.Panel{Name: "scatter", XName: "n", Kind: results.KindScatter, MaxSeeds: 1, KeepVectors: true,
			ScatterX: "d_hat", ScatterY: "d_true", Estimator: "bch-tabular", MetricLabel: "one point per taxi state",
			XLabel: "estimated d_π(s) = ŵ(s) · (share of logged steps in s)",
			YLabel: "exact stationary d_π(s)",
			Title:  title(fmt.Sprintf("tabular density ratio from n = %d trajectories of T = %d steps, behavior π18", n0, T0))}
		scatter.Settings = []experiment.Setting{setting(fmt.Sprintf("n=%d", n0), float64(n0), "", def)}
		tv := experiment.Panel{Name: "tv", XName: "n", XLabel: "number of logged trajectories n", LogX: true, Kind: results.KindMetric,
			Metric: "tv", MetricLabel: "TV distance", Estimator: "bch-tabular",
			YLabel: "TV distance of ŵ·d_π0 to exact d_π",
			Title:  title(fmt.Sprintf("error of the learned stationary distribution, behavior π18, T = %d steps", T0))}
		tv.Settings = nPanel.Settings
		panels = append(panels, scatter, tv)
	} else {
		gPanel := experiment.Panel{Name: "gamma", XName: "gamma", XLabel: "discount factor γ", Kind: results.KindMSE,
			Title: strings.Replace(title(fmt.Sprintf("behavior π18, n = %d trajectories of T = %d steps", n0, T0)),
				fmt.Sprintf("discounted reward (γ = %g)", gamma), "discounted reward", 1)}
		for _, g := range gammas {
			gPanel.Settings = append(gPanel.Settings, setting(fmt.Sprintf("gamma=%g", g), g, "", taxiParams{n0, T0, b0, g}))
		}
		panels = append(panels, gPanel)
	}
	return panels, nil
}
