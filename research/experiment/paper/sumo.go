package paper

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"

	"gonum.org/v1/gonum/floats"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/ihope-ope/ihope/research/experiment"
	"github.com/ihope-ope/ihope/sim/sumo"
	"github.com/ihope-ope/ihope/stream/tempdir"
)

// The SUMO experiment's fixed settings (Section 5, caption of Figure 4):
// n = SumoEpisodes logged trajectories of T = SumoT steps under behavior
// policy SumoBehavior (the x-tick 2 of Figure 4(c)), average reward.
const (
	SumoEpisodes = 250
	SumoT        = 400
	SumoBehavior = 2
	// SumoTruthRollouts is the number of target rollouts behind the
	// Monte Carlo truth of a full run (of the longest T; shorter Ts use
	// their first steps). Each costs a SUMO run, so the truth cannot be
	// made as precise as Pendulum's: its standard error is about a third
	// of the on-policy oracle's root-MSE at n = 250, and
	// results.CheckTruth warns about the oracle's panels. The
	// importance-sampling and density-ratio errors are an order of
	// magnitude larger.
	SumoTruthRollouts = 2000
)

// The SUMO experiment needs the sumo binary; without it, running it fails
// with one line saying how to install SUMO (traci.ErrNotFound).
func init() { experiment.Register(sumoExperiment()) }

// sumoExperiment is Figure 4: the single intersection, average reward,
// MSE against the number of trajectories, the behavior policy and T.
// Registering it (init above) makes "ihope experiment sumo" run it; it
// needs SUMO installed.
func sumoExperiment() *experiment.Experiment {
	return &experiment.Experiment{
		Name: "sumo",
		Description: "Figure 4: SUMO traffic lights (single intersection), average reward; MSE vs n, vs behavior, vs T " +
			"(needs SUMO: apt-get install -y sumo; long: 900,000 simulated 6-second steps per seed and 1.6 million for the truth)",
		Seeds:      10,
		QuickSeeds: 2,
		Panels:     sumoPanels,
	}
}

// SumoLearner returns the neural density-ratio learner of the SUMO
// experiment: ratio.Neural's defaults (the library's defaults are this
// experiment's setting, so ihope estimate runs what Figure 4 measured) on
// the raw detector counts, with one worker (the runner computes one cell
// per CPU; the result does not depend on it). quick shrinks the training
// to a smoke test.
func SumoLearner(quick bool) ratio.Neural {
	l := ratio.Neural{Workers: 1}
	if quick {
		l.MaxIter, l.BatchSize, l.EvalEvery, l.BandwidthSample = 60, 64, 20, 200
	}
	return l
}

type sumoParams struct {
	n, T, behavior int
}

func (p sumoParams) key() string { return fmt.Sprintf("sumo/n=%d/T=%d/b=%d", p.n, p.T, p.behavior) }

