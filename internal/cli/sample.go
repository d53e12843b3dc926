package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/words"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim/pendulum"
	"github.com/ihope-ope/ihope/sim/rollout"
)

type sampleCmd struct {
	worldFlags  `embed:""`
	N           int    `short:"n" default:"200" help:"Number of episodes."`
	T           int    `short:"T" default:"400" help:"Steps per episode."`
	Seed        uint64 `default:"1" help:"Seed; the same seed as demo gives the same logs."`
	Out         string `required:"" placeholder:"FILE" help:"Output file: .csv, .tsv, .csv.gz, .tsv.gz or .parquet, by its extension; - for standard output (with --format)."`
	Format      string `placeholder:"FORMAT" help:"With --out -: the format to write, csv, tsv, csv.gz, tsv.gz or parquet."`
	IDPrefix    string `name:"id-prefix" placeholder:"PREFIX" help:"Prefix of the episode ids (PREFIX0, PREFIX1, ...): shards sampled with different seeds then have distinct ids, as ihope estimate --data 'DIR/*.parquet' needs."`
	TargetDraws string `name:"target-draws" placeholder:"FILE" help:"Pendulum: also write to FILE (CSV; .gz compresses) one action drawn from the target at every logged state and next state (state_0,...,action_0,...), which ihope estimate --target-draws reads so that fqe, dr, mql and mwl run on real actions. Drawn with its own stream of --seed."`
	TargetProbs bool   `name:"target-probs" help:"Also write the target's whole action distribution (target_prob_0, target_prob_1, ... and next_target_prob_k on each episode's last row), which model-based, fqe and dr need (tabular worlds)."`
}

func (c *sampleCmd) Run(e *runEnv) error {
	if c.N <= 0 || c.T <= 0 {
		return usagef("-n and -T must be positive")
	}
	if c.TargetDraws != "" && c.Env != "pendulum" {
		return usagef("--target-draws is for worlds of real actions (pendulum); for discrete actions use --target-probs")
	}
	if c.TargetDraws != "" {
		if _, err := drawsFormat(c.TargetDraws); err != nil {
			return err
		}
	}
	if c.Env == "pendulum" {
		if c.TargetProbs {
			return usagef("--target-probs needs discrete actions; pendulum's are real")
		}
		return c.samplePendulum(e)
	}
	w, err := c.build(e.stderr)
	if err != nil {
		return err
	}
	d, err := sampleWorld(w, c.N, c.T, c.Seed)
	if err != nil {
		return err
	}
	if c.TargetProbs {
		if err := d.SetTargetPolicy(w.target); err != nil {
			return err
		}
	}
	prefixIDs(d, c.IDPrefix)
	if err := writeData(c.Out, c.Format, e.stdout, d); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wrote %s x %s of %s to %s\n", words.Plural(c.N, "episode"), words.Plural(c.T, "step"), w.desc, displayName(c.Out, "standard output"))
	return nil
}

// prefixIDs puts prefix before every episode id of d.
func prefixIDs(d *dataset.Dataset, prefix string) {
	if prefix == "" {
		return
	}
	for i, id := range d.IDs {
		d.IDs[i] = prefix + id
	}
}

// sampleWorld draws the logs demo and sample share, so both give the
// same data for the same seed.
func sampleWorld(w *world, n, T int, seed uint64) (*dataset.Dataset, error) {
	return rollout.Sample(rand.New(rand.NewPCG(seed, 0)), w.sim, w.behavior, w.target, n, T)
}

// samplePendulum writes Pendulum logs with real states (cos, sin, thdot),
// real actions and log-densities: the shipped pi* is the target and
// (1-mix) pi* + mix pi+ the behavior, as in the paper's Section 5.
func (c *sampleCmd) samplePendulum(e *runEnv) error {
	mix, err := c.mix(e.stderr)
	if err != nil {
		return err
	}
	behavior, err := pendulum.Behavior(mix)
	if err != nil {
		return err
	}
	d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(c.Seed, 0)), pendulum.Pendulum{}, behavior, pendulum.DefaultTarget(), c.N, c.T)
	if err != nil {
		return err
	}
	prefixIDs(d, c.IDPrefix)
	if err := writeData(c.Out, c.Format, e.stdout, d); err != nil {
		return err
	}
	if c.TargetDraws != "" {
		// A stream of its own (1), so that the logs are those of the same
		// seed without the flag.
		format, _ := drawsFormat(c.TargetDraws) // checked above
		var buf bytes.Buffer
		if err := policy.WriteDraws(&buf, format, d, pendulum.DefaultTarget(), rand.New(rand.NewPCG(c.Seed, 1))); err != nil {
			return err
		}
		if err := os.WriteFile(c.TargetDraws, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stderr, "wrote %s x %s of pendulum, target pi*, behavior (1-mix)*pi* + mix*pi+ with mix = %g, to %s\n", words.Plural(c.N, "episode"), words.Plural(c.T, "step"), mix, displayName(c.Out, "standard output"))
	return nil
}
