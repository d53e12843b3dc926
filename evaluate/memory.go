package evaluate

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
)

// Memory is checked before it is asked for: what a run would need beyond
// the log it has read is estimated from the log's sizes, and a run that
// would exceed --max-memory is refused up front with what it would take
// and what to do, rather than killed by the system (or crashing with
// "runtime: out of memory") minutes later.

// targetCellBytes is what expanding a --target-policy to every step costs
// per step and action: the whole distribution pi(.|s_j) at each step,
// held while the estimators run. Measured (RSS over steps x actions):
// 17.1 bytes for 5,000 steps x 10,000 actions (857 MB), 15.8 for the
// audit's 50,000 x 10,000 (7.9 GB).
const targetCellBytes = 17

// tableCellBytes is the least a tabular model costs per (state, action)
// pair of the id space: one float64. Models keep several such tables, so
// this is a lower bound: the check refuses only what surely exceeds the
// limit.
const tableCellBytes = 8

// defaultMemoryShare is the share of the machine's memory (MemTotal in
// /proc/meminfo) a run may plan to use without --max-memory.
const defaultMemoryShare = 0.5

// fallbackMemory is the limit where /proc/meminfo cannot be read (not
// Linux): 4 GiB.
const fallbackMemory = 4 << 30

// memoryLimit returns the limit in bytes --max-memory gives (flag, as
// 512MB, 8GB, 1.5TB, or a number of bytes; "" for the default) and how
// it was set, for the message.
func memoryLimit(flag string) (int64, string, error) {
	if flag == "" {
		if total, ok := memTotal(); ok {
			return int64(defaultMemoryShare * float64(total)), "half this machine's memory", nil
		}
		return fallbackMemory, "the default where the machine's memory is unknown", nil
	}
	n, err := parseBytes(flag)
	if err != nil {
		return 0, "", usagef("--max-memory %s: %v", flag, err)
	}
	return n, "--max-memory", nil
}

// parseBytes reads a size: a number with an optional unit KB, MB, GB, TB
// (powers of 1024; K, M, G, T and KiB, ... too).
func parseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range []struct {
		suffix string
		m      float64
	}{{"TIB", 1 << 40}, {"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10},
		{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10},
		{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || !(x > 0) || x*mult > 1<<62 {
		return 0, fmt.Errorf("want a size such as 512MB or 8GB")
	}
	return int64(x * mult), nil
}

// memTotal reads MemTotal from /proc/meminfo, in bytes.
func memTotal() (int64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			return kb << 10, err == nil && kb > 0
		}
	}
	return 0, false
}

// memoryNeed is one thing a run would hold, in bytes.
type memoryNeed struct {
	what  string
	bytes float64
}

// checkMemory refuses a run on d whose planned memory exceeds the limit:
// the target policy expanded to every step (target given, not already
// in the log's columns), and, where the target's whole distribution is
// known on discrete states, a states x actions table for each estimator
// named that keeps one (tableEstimators).
func checkMemory(d *dataset.Dataset, target *Target, names []string, limit int64, how string) error {
	if !d.Discrete() || d.ActionDim > 0 {
		return nil
	}
	var needs []memoryNeed
	K := float64(d.NumActions)
	if target != nil && target.Policy != nil {
		K = float64(max(d.NumActions, target.Policy.NumActions()))
		needs = append(needs, memoryNeed{fmt.Sprintf("the target policy %s's distribution at every step (%d steps x %.0f actions x %d B)",
			target.Name, d.NumSteps(), K, targetCellBytes), float64(d.NumSteps()) * K * targetCellBytes})
	}
	var tabular []string
	for _, name := range names {
		if tableEstimators[name] && (target != nil && target.Policy != nil || d.HasTargetProbs()) {
			tabular = append(tabular, name)
		}
	}
	if len(tabular) > 0 {
		cells := float64(d.NumStates) * K
		needs = append(needs, memoryNeed{fmt.Sprintf("at least one table of %d states x %.0f actions x %d B for each of %s",
			d.NumStates, K, tableCellBytes, strings.Join(tabular, ", ")), cells * tableCellBytes * float64(len(tabular))})
	}
	total := 0.0
	for _, n := range needs {
		total += n.bytes
	}
	if total <= float64(limit) {
		return nil
	}
	var parts []string
	for _, n := range needs {
		parts = append(parts, fmt.Sprintf("%s: %s", n.what, formatBytes(n.bytes)))
	}
	return fmt.Errorf("this run would need at least %s beyond the log (%s), more than the %s allowed (%s): "+
		"run fewer estimators (naive, wis-trajectory, wis-stepwise, mis and bch-tabular keep no such table), "+
		"give the target's probability of the logged action in a target_prob column instead of its whole distribution, "+
		"renumber the states and actions densely, split the log into shards read one at a time (--data 'shards/*.parquet'), "+
		"or raise --max-memory if the machine has it",
		formatBytes(total), strings.Join(parts, "; "), formatBytes(float64(limit)), how)
}

// tableEstimators keep a table over every (state, action) id pair on
// discrete states: the fitted MDP, the tabular value models, the tabular
// minimax forms.
var tableEstimators = map[string]bool{"model-based": true, "fqe": true, "dr": true, "mwl": true, "mql": true, "dualdice": true}

// formatBytes writes a size in the largest unit under it (1.5 GB).
func formatBytes(b float64) string {
	for _, u := range []struct {
		name string
		size float64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}} {
		if b >= u.size {
			return fmt.Sprintf("%.3g %s", b/u.size, u.name)
		}
	}
	return fmt.Sprintf("%.0f B", b)
}

// CheckMemory checks the run of the estimators asked for (or the
// default set) on d for target against --max-memory.
func (c *Evaluator) CheckMemory(d *dataset.Dataset, target *Target) error {
	limit, how, err := memoryLimit(c.MaxMemory)
	if err != nil {
		return err
	}
	names := c.Estimators
	if len(names) == 0 {
		for _, name := range LogEstimators {
			if en, _ := ope.Lookup(name); en.Default() {
				names = append(names, name)
			}
		}
	}
	return checkMemory(d, target, names, limit, how)
}
