package ope

import (
	"fmt"
	"math"
	"slices"

	"github.com/ihope-ope/ihope/dataset"
	"github.com/ihope-ope/ihope/internal/quantile"
	"github.com/ihope-ope/ihope/kernelloss"
	"github.com/ihope-ope/ihope/mdp"
	"github.com/ihope-ope/ihope/policy"
	"github.com/ihope-ope/ihope/value"
)

// KishESS returns Kish's effective sample size of a set of weights,
//
//	ESS = (sum_i |v_i|)^2 / sum_i v_i^2,
//
// which is len(v) for equal weights and 1 when one weight carries all the
// mass. Absolute values are used so a ratio model with a few negative
// entries still gets a meaningful diagnostic. It returns 0 for no weights
// or all-zero weights.
func KishESS(v []float64) float64 {
	var s, s2 float64
	for _, x := range v {
		a := math.Abs(x)
		s += a
		s2 += a * a
	}
	if s2 == 0 {
		return 0
	}
	return s * s / s2
}

// MaxShare returns the largest weight's share of the total absolute weight,
// max_i |v_i| / sum_i |v_i| (0 for no or all-zero weights).
func MaxShare(v []float64) float64 {
	var s, m float64
	for _, x := range v {
		a := math.Abs(x)
		s += a
		if a > m || a != a { // math.Max's result, without its cost per call
			m = a
		}
	}
	if s == 0 {
		return 0
	}
	return m / s
}

// Collapse thresholds of WeightWarnings: a Kish effective sample size
// below these shares of the units, or one weight carrying more than
// maxShareWarn of the total with at least eight units.
const (
	essShareEpisodes = 0.05
	essShareSteps    = 0.005
	maxShareWarn     = 0.25
)

// WeightWarnings says in plain words when an estimator's weights collapse:
// a Kish effective sample size below 5% of the episodes (trajectory-wise
// weights) or 0.5% of the steps (step weights), or, with eight units or
// more, one weight carrying over a quarter of the total. Equal weights on
// a handful of units are not a collapse, and weights of UnitNone are not
// judged.
func WeightWarnings(name string, unit Unit, w []float64) []string {
	if len(w) < 2 || unit == UnitNone {
		return nil
	}
	return WeightSummaryWarnings(name, unit, SummarizeWeights(w))
}

// WeightSummaryWarnings is WeightWarnings from what the weights look
// like, for estimates that do not keep them (Sums).
func WeightSummaryWarnings(name string, unit Unit, ws WeightSummary) []string {
	n := ws.Units
	if n < 2 || unit == UnitNone {
		return nil
	}
	ess, share := ws.ESS, ws.MaxShare
	if ess == 0 {
		return []string{fmt.Sprintf("%s: every weight is 0 (the target never takes the logged actions), so its estimate carries no information", name)}
	}
	if collapsed(unit, ws) {
		return []string{fmt.Sprintf("%s: the weights collapse onto a few %ss (effective sample size %.1f of %d; the largest weight carries %.0f%% of the total); its estimate rests on very little data",
			name, unit, ess, n, 100*share)}
	}
	return nil
}

// collapsed reports whether weights that ws summarises collapse by the
// thresholds above: an ESS below their share of the units, or one weight
// carrying more than maxShareWarn of the total with eight units or more.
func collapsed(unit Unit, ws WeightSummary) bool {
	frac := essShareEpisodes
	if unit == UnitStep {
		frac = essShareSteps
	}
	return ws.ESS < frac*float64(ws.Units) || (ws.Units >= 8 && ws.MaxShare > maxShareWarn)
}

// RangeWarning says in plain words when estimate v of estimator name lies
// outside the range of the log's rewards (s.MinReward to s.MaxReward, and
// 0 if an episode ends in a terminal state, whose absorbing tail pays 0),
// "" otherwise. Every value ihope estimates is normalised, a weighted
// mean of the rewards the target earns, so it cannot leave that range
// unless the target earns rewards the log never shows: a value model or a
// signed ratio that extrapolates, or unnormalised weights that overshoot.
// On mountain-car logs whose rewards lie in [-1, 1] a linear fqe gave
// -4.46 (the truth 0.43) with nothing to say so.
func RangeWarning(name string, v float64, s dataset.Summary) string {
	lo, hi := s.MinReward, s.MaxReward
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	if s.Terminal > 0 {
		lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	}
	tol := 1e-9 * math.Max(1, math.Max(math.Abs(lo), math.Abs(hi)))
	if v >= lo-tol && v <= hi+tol {
		return ""
	}
	return fmt.Sprintf("%s: the estimate %.4g lies outside the range of the logged rewards, [%.4g, %.4g], which a normalised value cannot leave unless the target earns rewards the log never shows: its model extrapolates (or its weights overshoot), so do not trust it", name, v, lo, hi)
}

