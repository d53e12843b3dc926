package ope_test

import (
	"fmt"
	"math"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
)

// Two logged episodes of two steps. The behavior took each logged action
// with probability 0.25 or 0.5 and the target would have taken it with
// probability 0.5 or 0.25, so the per-step ratios are 2 and 1/2.
func ExampleStepwiseWIS() {
	step := func(behavior, target, reward float64) dataset.Step {
		return dataset.Step{Reward: reward, HasNext: true, LogBehavior: math.Log(behavior), LogTarget: math.Log(target)}
	}
	d, err := dataset.New(1, 2, []dataset.Episode{
		{ID: "a", Steps: []dataset.Step{step(0.25, 0.5, 1), step(0.5, 0.25, 0)}},
		{ID: "b", Steps: []dataset.Step{step(0.5, 0.25, 0), step(0.25, 0.5, 1)}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Average reward (gamma = 1): gamma_t = 1/2.
	// Step 0: weights w_{0:0} = (2, 1/2), Z_0 = 5/2.
	// Step 1: weights w_{0:1} = (1, 1),   Z_1 = 2.
	// R = 1/2 (2*1 + 1/2*0)/(5/2) + 1/2 (1*0 + 1*1)/2 = 2/5 + 1/4.
	res, err := (&ope.StepwiseWIS{}).Estimate(d, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %.4f\n", (&ope.StepwiseWIS{}).Name(), res.Value)
	fmt.Printf("step weights: %.3f\n", res.Weights)
	fmt.Printf("effective sample size: %.3f of %d steps\n", ope.KishESS(res.Weights), len(res.Weights))

	naive, _ := (&ope.Naive{}).Estimate(d, 1)
	fmt.Printf("naive: %.4f\n", naive.Value)
	// Output:
	// wis-stepwise: 0.6500
	// step weights: [0.400 0.250 0.100 0.250]
	// effective sample size: 3.390 of 4 steps
	// naive: 0.5000
}
