package benchmark

import (
	"context"
	"fmt"
	"strings"

	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/research/experiment"
)

// Suite is a named group of worlds, run as one experiment with one
// results file (DIR/benchmark-NAME.jsonl).
type Suite struct {
	// Name is the command-line name ("cobs", "dice", "paper").
	Name string
	// Description is one line for the help and the leaderboard.
	Description string
	// worlds builds the suite's worlds, in the order of its tables.
	worlds []func() (*World, error)
}

// The suites, in the order of the leaderboard. "all" runs them all.
var suites = []Suite{
	{Name: "cobs", Description: "COBS's tabular worlds: Graph, ToyMC, ModelFail, ModelWin",
		worlds: []func() (*World, error){graphWorld, toyMCWorld, modelFailWorld, modelWinWorld}},
	{Name: "dice", Description: "dice_rl's GridWalk",
		worlds: []func() (*World, error){gridWalkWorld}},
	{Name: "paper", Description: "the paper's Taxi and ring",
		worlds: []func() (*World, error){taxiWorld, ringWorld}},
}

// All is the name of the suite made of every suite.
const All = "all"

// SuiteNames returns the suites' names, "all" last.
func SuiteNames() []string {
	out := make([]string, 0, len(suites)+1)
	for _, s := range suites {
		out = append(out, s.Name)
	}
	return append(out, All)
}

// Suites returns the suites a name selects: one, or every one for "all".
func Suites(name string) ([]Suite, error) {
	if name == All {
		return append([]Suite(nil), suites...), nil
	}
	for _, s := range suites {
		if s.Name == name {
			return []Suite{s}, nil
		}
	}
	return nil, fmt.Errorf("unknown suite %q: choose from %s", name, strings.Join(SuiteNames(), ", "))
}

// Worlds builds the suite's worlds; quick gives the small versions of
// quick mode (Quick).
func (s Suite) Worlds(quick bool) ([]*World, error) {
	out := make([]*World, len(s.worlds))
	for i, f := range s.worlds {
		w, err := f()
		if err != nil {
			return nil, err
		}
		if quick {
			w = w.Quick()
		}
		out[i] = w
	}
	return out, nil
}

// Experiment returns the suite as an experiment: one MSE panel per world
// whose settings are the world's target policies, one cell per target
// and seed (World.Run). Its results file is DIR/benchmark-NAME.jsonl.
func (s Suite) Experiment() *experiment.Experiment {
	return &experiment.Experiment{
		Name:        "benchmark-" + s.Name,
		Description: "benchmark suite " + s.Name + ": " + s.Description,
		Seeds:       DefaultSeeds,
		QuickSeeds:  QuickSeeds,
		Panels: func(quick bool) ([]experiment.Panel, error) {
			worlds, err := s.Worlds(quick)
			if err != nil {
				return nil, err
			}
			panels := make([]experiment.Panel, len(worlds))
			for i, w := range worlds {
				panels[i] = w.panel(quick)
			}
			return panels, nil
		},
	}
}

// panel returns the world's panel: its targets along a categorical axis.
func (w *World) panel(quick bool) experiment.Panel {
	p := experiment.Panel{
		Name:   w.Name,
		Title:  fmt.Sprintf("%s:\nbehavior-logged n = %d episodes of T = %d steps, γ = %g", w.Title, w.N, w.T, w.Gamma),
		XName:  "target",
		XLabel: "target policy",
		Kind:   results.KindMSE,
	}
	for i, t := range w.Targets {
		p.Settings = append(p.Settings, experiment.Setting{
			ID: t.Name, X: float64(i), Tick: t.Tick,
			Run: func(ctx context.Context, c *experiment.Cell) (*experiment.Outcome, error) {
				return w.Run(ctx, c, i, quick)
			},
		})
	}
	return p
}

// WorldNamed returns the full-size world of that name (World.Name,
// "modelfail") from any suite.
func WorldNamed(name string) (*World, error) {
	suites, err := Suites(All)
	if err != nil {
		return nil, err
	}
	for _, s := range suites {
		worlds, err := s.Worlds(false)
		if err != nil {
			return nil, err
		}
		for _, w := range worlds {
			if w.Name == name {
				return w, nil
			}
		}
	}
	return nil, fmt.Errorf("benchmark: no world %q", name)
}