// HorizonWarning says, for the horizon estimand, when a log mixes
// terminal episodes with episodes cut off before its longest one, ""
// otherwise. A terminal episode is padded to the longest episode's length
// (its return collects zeros up to the horizon), a cut-off one keeps its
// own; so each episode's horizon depends on whether the behavior's
// episode happened to terminate, and the estimators read that mixture
// differently (on a random 10-state MDP with cut-offs uniform on 10..30,
// fqe -0.2497, dr -0.2410, mis -0.267; each episode's own cut-off would
// give -0.2625).
//
// When every episode terminated (before several lengths) it says instead
// that the horizon is the longest episode's length, which the data set:
// it grows with the number of episodes logged (39 steps at 200 episodes,
// 58 at 2000 on one world), and the value with it.
func HorizonWarning(s dataset.Summary, est Estimand) string {
	if est.OrDefault() != Horizon || s.Terminal == 0 {
		return ""
	}
	if s.Terminal == s.Episodes && s.Episodes > 1 && s.MinLength < s.MaxLength {
		return fmt.Sprintf("every episode ends in a terminal state, so the horizon is the longest episode's length, %d steps: the data set it, and it grows with the number of episodes logged; give a horizon by cutting the episodes at one length, or estimate the discounted long-run value (--gamma < 1 --estimand long-run)", s.MaxLength)
	}
	if s.MinCutOff == 0 || s.MinCutOff >= s.MaxLength {
		return ""
	}
	return fmt.Sprintf("the horizon value is ill-defined here: %d episodes end in a terminal state and are read to the longest episode's %d steps, while the episodes cut off keep their own lengths (from %d steps): each episode's horizon then depends on whether the behavior's episode terminated, and fqe, dr and mis read that mixture differently; cut every episode that did not terminate at one length, or estimate the discounted long-run value (--gamma < 1 --estimand long-run)",
		s.Terminal, s.MaxLength, s.MinCutOff)
}

// UnloggedWarning says when the target puts more than 5% of its
// probability, averaged over the logged steps, on actions never logged in
// their state, "" otherwise (and for real states or actions, or without
// the target_prob_k columns: dataset.Summary's UnloggedTarget, which a
// stream of shards sums in one pass as the whole log does). No estimator
// sees what those actions do:
// the ones that weigh logged actions leave them out, and the value
// models fill them in by pooling (an unlogged action is read as the
// behavior's mix of the logged ones, kernelloss.Chain), so every estimate
// then rests on an assumption the log cannot check. A support gap by
// design and a rare action by chance look alike here. Measured: 2.0% on
// the README's Taxi logs (n = 200, T = 400); 7.7% on a 5-state log whose
// target puts 0.9 on an action never logged in one state, where the
// estimators parted by up to 0.05 with nothing said.
func UnloggedWarning(s dataset.Summary) string {
	if s.UnloggedTarget <= 0.05 {
		return ""
	}
	where := fmt.Sprintf("%d states", s.UnloggedStates)
	if s.UnloggedStates == 1 {
		where = "1 state"
	}
	return fmt.Sprintf("support: the target puts %.1f%% of its probability, averaged over the logged steps, on actions never logged in their state (in %s): no estimator sees what those actions do; the weighting ones leave them out and the value models fill them in by pooling, so every estimate rests on an assumption the log cannot check", 100*s.UnloggedTarget, where)
}

// ImputedWarning says when the count model behind a tabular estimate
// (model-based, whose Result.Model is a *SolvedCountModel, or fqe with
// the tabular learner, a *value.TabularModel solved in a count model)
// sends more than 1% of the target's steps to state-action pairs the log
// never shows, "" otherwise (and for other models). The share is that of
// the model's own normalised visitation over the logged horizon
// (mdp.VisitationT from the logged starts, T the longest episode's
// length, weights gamma^t), each state weighted by the target's
// probability of its never-logged actions (a state never left counts
// whole). Those pairs' moves and rewards are imputed (value.CountModel's
// pooling), and a bootstrap over episodes cannot see the bias this
// leaves: on the paper's Taxi (n = 200, T = 400, behavior pi18) the share
// is 2.3% for pi19, where fqe errs by 0.012 (8.5%), and 4.7% for pi14,
// where it errs by 0.156 (22%, truth -0.703), with 95% bootstrap
// intervals [-0.537, -0.505] that exclude even the estimate; the board's
// Taxi cells held the truth in 5% of fqe's intervals. For a LongRun
// estimate the visitation runs longer: until gamma^t < 1e-6 (at least T
// steps) for gamma < 1, and 10 T steps for the average reward, a Cesàro
// mean that approaches the long-run visitation from the logged starts
// even where the count model's chain has several closed classes; both at
// most 5,000 steps or T if longer, so that it costs no more than an
// estimate.
func ImputedWarning(name string, T int, gamma float64, res Result) string {
	var m *value.CountModel
	var pi policy.Discrete
	switch mod := res.Model.(type) {
	case *SolvedCountModel:
		m, pi = mod.CountModel, mod.Target
	case *value.TabularModel:
		m, _ = mod.MDP().(*value.CountModel)
		pi = mod.Policy()
	}
	return imputedWarning(name, m, pi, T, gamma, res.Estimand)
}

