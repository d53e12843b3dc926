// Command sumogen trains the traffic-light policies shipped by package
// sim/sumo (policies.json): ten iterations of the cross-entropy method on
// the single intersection, whose last policy is the target pi_* and whose
// iterations 6 to 9 are the four behavior policies (Appendix D of the
// paper). It then evaluates the target, the behaviors and the uniform
// policy by Monte Carlo and stores everything in the same file.
//
// It needs SUMO (apt-get install -y sumo). Run it through go generate from
// the repository root:
//
//	go generate ./env/sumo
//
// or directly, e.g. to try other settings without overwriting anything:
//
//	go run ./internal/sumogen -out /tmp/sumo -pop 24 -steps 200
//
// The run is deterministic: the same flags give the same file on every
// machine with the same SUMO version (whatever -workers is), apart from
// the elapsed times.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/ihope-ope/ihope/sim/sumo"
	"github.com/ihope-ope/ihope/stream/tempdir"
	"gonum.org/v1/gonum/stat"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sumogen:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		out      = flag.String("out", ".", "directory for policies.json")
		seed     = flag.Uint64("seed", 2018, "random seed of the training")
		iters    = flag.Int("iters", 10, "CEM iterations (the last is the target)")
		pop      = flag.Int("pop", 40, "candidates per iteration")
		elite    = flag.Int("elite", 8, "elite candidates")
		episodes = flag.Int("episodes", 1, "episodes scoring a candidate")
		steps    = flag.Int("steps", 150, "steps per scoring episode")
		initStd  = flag.Float64("init-std", 3, "initial standard deviation of the weights")
		workers  = flag.Int("workers", 2, "SUMO processes at once")
		evalSeed = flag.Uint64("eval-seed", 7, "random seed of the evaluation")
		evalN    = flag.Int("eval-n", 10, "evaluation episodes per policy")
		evalT    = flag.Int("eval-T", 400, "evaluation episode length")
	)
	flag.Parse()
	if *iters < sumo.NumBehaviors+1 {
		return fmt.Errorf("-iters %d: need at least %d", *iters, sumo.NumBehaviors+1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	dir, err := tempdir.New("", "ihope-sumogen-") // named with the pid: a killed run's is removed by the next
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := sumo.Config{}
	net, err := sumo.Build(ctx, dir, cfg)
	if err != nil {
		return err
	}
	cem := sumo.CEM{Iterations: *iters, Population: *pop, Elite: *elite, Episodes: *episodes, Steps: *steps, InitStd: *initStd, Workers: *workers}
	start := time.Now()
	its, err := cem.Train(ctx, rand.New(rand.NewPCG(*seed, 0)), net, func(it sumo.Iteration) {
		fmt.Fprintf(os.Stderr, "iteration %2d: mean %7.2f elite %7.2f best %7.2f (%v)\n",
			it.Iteration, it.MeanScore, it.EliteScore, it.BestScore, time.Since(start).Round(time.Second))
	})
	if err != nil {
		return err
	}
	cem.Workers = 0
	rec := &sumo.Training{
		Comment: "Written by internal/sumogen (go generate ./env/sumo); " +
			"policies of a CEM run on the single intersection: the last iteration is the target, iterations 6-9 the behaviors.",
		Network: net.Config, Seed: *seed, CEM: cem, Iterations: its,
		Evaluation: sumo.Evaluation{Episodes: *evalN, Steps: *evalT, Seed: *evalSeed},
	}
	pols := []struct {
		name string
		pol  sumo.Policy
	}{{"uniform", sumo.Uniform(1)}, {"target", its[len(its)-1].Policy}}
	for k := 1; k <= sumo.NumBehaviors; k++ {
		pols = append(pols, struct {
			name string
			pol  sumo.Policy
		}{fmt.Sprintf("behavior-%d", k), its[len(its)-1-sumo.NumBehaviors+k-1].Policy})
	}
	for _, p := range pols {
		t0 := time.Now()
		r, err := net.AverageReward(ctx, rand.New(rand.NewPCG(*evalSeed, 0)), p.pol, *evalN, *evalT, *workers)
		if err != nil {
			return err
		}
		m, sd := stat.MeanStdDev(r, nil)
		e := sumo.EvaluatedPolicy{Name: p.name, Reward: m, StdErr: sd / math.Sqrt(float64(len(r))), Elapsed: time.Since(t0).Seconds()}
		rec.Evaluation.Policies = append(rec.Evaluation.Policies, e)
		fmt.Fprintf(os.Stderr, "%-10s average reward %7.3f ± %.3f (%d x %d steps, %.1fs)\n", e.Name, e.Reward, e.StdErr, *evalN, *evalT, e.Elapsed)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(*out, "policies.json"))
	if err != nil {
		return err
	}
	if err := rec.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s (%v)\n", f.Name(), time.Since(start).Round(time.Second))
	return f.Close()
}
