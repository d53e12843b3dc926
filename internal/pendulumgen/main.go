// Command pendulumgen trains the Pendulum policies shipped by package
// sim/pendulum: pi_* (target.json), the final policy of a REINFORCE run,
// and pi_+ (plus.json), a snapshot of the same run before convergence. It
// then estimates both policies' average reward per step by Monte Carlo.
//
// Run it through go generate from the repository root:
//
//	go generate ./env/pendulum
//
// or directly, e.g. to try other settings without overwriting anything:
//
//	go run ./internal/pendulumgen -out /tmp/pend -iters 1500 -plus 300
//
// The run is deterministic: the same flags give the same files on every
// machine (whatever -workers is).
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/sim/pendulum"
	"github.com/ihope-ope/ihope/sim/rollout"
	"github.com/ihope-ope/ihope/sim/train"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "pendulumgen:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		out      = flag.String("out", ".", "directory for target.json and plus.json")
		seed     = flag.Uint64("seed", 2018, "random seed")
		iters    = flag.Int("iters", 1000, "REINFORCE iterations (pi_* is the last)")
		plus     = flag.Int("plus", 350, "iteration of the pi_+ snapshot")
		extra    = flag.String("extra", "", "comma-separated further snapshots to evaluate (not written)")
		episodes = flag.Int("episodes", 16, "episodes per iteration")
		horizon  = flag.Int("horizon", 200, "steps per training episode")
		lr       = flag.Float64("lr", 1e-2, "policy learning rate (Adam)")
		std      = flag.Float64("std", pendulum.DefaultStd, "policy standard deviation")
		hidden   = flag.Int("hidden", pendulum.DefaultHidden, "hidden width of the mean network")
		workers  = flag.Int("workers", 2, "goroutines for rollouts")
		evalN    = flag.Int("eval-n", 1000, "evaluation episodes per policy")
		evalT    = flag.Int("eval-T", 1000, "evaluation episode length")
		every    = flag.Int("every", 50, "print the learning curve every this many iterations")
		dump     = flag.Bool("dump", false, "also write every -extra snapshot as snapshot-<iteration>.json")
	)
	flag.Parse()

	start := time.Now()
	rng := rand.New(rand.NewPCG(*seed, 1))
	init, err := pendulum.NewPolicy(rng, *hidden, *std)
	if err != nil {
		return err
	}
	snaps := []int{*iters, *plus}
	if *extra != "" {
		for _, f := range strings.Split(*extra, ",") {
			k, err := strconv.Atoi(f)
			if err != nil {
				return fmt.Errorf("-extra: %w", err)
			}
			snaps = append(snaps, k)
		}
	}
	window, sum := 0, 0.0
	r := train.Reinforce{
		Iterations: *iters, Episodes: *episodes, Horizon: *horizon,
		LearningRate: *lr, Workers: *workers,
		Progress: func(done, total int, avg float64) {
			sum += avg
			window++
			if done%*every == 0 || done == total {
				fmt.Fprintf(os.Stderr, "iteration %5d/%d  average reward %8.4f  (%s)\n",
					done, total, sum/float64(window), time.Since(start).Round(time.Second))
				sum, window = 0, 0
			}
		},
	}
	res, err := r.Run(rng, pendulum.Pendulum{}, init, snaps)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "training took %s\n", time.Since(start).Round(time.Second))

	for i, k := range snaps {
		erng := rand.New(rand.NewPCG(*seed, 99))
		m, se, err := rollout.Evaluate(erng, pendulum.Pendulum{}, res.Policies[i], *evalN, *evalT, 1)
		if err != nil {
			return err
		}
		fmt.Printf("iteration %5d: average reward per step over %d x %d steps: %.4f +- %.4f (se)\n", k, *evalN, *evalT, m, se)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if *dump {
		for i, k := range snaps[2:] {
			if err := write(filepath.Join(*out, fmt.Sprintf("snapshot-%d.json", k)), res.Policies[i+2]); err != nil {
				return err
			}
		}
	}
	if err := write(filepath.Join(*out, "target.json"), res.Policies[0]); err != nil {
		return err
	}
	return write(filepath.Join(*out, "plus.json"), res.Policies[1])
}

func write(path string, p *policy.TruncGaussian) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := p.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