// imputedLongRunSteps caps the steps of the long-run visitation of
// imputedWarning (never below the logged horizon).
const imputedLongRunSteps = 5000

// imputedWarning is ImputedWarning's reading of count model m under
// target pi.
func imputedWarning(name string, m *value.CountModel, pi policy.Discrete, T int, gamma float64, est Estimand) string {
	if m == nil || pi == nil || T <= 0 || pi.NumActions() != m.NumActions() {
		return ""
	}
	over := "over the logged horizon"
	if est == LongRun {
		// Capped at imputedLongRunSteps beyond the logged horizon: the
		// chain is pushed once per step, and at gamma = 0.9999 the
		// uncapped run took 1.75 s on Taxi, for each of five estimators.
		if gamma < 1 {
			T = max(T, min(int(math.Ceil(math.Log(1e-6)/math.Log(gamma))), imputedLongRunSteps))
			over = fmt.Sprintf("over the discounted long run, %d steps", T)
		} else {
			T = max(T, min(10*T, imputedLongRunSteps))
			over = fmt.Sprintf("over %d steps, for the long run", T)
		}
	}
	visit := mdp.VisitationT(m, pi, nil, T, gamma)
	share, states := 0.0, 0
	for s, p := range visit {
		if p == 0 {
			continue
		}
		mass := 0.0
		for a := range m.NumActions() {
			if m.Visits(s, a) == 0 {
				mass += pi.Prob(s, a)
			}
		}
		if mass > 0 {
			share += p * mass
			states++
		}
	}
	if share <= 0.01 {
		return ""
	}
	return fmt.Sprintf("%s: %.1f%% of the target's steps in its count model (%s, in %d states) fall on state-actions the log never shows; their moves and rewards are filled in from the state's logged actions, so the estimate carries a bias that its bootstrap interval cannot see (compare dr and bch-tabular, which weigh only logged steps)", name, 100*share, over, states)
}

// DataWarnings says in plain words what in a log's summary makes
// off-policy estimates fragile: steps whose policy ratio exceeds 1e6 (the
// behavior hardly ever takes actions the target favours), and episodes
// whose last step has no next state (the density-ratio estimators cannot
// use it as a transition).
func DataWarnings(s dataset.Summary) []string {
	// The warning of episodes that end without a next state is given
	// only where OpenEndingsMatter; elsewhere it is the normal shape of
	// other tools' exports, and the summary of the data says it.

	var out []string
	if s.LargeRatio > 0 {
		steps := fmt.Sprintf("%d logged steps have", s.LargeRatio)
		if s.LargeRatio == 1 {
			steps = "1 logged step has"
		}
		out = append(out, fmt.Sprintf("support: %s pi/pi0 > 1e6 (first: episode %q, t = %d, ratio %.3g): the behavior policy hardly ever takes actions the target favours there, so every importance-weighted estimate is fragile",
			steps, s.FirstLarge.Episode, s.FirstLarge.T, s.FirstLarge.Ratio))
	}
	if OpenEndingsMatter(s) {
		what := fmt.Sprintf("%d episodes end without next_state: their last steps are", s.OpenEndings)
		if s.OpenEndings == 1 {
			what = "1 episode ends without next_state: its last step is"
		}
		out = append(out, what+" used for rewards but not as a transition by the density-ratio estimators")
	}
	return out
}

