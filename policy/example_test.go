package policy_test

import (
	"fmt"

	"github.com/ihope-ope/ihope/policy"
)

// The paper builds behavior policies as mixtures of a target and an
// earlier, worse policy.
func ExampleMixture() {
	target, _ := policy.NewTabular([][]float64{{0.9, 0.1}})
	earlier, _ := policy.NewTabular([][]float64{{0.5, 0.5}})
	behavior, _ := policy.Mixture(0.5, target, earlier)
	fmt.Printf("%.2f %.2f\n", behavior.Prob(0, 0), behavior.Prob(0, 1))
	// Output: 0.70 0.30
}

func ExampleSoftmaxQ() {
	p, _ := policy.SoftmaxQ([][]float64{{1, 2, 3}}, 2)
	fmt.Printf("%.4f\n", p.Row(0))
	// Output: [0.1863 0.3072 0.5065]
}