// withNetwork builds the single intersection in a temporary directory,
// calls f and removes the directory. Building takes a tenth of a second,
// so every cell has its own. The directory is named with the pid, and the
// directories of killed runs (SIGKILL skips the removal) are removed by
// the next run (tempdir.New).
func withNetwork(ctx context.Context, f func(*sumo.Network) error) error {
	dir, err := tempdir.New("", "ihope-sumo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	net, err := sumo.Build(ctx, dir, sumo.Config{})
	if err != nil {
		return err
	}
	return f(net)
}

// sumoTruth is the Monte Carlo value of the target for every T of the
// grid, from m rollouts of the longest.
type sumoTruth struct {
	m    int
	maxT int
}

func (tr sumoTruth) key() string { return fmt.Sprintf("sumo/truth/M=%d/T=%d", tr.m, tr.maxT) }

// compute rolls out the target m times for maxT steps (in parallel, one
// SUMO per CPU) and returns, for every T <= maxT, the mean over rollouts
// of the average reward of the first T steps, with its standard error.
func (tr sumoTruth) compute(ctx context.Context, exp string) (map[int]mcValue, error) {
	var rewards [][]float64
	err := withNetwork(ctx, func(net *sumo.Network) error {
		var err error
		rewards, err = net.Rewards(ctx, experiment.Rand(exp, "truth", 0), sumo.Target(1), tr.m, tr.maxT, runtime.GOMAXPROCS(0))
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[int]mcValue, tr.maxT)
	sums := make([]float64, tr.m)
	for T := 1; T <= tr.maxT; T++ {
		var m, m2 float64
		for i, r := range rewards {
			sums[i] += r[T-1]
			x := sums[i] / float64(T)
			d := x - m
			m += d / float64(i+1)
			m2 += d * (x - m)
		}
		out[T] = mcValue{mean: m, se: math.Sqrt(m2 / float64(tr.m-1) / float64(tr.m))}
	}
	return out, nil
}

// sumoPools says how long a seed's shared episodes are. All cells of a
// seed take their data from one log per behavior, and their on-policy
// oracle from one set of target rollouts: episode i lasts the longest T
// of the cells that use it (those with n > i), and a cell takes the first
// n episodes cut to T steps. Logging the longest episodes once halves the
// simulation of a full run, and, as in the other experiments, makes the
// points of a curve share their random numbers.
type sumoPools struct {
	data   map[int][]int // behavior -> episode lengths
	oracle []int
}

func newSumoPools(cells []sumoParams) sumoPools {
	grow := func(l []int, p sumoParams) []int {
		for len(l) < p.n {
			l = append(l, 0)
		}
		for i := range p.n {
			l[i] = max(l[i], p.T)
		}
		return l
	}
	pools := sumoPools{data: map[int][]int{}}
	for _, p := range cells {
		pools.data[p.behavior] = grow(pools.data[p.behavior], p)
		pools.oracle = grow(pools.oracle, p)
	}
	return pools
}

// runSumo computes one cell: the truth (once per run), the seed's pools
// (once per seed), then the estimators on the first n logged episodes cut
// to T steps.
func runSumo(ctx context.Context, c *experiment.Cell, p sumoParams, tr sumoTruth, pools sumoPools, quick bool) (*experiment.Outcome, error) {
	v, err := c.Memo(tr.key(), func() (any, error) { return tr.compute(ctx, c.Experiment) })
	if err != nil {
		return nil, err
	}
	truth, ok := v.(map[int]mcValue)[p.T]
	if !ok {
		return nil, fmt.Errorf("sumo: no truth for T=%d", p.T)
	}
	behavior, err := sumo.Behavior(p.behavior, 1)
	if err != nil {
		return nil, err
	}
	stream := fmt.Sprintf("b=%d", p.behavior)
	v, err = c.SeedMemo("sumo/data/"+stream, func() (any, error) {
		var d *dataset.Dataset
		err := withNetwork(ctx, func(net *sumo.Network) (err error) {
			d, err = net.SampleLengths(ctx, c.Rand("data/"+stream), behavior, sumo.Target(1), pools.data[p.behavior], 0)
			return err
		})
		return d, err
	})
	if err != nil {
		return nil, err
	}
	d := v.(*dataset.Dataset).Head(p.n, p.T)
	v, err = c.SeedMemo("sumo/oracle", func() (any, error) {
		var r [][]float64
		err := withNetwork(ctx, func(net *sumo.Network) (err error) {
			r, err = net.RewardsLengths(ctx, c.Rand("oracle"), sumo.Target(1), pools.oracle, 0)
			return err
		})
		return r, err
	})
	if err != nil {
		return nil, err
	}
	// The on-policy oracle: the mean reward of n target rollouts of T
	// steps, what the same simulation budget gives when the target itself
	// can be run.
	onPolicy := 0.0
	for _, r := range v.([][]float64)[:p.n] {
		onPolicy += floats.Sum(r[:p.T]) / float64(p.T)
	}
	onPolicy /= float64(p.n)
	recs := append([]results.Record{{Estimator: "on-policy", Estimate: results.Float(onPolicy)}}, records(d, 1, estimators(ope.Options{Neural: SumoLearner(quick), Seed: c.Rand("bch/" + stream).Uint64()},
		"naive", "wis-trajectory", "wis-stepwise", "bch-neural"))...)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &experiment.Outcome{Truth: truth.mean, TruthSE: truth.se, TruthMethod: "monte-carlo", Records: recs}, nil
}

func sumoPanels(quick bool) ([]experiment.Panel, error) {
	ns := []int{50, 100, 250, 500}
	Ts := []int{100, 200, 400, 800}
	behaviors := []int{1, 2, 3, 4}
	n0, T0, b0, M := SumoEpisodes, SumoT, SumoBehavior, SumoTruthRollouts
	if quick {
		ns, Ts, behaviors = []int{4, 8}, []int{15, 30}, []int{1, 4}
		n0, T0, M = 4, 15, 20
	}
	tr := sumoTruth{m: M, maxT: max(T0, Ts[len(Ts)-1])}
	title := func(fixed string) string {
		return "SUMO single intersection, average reward, target π* (CEM iteration 10):\n" + fixed
	}
	var (
		cells []sumoParams
		pools sumoPools // set below, once every cell is known
	)
	setting := func(id string, x float64, tick string, p sumoParams) experiment.Setting {
		cells = append(cells, p)
		return experiment.Setting{ID: id, X: x, Tick: tick, Key: p.key(), Run: func(ctx context.Context, c *experiment.Cell) (*experiment.Outcome, error) {
			return runSumo(ctx, c, p, tr, pools, quick)
		}}
	}
	nPanel := experiment.Panel{Name: "n", XName: "n", XLabel: "number of logged trajectories n", LogX: true, Kind: results.KindMSE,
		Title: title(fmt.Sprintf("behavior %d (CEM iteration %d), T = %d steps per trajectory", b0, 5+b0, T0))}
	for _, n := range ns {
		nPanel.Settings = append(nPanel.Settings, setting(fmt.Sprintf("n=%d", n), float64(n), "", sumoParams{n, T0, b0}))
	}
	bPanel := experiment.Panel{Name: "behavior", XName: "behavior", Kind: results.KindMSE,
		XLabel: "behavior policy k = CEM iteration 5+k",
		Title:  title(fmt.Sprintf("n = %d trajectories of T = %d steps", n0, T0))}
	for _, b := range behaviors {
		bPanel.Settings = append(bPanel.Settings, setting(fmt.Sprintf("b=%d", b), float64(b), fmt.Sprint(b), sumoParams{n0, T0, b}))
	}
	TPanel := experiment.Panel{Name: "T", XName: "T", XLabel: "trajectory length T (steps of 6 s)", LogX: true, Kind: results.KindMSE,
		Title: title(fmt.Sprintf("behavior %d, n = %d trajectories", b0, n0))}
	for _, T := range Ts {
		TPanel.Settings = append(TPanel.Settings, setting(fmt.Sprintf("T=%d", T), float64(T), "", sumoParams{n0, T, b0}))
	}
	pools = newSumoPools(cells)
	return []experiment.Panel{nPanel, bPanel, TPanel}, nil
}
