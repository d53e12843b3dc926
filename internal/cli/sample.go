package cli

import (
	"fmt"
	"math/rand/v2"

	"github.com/ihope-ope/ihope/dataset"
)

type sampleCmd struct {
	worldFlags `embed:""`
	N          int    `short:"n" default:"200" help:"Number of episodes."`
	T          int    `short:"T" default:"400" help:"Steps per episode."`
	Seed       uint64 `default:"1" help:"Seed; the same seed as demo gives the same logs."`
	Out        string `required:"" placeholder:"FILE" help:"Output file, .csv or .parquet."`
}

func (c *sampleCmd) Run(e *runEnv) error {
	if c.N <= 0 || c.T <= 0 {
		return usagef("-n and -T must be positive")
	}
	w, err := c.build()
	if err != nil {
		return err
	}
	d, err := sampleWorld(w, c.N, c.T, c.Seed)
	if err != nil {
		return err
	}
	if err := dataset.WriteFile(c.Out, d); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %d episodes x %d steps of %s to %s\n", c.N, c.T, w.desc, c.Out)
	return nil
}

// sampleWorld draws the logs demo and sample share, so both give the
// same data for the same seed.
func sampleWorld(w *world, n, T int, seed uint64) (*dataset.Dataset, error) {
	return dataset.Sample(rand.New(rand.NewPCG(seed, 0)), w.sim, w.behavior, w.target, n, T)
}
