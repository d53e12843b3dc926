package cli

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/schollz/progressbar/v3"

	"github.com/ihope-ope/ihope/internal/progress"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/sim"
	"github.com/ihope-ope/ihope/sim/taxi"
	"github.com/ihope-ope/ihope/sim/train"
)

type trainCmd struct {
	Taxi trainTaxiCmd `cmd:"" help:"Q-learning on Taxi as the authors did (rate 0.01, gamma 0.99, softmax temperature 2, 5000 steps per iteration); writes softmax policies at the chosen iterations."`
}

type trainTaxiCmd struct {
	Seed       uint64  `default:"1" help:"Seed of the run."`
	Iterations []int   `sep:"," default:"950,1000" help:"Iterations at which to save a policy (the paper: pi_+ at 950, pi_* at 1000)."`
	OutDir     string  `name:"out-dir" default:"." placeholder:"DIR" help:"Directory for the policy CSV files (pi-ITER.csv, the format of --policy)."`
	Out        *string `name:"out" hidden:"" renamed:"out-dir" why:"a directory; sample's --out is a file"`
}

func (c *trainTaxiCmd) Run(e *runEnv) error {
	for _, k := range c.Iterations {
		if k < 0 {
			return usagef("--iterations: %d is negative", k)
		}
	}
	if err := os.MkdirAll(c.OutDir, 0o755); err != nil {
		return err
	}
	q := train.QLearning{}
	last := 0
	for _, k := range c.Iterations {
		last = max(last, k)
	}
	q.Iterations = last
	if progress.IsTerminal(e.stderr) {
		bar := progressbar.NewOptions(last, progressbar.OptionSetWriter(e.stderr),
			progressbar.OptionSetDescription("Q-learning"), progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish())
		q.Progress = func(done, total int) { bar.Set(done) }
		defer bar.Finish()
	}
	m := taxi.New()
	pols, err := q.Run(rand.New(rand.NewPCG(c.Seed, 0)), sim.NewSampler(m), c.Iterations)
	if err != nil {
		return err
	}
	for i, p := range pols {
		path := filepath.Join(c.OutDir, fmt.Sprintf("pi-%d.csv", c.Iterations[i]))
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := p.WriteCSV(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s\titeration %d\texact average reward over T = 400 from reset: %.6f\n",
			path, c.Iterations[i], mdp.Value(m, p, nil, 400, 1))
	}
	return nil
}
