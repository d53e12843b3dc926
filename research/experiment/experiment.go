package experiment

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ihope-ope/ihope/figure/results"
)

// Experiment is a named grid of panels. Register it with Register; the
// CLI (ihope experiment NAME) and the figures find it by Name.
type Experiment struct {
	// Name is the command-line name, e.g. "taxi-average".
	Name string
	// Description is one line for "ihope experiment list".
	Description string
	// Seeds is the default number of seeds of a full run; QuickSeeds the
	// number in quick mode (Runner.Quick). Zero means 100 and 2.
	Seeds, QuickSeeds int
	// Panels builds the grid; quick asks for the tiny grid of quick mode
	// (Runner.Quick). It must return the same panels, settings and order
	// every time.
	Panels func(quick bool) ([]Panel, error)
}

// DefaultSeeds returns the number of seeds run when the user gives none.
func (e *Experiment) DefaultSeeds(quick bool) int {
	if quick {
		if e.QuickSeeds > 0 {
			return e.QuickSeeds
		}
		return 2
	}
	if e.Seeds > 0 {
		return e.Seeds
	}
	return 100
}

// Panel is one figure's part of an experiment's grid: the description
// the figures and the results file use (results.PanelOf: name, title,
// axes, kind) with settings that compute their cells. Describe turns it
// into a results.Panel.
type Panel = results.PanelOf[Setting]

// Setting is one point of a panel's x axis and the computation of its
// cells. ID, X and Tick are those of results.Setting.
type Setting struct {
	// ID identifies the setting within its panel, stably across runs,
	// e.g. "n=100". Cells are keyed by panel, ID and seed.
	ID string
	// X is the x coordinate; for a categorical axis, the position.
	X float64
	// Tick, if not empty, labels X on a categorical axis.
	Tick string
	// Key identifies the computation: settings of any panel with the
	// same non-empty Key run once per seed and share the outcome (e.g.
	// the default setting appears in every panel of a figure). Empty
	// means the setting shares with nothing.
	Key string
	// Run computes one cell. It must draw all randomness from c.Rand and
	// return the same outcome for the same (experiment, stream, seed),
	// whatever else runs concurrently.
	Run func(ctx context.Context, c *Cell) (*Outcome, error)
}

// Describe returns panels as the figures and the results file see them:
// the same descriptions, with settings reduced to their ID, X and Tick.
func Describe(panels []Panel) []results.Panel {
	out := make([]results.Panel, len(panels))
	for i, p := range panels {
		out[i] = results.Panel{
			Name: p.Name, Title: p.Title, XName: p.XName,
			XLabel: p.XLabel, YLabel: p.YLabel, LogX: p.LogX, Kind: p.Kind,
			Metric: p.Metric, MetricLabel: p.MetricLabel,
			Reference: p.Reference, ReferenceLabel: p.ReferenceLabel,
			Estimator: p.Estimator, LinearY: p.LinearY,
			ScatterX: p.ScatterX, ScatterY: p.ScatterY,
			MaxSeeds: p.MaxSeeds, KeepVectors: p.KeepVectors,
		}
		if p.Settings != nil {
			out[i].Settings = make([]results.Setting, len(p.Settings))
		}
		for j, s := range p.Settings {
			out[i].Settings[j] = results.Setting{ID: s.ID, X: s.X, Tick: s.Tick}
		}
	}
	return out
}

// Outcome is what a cell computes.
type Outcome struct {
	// Truth is the quantity estimated, TruthSE its standard error (0 when
	// exact) and TruthMethod "exact" or "monte-carlo".
	Truth, TruthSE float64
	TruthMethod    string
	// Truths, if set, holds the truth of every estimand a record may
	// target (results.Record.Estimand), by name; a record with an
	// Estimand found here is scored against that truth instead of Truth.
	Truths map[string]float64
	// Records holds one entry per estimator.
	Records []results.Record
	// Metrics and Vectors hold anything else the figures need.
	Metrics map[string]float64
	Vectors map[string][]float64
}

// checkPanels verifies the grid a Panels function returned.
func checkPanels(exp string, panels []Panel) error {
	seen := map[string]bool{}
	for _, p := range panels {
		if p.Name == "" || strings.ContainsAny(p.Name, "/ ") {
			return fmt.Errorf("experiment %s: bad panel name %q", exp, p.Name)
		}
		if seen[p.Name] {
			return fmt.Errorf("experiment %s: panel %q twice", exp, p.Name)
		}
		seen[p.Name] = true
		switch p.Kind {
		case results.KindMSE, results.KindMetric, results.KindScatter:
		default:
			return fmt.Errorf("experiment %s: panel %s has unknown kind %q", exp, p.Name, p.Kind)
		}
		var ids []string
		for _, s := range p.Settings {
			if s.ID == "" || s.Run == nil {
				return fmt.Errorf("experiment %s: panel %s has a setting without ID or Run", exp, p.Name)
			}
			if slices.Contains(ids, s.ID) {
				return fmt.Errorf("experiment %s: panel %s: setting %q twice", exp, p.Name, s.ID)
			}
			ids = append(ids, s.ID)
		}
	}
	return nil
}
