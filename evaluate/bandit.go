package evaluate

import (
	"fmt"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/ope"
)

// banditEstimators are estimate's default estimators under --bandit, the
// contextual bandit's standard four: IPW (is-trajectory), SNIPW
// (wis-trajectory), the direct method (fqe, whose value model is then
// one step: q(s, a) = E[r | s, a], the absorbing state after it worth 0)
// and DR (dr, with a state ratio of 1). The estimators of the long run
// are left out: a one-step episode has no long run.
var banditEstimators = []string{"is-trajectory", "wis-trajectory", "fqe", "dr"}

// defaultEstimators returns the estimators estimate runs when
// --estimators is not given, and whether each must be in the default
// set of the registry (ope.Entry.Default) to run: under --bandit the
// four above, all of them.
func (c *Evaluator) defaultEstimators() (names []string, registryDefault bool) {
	if c.Bandit {
		return banditEstimators, false
	}
	return LogEstimators, true
}

// banditEstimand is the estimand under --bandit: the horizon value (of
// one step, the bandit's value), even for a log of one row, which
// ope.DefaultEstimand would read as one long episode.
func (c *Evaluator) banditEstimand(est ope.Estimand) ope.Estimand {
	if c.Bandit && c.Estimand == "" {
		return ope.Horizon
	}
	return est
}

// openEndingsNote is what the summary line says of the episodes that end
// without a next state when that is no warning (ope.OpenEndingsMatter):
// the normal shape of d3rlpy's, Open Bandit Pipeline's and SCOPE-RL's
// exports.
func openEndingsNote(d DataSummary) string {
	if d.OpenEndings == 0 || ope.OpenEndingsMatter(dataset.Summary{OpenEndings: d.OpenEndings, Steps: d.Steps}) {
		return ""
	}
	return fmt.Sprintf("; %d without a final next_state (their last steps count for the rewards, not as transitions)", d.OpenEndings)
}
