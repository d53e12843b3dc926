package cli

import (
	"fmt"
	"io"

	"github.com/alecthomas/kong"
)

// A renamed flag keeps its old name for one release, hidden from --help:
// a pointer field (nil unless given) named by the old name and tagged
// renamed:"NEW" why:"..." sets the flag NEW, and a warning on stderr says
// what to use (applyRenamed). Names changed so that a flag means one
// thing in every verb:
//
//	estimate --bootstrap-neural          -> --bootstrap-refit (every refitting estimator, bch-kernel too)
//	experiment, benchmark --workers      -> --parallel-cells  (cells; estimate's --workers is goroutines)
//	experiment, benchmark, train --out   -> --out-dir         (a directory; sample's --out is a file)
//
// (demo's and sample's --alpha, now --mix, predates this and has its own
// code in worldFlags.mix.)

// gridFlags are the flags of the verbs that compute a grid of cells
// (experiment, benchmark).
type gridFlags struct {
	ParallelCells int    `name:"parallel-cells" help:"Cells computed at once (default: the number of CPUs)."`
	OutDir        string `name:"out-dir" default:"out" placeholder:"DIR" help:"Directory of the results files and the figures, and benchmark's leaderboard (default: out)."`

	Workers *int    `name:"workers" hidden:"" renamed:"parallel-cells" why:"cells computed at once; estimate's --workers is goroutines"`
	Out     *string `name:"out" hidden:"" renamed:"out-dir" why:"a directory; sample's --out is a file"`
}

// applyRenamed applies the flags given under an old name: it sets the new
// flag to the value, says on stderr what to use instead, and refuses the
// two names at once. kong's xor cannot tell the latter: a flag with a
// default counts as given.
func applyRenamed(ctx *kong.Context, stderr io.Writer) error {
	given := map[string]bool{}
	for _, p := range ctx.Path {
		if p.Flag != nil {
			given[p.Flag.Name] = true
		}
	}
	flags := map[string]*kong.Flag{}
	for _, f := range ctx.Flags() {
		flags[f.Name] = f
	}
	for _, p := range ctx.Path {
		old := p.Flag
		if old == nil || old.Tag.Get("renamed") == "" {
			continue
		}
		name := old.Tag.Get("renamed")
		if given[name] {
			return usagef("--%s is the old name of --%s: give --%s only", old.Name, name, name)
		}
		f, ok := flags[name]
		if !ok {
			return fmt.Errorf("internal error: --%s is renamed to --%s, which %s lacks", old.Name, name, ctx.Command())
		}
		f.Target.Set(old.Target.Elem())
		fmt.Fprintf(stderr, "ihope: warning: --%s is deprecated: use --%s (%s); --%s will be removed in the next release\n",
			old.Name, name, old.Tag.Get("why"), old.Name)
	}
	return nil
}
