package sumo

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
)

//go:generate go run ../../internal/sumogen -out .

//go:embed policies.json
var policiesJSON []byte

// Training is the record of the CEM run whose policies ship with ihope
// (policies.json, written by internal/sumogen): the network and settings
// it ran with, every iteration's policy, and a Monte Carlo evaluation of
// the target, the behaviors and the uniform policy.
type Training struct {
	Comment    string      `json:"comment"`
	Network    Config      `json:"network"`
	Seed       uint64      `json:"seed"`
	CEM        CEM         `json:"cem"`
	Iterations []Iteration `json:"iterations"`
	Evaluation Evaluation  `json:"evaluation"`
}

// Evaluation holds average rewards per step (minus the mean number of
// vehicles on the detectors), each the mean over Episodes episodes of
// Steps steps after the warm-up, with its standard error.
type Evaluation struct {
	Episodes int    `json:"episodes"`
	Steps    int    `json:"steps"`
	Seed     uint64 `json:"seed"`
	// Policies are "uniform", "target" and "behavior-1" ... "behavior-4".
	Policies []EvaluatedPolicy `json:"policies"`
}

// EvaluatedPolicy is one line of an Evaluation.
type EvaluatedPolicy struct {
	Name    string  `json:"name"`
	Reward  float64 `json:"reward"`
	StdErr  float64 `json:"stderr"`
	Elapsed float64 `json:"elapsed_seconds"`
}

// WriteJSON writes the record as indented JSON.
func (t *Training) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadTraining reads a record written by WriteJSON and validates its
// policies.
func ReadTraining(r io.Reader) (*Training, error) {
	var t Training
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("sumo: read training record: %w", err)
	}
	for i, it := range t.Iterations {
		if it.Policy == nil {
			return nil, fmt.Errorf("sumo: training record: iteration %d has no policy", i+1)
		}
		if err := it.Policy.Validate(); err != nil {
			return nil, fmt.Errorf("sumo: training record: iteration %d: %w", i+1, err)
		}
	}
	return &t, nil
}

// Shipped returns the record of the shipped training run (a new copy on
// every call).
func Shipped() *Training {
	t, err := ReadTraining(bytes.NewReader(policiesJSON))
	if err != nil {
		// The file is generated and tested with the package; a failure
		// here is a build mistake, not a user error.
		panic(fmt.Sprintf("sumo: embedded policies.json: %v", err))
	}
	if len(t.Iterations) < 10 {
		panic(fmt.Sprintf("sumo: embedded policies.json has %d iterations, want 10", len(t.Iterations)))
	}
	return t
}

// NumBehaviors is the number of shipped behavior policies.
const NumBehaviors = 4

// Target returns pi_*, the paper's target policy: the policy of the last
// (10th) CEM iteration, for the given number of lights.
func Target(lights int) *LinearSoftmax {
	t := Shipped()
	return t.Iterations[len(t.Iterations)-1].Policy.WithLights(lights)
}

// Behavior returns behavior policy k = 1..4, the policy of CEM iteration
// 5+k (iterations 6 to 9, the x-ticks 1-4 of the paper's Figure 4(c)),
// for the given number of lights.
func Behavior(k, lights int) (*LinearSoftmax, error) {
	if k < 1 || k > NumBehaviors {
		return nil, fmt.Errorf("sumo: behavior policy %d, want 1 to %d", k, NumBehaviors)
	}
	t := Shipped()
	return t.Iterations[len(t.Iterations)-1-NumBehaviors+k-1].Policy.WithLights(lights), nil
}
