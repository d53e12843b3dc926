package cli

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/research/experiment"
)

type plotCmd struct {
	Dir string `arg:"" placeholder:"DIR" help:"Directory holding results files (NAME.jsonl or NAME.quick.jsonl) written by 'ihope experiment'."`
}

// Run redraws the figures of every results file in the directory without
// rerunning anything.
func (c *plotCmd) Run(e *runEnv) error {
	files, err := filepath.Glob(filepath.Join(c.Dir, "*.jsonl"))
	if err != nil {
		return usagef("%v", err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		return fmt.Errorf("no results files (*.jsonl) in %s", c.Dir)
	}
	for _, file := range files {
		lines, repaired, err := results.Read(file)
		if err != nil {
			return err
		}
		if repaired {
			fmt.Fprintf(e.stderr, "%s: ignoring a torn last line (an interrupted run; rerun the experiment to finish it)\n", file)
		}
		if len(lines) == 0 {
			fmt.Fprintf(e.stderr, "%s: no results\n", file)
			continue
		}
		name := lines[0].Experiment
		panels := panelsFor(name, strings.HasSuffix(file, ".quick.jsonl"), lines)
		if err := drawResults(e, name, file, panels, lines); err != nil {
			return err
		}
	}
	return nil
}

// panelsFor returns the registered experiment's panels, plus panels
// inferred from the lines for any panel the registry does not know (a
// results file from another version or an unregistered experiment).
func panelsFor(name string, quick bool, lines []results.Line) []results.Panel {
	var panels []results.Panel
	if exp, ok := experiment.Lookup(name); ok {
		if ps, err := exp.Panels(quick); err == nil {
			panels = experiment.Describe(ps)
		}
	}
	known := map[string]bool{}
	for _, p := range panels {
		known[p.Name] = true
	}
	for _, p := range results.InferPanels(lines) {
		if !known[p.Name] {
			panels = append(panels, p)
		}
	}
	return panels
}
