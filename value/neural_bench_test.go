package value

import (
	"math/rand/v2"
	"testing"

	"github.com/ihope-ope/ihope/sim/pendulum"
	"github.com/ihope-ope/ihope/sim/rollout"
)

// BenchmarkNeuralPendulum times Neural.Fit with the default settings on
// the paper's Pendulum logs: 150 episodes of 1000 steps under the
// behavior (1-alpha) pi_* + alpha pi_+ with alpha = 1, target pi_*,
// gamma = 0.99, 16 target actions drawn per state. It reports the
// normalised value (1 - gamma) mean_i v(s_0^i) over the logged first
// states ("value") beside the target's on-policy value from 2000
// rollouts of 1000 steps ("truth", standard error about 0.02). Run it
// with -benchtime 1x: one fit takes about 40 s.
func BenchmarkNeuralPendulum(b *testing.B) {
	target := pendulum.DefaultTarget()
	beh, err := pendulum.Behavior(1)
	if err != nil {
		b.Fatal(err)
	}
	var env pendulum.Pendulum
	const gamma = 0.99
	d, err := rollout.SampleContinuous(rand.New(rand.NewPCG(1, 2)), env, beh, target, 150, 1000)
	if err != nil {
		b.Fatal(err)
	}
	truth, _, err := rollout.Evaluate(rand.New(rand.NewPCG(3, 3)), env, target, 2000, 1000, gamma)
	if err != nil {
		b.Fatal(err)
	}
	starts := d.Head(d.NumEpisodes(), 1)
	pi := Target{Continuous: target, Seed: 1}
	var value float64
	var iters int
	for b.Loop() {
		m, err := Neural{Seed: 1}.FitNeural(d, gamma, pi)
		if err != nil {
			b.Fatal(err)
		}
		_, v, _, err := m.Values(starts)
		if err != nil {
			b.Fatal(err)
		}
		value = 0
		for _, x := range v {
			value += x
		}
		value *= (1 - gamma) / float64(len(v))
		iters = m.Iterations
	}
	b.ReportMetric(value, "value")
	b.ReportMetric(truth, "truth")
	b.ReportMetric(float64(iters), "iterations")
}
