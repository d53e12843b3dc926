package experiment_test

import (
	"context"
	"fmt"
	"os"

	"github.com/ihope-ope/ihope/figure/results"
	"github.com/ihope-ope/ihope/research/experiment"
)

// A coin-flip experiment: the share of heads in n flips estimates 1/2,
// with MSE 1/(4n). Each cell draws its flips from Cell.Rand, so the
// numbers are the same on every machine and for any number of workers.
func Example() {
	coin := &experiment.Experiment{
		Name: "coin",
		Panels: func(quick bool) ([]experiment.Panel, error) {
			p := experiment.Panel{Name: "n", XName: "n", Kind: results.KindMSE}
			for _, n := range []int{10, 1000} {
				p.Settings = append(p.Settings, experiment.Setting{
					ID: fmt.Sprintf("n=%d", n), X: float64(n),
					Run: func(ctx context.Context, c *experiment.Cell) (*experiment.Outcome, error) {
						rng := c.Rand("flips")
						heads := 0
						for range n {
							if rng.Float64() < 0.5 {
								heads++
							}
						}
						share := float64(heads) / float64(n)
						return &experiment.Outcome{Truth: 0.5, TruthMethod: "exact",
							Records: []results.Record{{Estimator: "share", Estimate: results.Float(share)}}}, nil
					},
				})
			}
			return []experiment.Panel{p}, nil
		},
	}
	dir, err := os.MkdirTemp("", "coin")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	sum, err := (&experiment.Runner{Dir: dir, Seeds: 200}).Run(context.Background(), coin)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(sum.Lines), "cells")
	for _, s := range results.SummarizeMSE(sum.Panels[0], sum.Lines) {
		for _, pt := range s.Points {
			fmt.Printf("%s: MSE %.5f, 5-95%% band [%.5f, %.5f], theory %.5f\n", pt.Setting, pt.Mean, pt.Lo, pt.Hi, 0.25/pt.X)
		}
	}
	// Output:
	// 400 cells
	// n=10: MSE 0.02530, 5-95% band [0.02140, 0.02920], theory 0.02500
	// n=1000: MSE 0.00024, 5-95% band [0.00021, 0.00028], theory 0.00025
}
