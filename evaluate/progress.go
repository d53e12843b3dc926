package evaluate

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ihope-ope/ihope/internal/progress"
	"github.com/ihope-ope/ihope/internal/words"
	"github.com/ihope-ope/ihope/ope"
	"github.com/ihope-ope/ihope/ratio"
	"github.com/schollz/progressbar/v3"
)

// bootstrapProgress returns a progress callback drawing a bar of total
// resamples labelled label on a terminal (nil elsewhere), and the
// function that ends it.
func bootstrapProgress(stderr io.Writer, total int, label string) (func(int), func()) {
	if !progress.IsTerminal(stderr) || total == 0 {
		return nil, func() {}
	}
	return newBar(stderr, total, label)
}

func newBar(w io.Writer, total int, label string) (func(int), func()) {
	bar := progress.Bar(w, total, label, progressbar.OptionShowCount())
	return func(int) { bar.Add(1) }, func() { bar.Finish() }
}

// groupLabel is the bar's label of one bootstrap group (entries[idx]):
// the slow estimators' refits are named, so the ETA shown is understood
// as theirs.
func (c *Evaluator) groupLabel(entries []ope.Entry, idx []int) string {
	label := "bootstrap"
	if entries[idx[0]].Slow {
		var names []string
		for _, i := range idx {
			names = append(names, entries[i].Name)
		}
		label = "bootstrap, refitting " + strings.Join(names, " and ")
	}
	if c.policyLabel != "" {
		label = c.policyLabel + ": " + label
	}
	return label
}

// trainingProgress returns a Progress callback for the neural networks an
// estimator trains, drawing a bar with an ETA, and the function that ends
// it. The bar counts the networks' evaluations, opts.Neural.Evaluations()
// for each of its restarts, plus one step for what follows the training
// (the estimate), which finish completes: a fit without early stopping
// (the default) makes exactly that many, so the ETA is the fit's own. An
// estimator that trains more networks (dr's neural ratio, once per fold)
// raises the total as they come, so the bar never claims more than it
// knows.
func trainingProgress(stderr io.Writer, name string, opts ope.Options) (func(iter int, loss, heldOut float64), func()) {
	restarts := cmp.Or(opts.Restarts, ratio.DefaultRestarts)
	per, err := opts.Neural.Evaluations()
	if err != nil {
		return nil, func() {}
	}
	total := per*restarts + 1
	bar := progress.Bar(stderr, total, fmt.Sprintf("%s: training %s", name, words.Plural(restarts, "network")),
		progressbar.OptionThrottle(progress.Throttle))
	var mu sync.Mutex // the networks of an ensemble train concurrently
	done := 0
	return func(int, float64, float64) {
			mu.Lock()
			defer mu.Unlock()
			if done++; done >= total {
				total += per
				bar.ChangeMax(total)
			}
			bar.Add(1)
		}, func() {
			bar.Finish()
		}
}