// OpenEndingsMatter reports whether the episodes that end without a
// next state (cut off, with no final next_state) are more than a tenth
// of the steps. Every such episode's last step counts for the rewards
// but gives no transition, so the estimators that learn from
// transitions (the value and density-ratio models: fqe, dr, mwl, mql,
// dualdice, bch-*) fit on fewer transitions than there are steps, and
// on a state distribution tilted away from the episodes' ends. d3rlpy,
// Open Bandit Pipeline and SCOPE-RL write no final next state, so on
// their episodes of tens or hundreds of steps this drops a few percent
// of the transitions at random ends: a loss of data, not a change the
// user must act on, and a warning on every such log would be noise.
// Above a tenth (episodes of fewer than 10 steps on average, one-step
// episodes cut off, where those estimators have nothing to fit and fail)
// it changes what they can estimate, and is warned about. The estimators
// that weigh whole episodes or steps (naive, is-*, wis-*) use every
// reward either way.
func OpenEndingsMatter(s dataset.Summary) bool {
	return s.OpenEndings > 0 && 10*s.OpenEndings > s.Steps
}

// ConflictWarnings says in plain words when a log gives one discrete
// (state, action) pair two behavior probabilities
// (dataset.FindBehaviorConflict), naming the first two steps that
// disagree.
func ConflictWarnings(c dataset.BehaviorConflict) []string {
	if c.Pairs == 0 {
		return nil
	}
	more := ""
	if c.Pairs > 1 {
		more = fmt.Sprintf(" (and %d more (state, action) pairs disagree)", c.Pairs-1)
	}
	return []string{fmt.Sprintf("behavior_prob: state %d, action %d is logged with probability %.6g (episode %q, t = %d) and %.6g (episode %q, t = %d)%s: "+
		"either the logging policy depended on something the state column does not hold (a stochastic, state-dependent logging that no model of pi0(a|s) can see) or the logging has a bug; "+
		"the importance weights take every logged probability as given",
		c.State, c.Action, c.First.Prob, c.First.Episode, c.First.T, c.Second.Prob, c.Second.Episode, c.Second.T, more)}
}

// startTail is the share of the logged states beyond which StartWarning
// counts a start state as outside the log's states, and startFewEpisodes
// the number of episodes from which it is silent.
const (
	startTail        = 0.005
	startFewEpisodes = 5
)

// StartWarning says when a value model is read where the log has few
// states: a log of fewer than startFewEpisodes episodes (a continuing
// log, say) most of whose episodes start farther from the logged states'
// mean (in distance of the states scaled per dimension by their standard
// deviation) than 99.5% of the other logged states are, "" otherwise and
// for discrete states. fqe and mql read their value model at the start
// states (except for the average reward, gamma = 1); a polynomial or a
// network fitted to the bulk of the log extrapolates there. Measured by
// an audit: one continuing episode of 20,000 steps on a 3-d
// linear-Gaussian world whose start lay at distance 4.46, beyond all but
// 0.35% of the logged states, gamma = 0.95: mql (degree 4) gave -0.826
// against a truth of 0.024, fqe 0.012, with nothing said. With many
// episodes the starts and their first steps give the model data where it
// is read: on 40 and 200 episodes of the same world started off its
// stationary law, 23 of 40 and 107 of 200 starts lay that far out while
// fqe and mql erred by 0.013 or less. The quantile is quantile.Type7,
// ihope's one rule.
func StartWarning(name string, d *dataset.Dataset) string {
	if d == nil || d.Discrete() || d.StateDim == 0 || d.NumEpisodes() == 0 || d.NumEpisodes() >= startFewEpisodes || d.NumSteps() == 0 {
		return ""
	}
	mean, scale := kernelloss.Scaling(d)
	dist := func(obs []float64) float64 {
		s := 0.0
		for k, v := range obs {
			z := (v - mean[k]) / scale[k]
			s += z * z
		}
		return math.Sqrt(s)
	}
	// The reference is every logged state but the starts themselves (on
	// a short log a start would otherwise be its own 99.5th percentile).
	var all []float64
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		for j := lo + 1; j < hi; j++ {
			all = append(all, dist(d.ObsAt(j)))
		}
	}
	if len(all) == 0 {
		return ""
	}
	slices.Sort(all)
	edge := quantile.Type7(all, 1-startTail)
	out, worst := 0, 0.0
	for e := range d.NumEpisodes() {
		lo, _ := d.Span(e)
		z := dist(d.ObsAt(lo))
		if z > edge {
			out++
		}
		worst = max(worst, z)
	}
	if 2*out <= d.NumEpisodes() {
		return ""
	}
	return fmt.Sprintf("%s: %d of %d episodes start farther out than %.1f%% of the logged states (standardised distance from their mean up to %.2f, against %.2f for that share): the estimate reads the value model there, where the log has few states and the model extrapolates; compare the other estimators, and trust them where they agree",
		name, out, d.NumEpisodes(), 100*(1-startTail), worst, edge)
}
