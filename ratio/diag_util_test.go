package ratio

import (
	"os"
	"slices"
	"strconv"

	"github.com/ihope-ope/ihope/value"
)

func slicesSort(s []float64) { slices.Sort(s) }
func atoi(s string) int      { v, _ := strconv.Atoi(s); return v }

func diagConfigs() []value.MinimaxNeural {
	all := []value.MinimaxNeural{
		{Seed: 1, BatchSize: 4096},
		{Seed: 1, BatchSize: 8192},
		{Seed: 2, BatchSize: 4096},
		{Seed: 3, BatchSize: 4096},
		{Seed: 1, BatchSize: 4096, MaxIter: 2000},
		{Seed: 1, BatchSize: 2048},
	}
	if v := os.Getenv("DIAG_CFG"); v != "" {
		var out []value.MinimaxNeural
		for _, c := range v {
			out = append(out, all[c-'0'])
		}
		return out
	}
	return all
}
