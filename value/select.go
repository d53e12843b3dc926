package value

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/ihope-ope/ihope/dataset"
)

// Candidate is one function class a Select chooses among: a learner and
// the name a result reports it by ("poly4", "rff50-bw1").
type Candidate struct {
	Name    string
	Learner Learner
}

// Score is a candidate's held-out Bellman score (see Select): its
// projected Bellman error on the test class and the jackknife standard
// error over episodes.
type Score struct {
	Name      string
	Score, SE float64
}

// Selection is what a Select chose and why: the winner's name and every
// candidate's held-out score, in the order of the candidates. Scores is
// nil when there was nothing to choose from (one candidate, or fewer
// than two episodes to make folds of).
type Selection struct {
	Winner string
	Scores []Score
}

// Chooser is implemented by learners that choose their function class
// from the data (Select). ope's dr calls Choose once on the whole log and
// cross-fits the winner, instead of choosing again inside every fold.
type Chooser interface {
	Choose(d *dataset.Dataset, gamma float64, pi Target) (Learner, Selection, error)
}

// DefaultSelectFolds is Select's number of folds when Folds is 0.
const DefaultSelectFolds = 5

// selectStream is the second word of the PCG state that shuffles the
// episodes into folds ("linsel" in ASCII), mixed with Select.Seed.
const selectStream = 0x6c696e73656c

// Select is a value learner that chooses its function class from the
// data by a held-out Bellman criterion, then refits the winner on all of
// the data.
//
// The folds. The distinct episode ids (copies of an episode in a
// bootstrap resample share one) are put in their natural order
// (Dataset.IDOrder), shuffled by a PCG seeded by Seed, and dealt into K =
// Folds folds (DefaultSelectFolds; at most the number of distinct ids).
// Every candidate is fitted on K - 1 folds and scored on the held-out
// one, each fold in turn, so that every episode is held out once. The
// Linear candidates' fits share one pass over the data (fitFolds: the
// moments of each fold summed once, for the largest polynomial degree,
// with the features standardised over all of d; a smaller degree's
// moments are a block of those).
//
// The criterion is the held-out projected Bellman error of the fitted
// model on a rich polynomial test class F (projectedScores): with the
// held-out residuals
//
//	delta_j = r_j + gamma v(s'_j) - q(s_j, a_j)   (minus rho for gamma = 1),
//
// over the held-out transitions j with a known next state (a
// finite-horizon model reads q^h and v^(h-1), Model.Values), v(s') =
// sum_a pi(a|s') q(s', a), the score estimates ||Pi_F (Bq - q)||^2 by a
// U-statistic over pairs of distinct held-out episodes of one fold, which
// has no double-sampling term. The held-out squared TD residual, the
// baseline of Zhang and Jiang (2021), "Towards hyperparameter-free policy
// selection for offline reinforcement learning", adds the conditional
// variance E[Var(r + gamma v(s') | s, a)], which rewards a flat v: on the
// point mass it chose degree 2 on 1 seed in 10 and erred 2.4 times the
// best fixed degree at gamma 1; the projected error chose degree 4 on
// every seed and erred as the best fixed degree did.
//
// The winner is the candidate of least score: Select returns the argmin
// of its own held-out scores (a failed fit, or a score that is not
// finite, is never chosen; if every candidate fails, their errors are
// returned). The one-standard-error rule (the simplest class within one
// SE of the least) was tried: on the point mass degree 4's score was as
// noisy as it was small on 2 seeds of 20, and the rule fell back to
// degree 2 (error 0.1) where the argmin kept degree 4; on the
// linear-Gaussian systems the two erred alike.
//
// With Candidates nil the classes are LinearCandidates(d, Finite):
// polynomial degrees 2 to 6 within the feature cap.
//
// Escalation. Where the winner fails the held-out test (Misfit: its
// score more than MisfitZ standard errors above zero, so no candidate
// holds q) on a discounted, stationary fit, the Escalate classes are
// scored on the same folds, and the least score of all wins. ope's
// default escalates to a network (value.Neural), which costs some 5 fits
// of 10 to 25 s each and is tried only where the cheap classes failed:
// on discounted Pendulum it scored 0.07 to 0.09 against degree 6's 1.4
// to 1.5, and fqe erred 0.03 to 0.06 against 1.4 to 1.9 (docs/methods.md).
// A class that fails to fit gets no score, as any candidate.
//
// With fewer than two distinct episodes there are no folds, and the
// first candidate is used without a score.
//
// The name is the candidates' (Linear's "linear" for the default set),
// so that a row reports the learner as before and its class in
// Selection.Winner.
type Select struct {
	// Candidates are the classes; nil: LinearCandidates(d, Finite).
	Candidates []Candidate
	// Finite asks for finite-horizon models (the default candidates are
	// fitted with Linear's Finite).
	Finite bool
	// Folds is the number of folds; 0: DefaultSelectFolds.
	Folds int
	// Seed shuffles the episodes into folds.
	Seed uint64
	// Escalate are classes scored only when the best of Candidates fails
	// the held-out Bellman test (Misfit) on a discounted, stationary fit
	// (gamma < 1, not Finite): the costly ones, such as a network
	// (ope's default adds value.Neural).
	Escalate []Candidate
}

// MisfitZ is the held-out test of a class Select chose: its projected
// Bellman error, zero in expectation where the class holds q (up to the
// fit's own noise), more than MisfitZ standard errors above zero (one
// sided, at 2.3%). It gates cost, not the choice: a class it lets in
// still has to win on its held-out score. On the linear-Gaussian systems
// (q quadratic) the chosen degree's score stayed within 1 SE of zero; on
// the point mass of sim/pointmass, degree 4 (fqe within 1.1 times the
// best fixed degree) scored 0.9 to 2.2 SE, and where that lets the
// network in, it loses (0.03 to 0.2 against degree 4's 0.015 to 0.05,
// seeds 1-3 at gamma = 0.99) and costs some 50 s on 20,000 steps; on
// Pendulum, where every degree but the third errs by 1.3 or more at
// gamma = 0.99, degree 6 scored 2.75 to 6.6 SE on 20 seeds of 150
// episodes (1.1 on one log of 60), and the network 0.07 to 0.09 against
// its 1.4 to 1.5.
const MisfitZ = 2.0

// Misfit reports whether a selection's winner fails the held-out
// Bellman test (MisfitZ): no candidate holds the log's q.
func Misfit(sel Selection) bool {
	for _, sc := range sel.Scores {
		if sc.Name == sel.Winner {
			return sc.Score > MisfitZ*sc.SE
		}
	}
	return false
}

// escalates reports whether Choose scores the Escalate classes after
// sel: the classes failed the test, and the model is stationary and
// discounted (value.Neural fits no average-reward or finite-horizon q).
func (s Select) escalates(gamma float64, sel Selection) bool {
	return len(s.Escalate) > 0 && gamma < 1 && !s.Finite && Misfit(sel)
}

// winnerScore is the held-out score of a selection's winner.
func winnerScore(sel Selection) float64 {
	for _, sc := range sel.Scores {
		if sc.Name == sel.Winner {
			return sc.Score
		}
	}
	return math.Inf(1)
}

var (
	_ Learner   = Select{}
	_ Chooser   = Select{}
	_ Horizoned = Select{}
)

// Name returns the name of the first candidate, "linear" for the default
// set.
func (s Select) Name() string {
	if len(s.Candidates) > 0 {
		return s.Candidates[0].Learner.Name()
	}
	return Linear{}.Name()
}

// FitsHorizon reports Finite.
func (s Select) FitsHorizon() bool { return s.Finite }

// WithSeed returns s with another fold seed.
func (s Select) WithSeed(seed uint64) Learner { s.Seed = seed; return s }

// Fit chooses the class (Choose) and fits it on all of d. The model is a
// *SelectedModel.
func (s Select) Fit(d *dataset.Dataset, gamma float64, pi Target) (Model, error) {
	l, sel, err := s.Choose(d, gamma, pi)
	if err != nil {
		return nil, err
	}
	m, err := l.Fit(d, gamma, pi)
	if err != nil {
		return nil, err
	}
	return &SelectedModel{Model: m, Selection: sel}, nil
}

// SelectedModel is a Select's fit: the winner's model, refitted on all the
// data, and the selection that chose it.
type SelectedModel struct {
	Model
	Selection Selection
}

// linearCap is LinearCandidates' rule: at most one feature per
// linearStepsPerFeature fitted transitions.
const linearStepsPerFeature = 20

// LinearCandidates returns the default classes of Select for the logs d:
// Linear's polynomial features of degree 2, 3, ..., 6 ("poly2" ...
// "poly6"), with Finite, keeping the degrees whose number of features is
// at most one per 20 logged steps (the feature counts grow as
// C(k + degree, degree) in the k state components, times the number of
// discrete actions, or in the k + m state and action components for real
// actions; on a 2-d state with 5 actions degree 6 has 140 features,
// enough for 2,800 steps), and degree 2 always (the class before
// selection, exact where q is quadratic). Random Fourier features are not
// in the default set: on the point mass of sim/pointmass they cost 4 to
// 10 times a polynomial fit and were never chosen (see docs); a caller
// may add them as candidates (Linear with Features "rff").
func LinearCandidates(d *dataset.Dataset, finite bool) []Candidate {
	n := d.NumSteps()
	out := []Candidate{}
	for deg := 2; deg <= 6; deg++ {
		p := linearFeatureCount(d, deg)
		if deg > 2 && (p < 0 || p*linearStepsPerFeature > n) {
			break
		}
		out = append(out, Candidate{Name: fmt.Sprintf("poly%d", deg), Learner: Linear{Degree: deg, Finite: finite}})
	}
	return out
}

// linearFeatureCount is the number of "poly" features of the given degree
// on d's logs, -1 beyond maxLinearFeatures.
func linearFeatureCount(d *dataset.Dataset, degree int) int {
	if d.ActionDim > 0 {
		return numMonomials(d.StateDim+d.ActionDim, degree, maxLinearFeatures)
	}
	c := numMonomials(d.StateDim, degree, maxLinearFeatures)
	if c < 0 || c*max(d.NumActions, 1) > maxLinearFeatures {
		return -1
	}
	return c * max(d.NumActions, 1)
}

// Choose scores every candidate on the held-out folds of d and returns the
// winner's learner and the selection (see Select). It does not refit the
// winner.
func (s Select) Choose(d *dataset.Dataset, gamma float64, pi Target) (Learner, Selection, error) {
	if d == nil || d.NumEpisodes() == 0 {
		return nil, Selection{}, errors.New("value: select: no data")
	}
	if d.StateDim <= 0 {
		return nil, Selection{}, errors.New("value: select: the candidates and the test class (polynomial features) need real-valued states")
	}
	cands := s.Candidates
	if cands == nil {
		cands = LinearCandidates(d, s.Finite)
	}
	if len(cands) == 0 {
		return nil, Selection{}, errors.New("value: select: no candidates")
	}
	K := s.Folds
	if K == 0 {
		K = DefaultSelectFolds
	}
	if K < 2 {
		return nil, Selection{}, fmt.Errorf("value: select: %d folds, want at least 2", K)
	}
	folds, nIDs := selectFolds(d, K, s.Seed)
	K = min(K, nIDs)
	if len(cands) == 1 || K < 2 {
		return cands[0].Learner, Selection{Winner: cands[0].Name}, nil
	}
	sc := newClassScorer(d, gamma, pi, folds, K)
	sel, best, err := sc.score(cands)
	if err != nil {
		return nil, Selection{}, err
	}
	if s.escalates(gamma, sel) {
		more, extra, err := sc.score(s.Escalate)
		if err == nil {
			sel.Scores = append(sel.Scores, more.Scores...)
			if winnerScore(more) < winnerScore(sel) {
				sel.Winner = more.Winner
				return s.Escalate[extra].Learner, sel, nil
			}
		}
	}
	return cands[best].Learner, sel, nil
}

// splitFolds returns the episodes of each of the K folds (fold[e] is
// episode e's), as datasets (held) and as indices (inFold), and the
// longest episode outside each fold (maxLen: the horizons of a Finite
// fit on the other folds).
func splitFolds(d *dataset.Dataset, fold []int, K int) (held []*dataset.Dataset, maxLen []int, inFold [][]int) {
	held, maxLen, inFold = make([]*dataset.Dataset, K), make([]int, K), make([][]int, K)
	for e, f := range fold {
		inFold[f] = append(inFold[f], e)
	}
	for k := range K {
		held[k] = d.Subset(inFold[k])
		for e, f := range fold {
			if f != k {
				maxLen[k] = max(maxLen[k], d.Len(e))
			}
		}
	}
	return held, maxLen, inFold
}

// selectFolds returns the fold of every episode of d and the number of
// distinct ids: the distinct ids in their natural order, shuffled by a
// PCG seeded by seed, the i-th in fold i mod K.
func selectFolds(d *dataset.Dataset, K int, seed uint64) (fold []int, nIDs int) {
	order := d.IDOrder()
	var first []int // the first episode of each distinct id, in order
	for r, e := range order {
		if r == 0 || d.IDs[e] != d.IDs[order[r-1]] {
			first = append(first, e)
		}
	}
	perm := make([]int, len(first))
	for i := range perm {
		perm[i] = i
	}
	rng := rand.New(rand.NewPCG(seed, selectStream))
	rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	foldOf := make(map[string]int, len(first))
	for i, p := range perm {
		foldOf[d.IDs[first[p]]] = i % K
	}
	fold = make([]int, len(d.IDs))
	for e, id := range d.IDs {
		fold[e] = foldOf[id]
	}
	return fold, len(first)
}

// heldOutResiduals returns the TD residuals of m on the steps of d,
// delta_j = r_j - rho + gamma v(s'_j) - q(s_j, a_j) (rho for gamma = 1),
// NaN where the next state is not known.
func heldOutResiduals(m Model, d *dataset.Dataset, gamma float64) ([]float64, error) {
	q, _, next, err := m.Values(d)
	if err != nil {
		return nil, err
	}
	rho := m.Rho()
	if math.IsNaN(rho) {
		rho = 0
	}
	delta := make([]float64, len(q))
	for j := range delta {
		delta[j] = d.Reward[j] - rho + gamma*next[j] - q[j]
	}
	return delta, nil
}

// classScorer scores function classes on fixed folds of one log (Select):
// the held-out folds, the training sets built once for the candidates
// that fit each anew, and the test class of the projected Bellman error.
type classScorer struct {
	d      *dataset.Dataset
	gamma  float64
	pi     Target
	K      int
	held   []*dataset.Dataset
	maxLen []int
	inFold [][]int
	train  []*dataset.Dataset
	ps     *projectedScores
	psErr  error
}

func newClassScorer(d *dataset.Dataset, gamma float64, pi Target, folds []int, K int) *classScorer {
	c := &classScorer{d: d, gamma: gamma, pi: pi, K: K}
	c.held, c.maxLen, c.inFold = splitFolds(d, folds, K)
	c.ps, c.psErr = newProjectedScores(d, folds)
	return c
}

// trainSets returns train[k], the episodes outside fold k, built on first
// use: a Linear candidate does not need them.
func (sc *classScorer) trainSets() []*dataset.Dataset {
	if sc.train == nil {
		sc.train = make([]*dataset.Dataset, sc.K)
		for k := range sc.K {
			var tr []int
			for f, eps := range sc.inFold {
				if f != k {
					tr = append(tr, eps...)
				}
			}
			slices.Sort(tr)
			sc.train[k] = sc.d.Subset(tr)
		}
	}
	return sc.train
}

// score fits every candidate on each fold's training set, scores it on
// the held-out fold, and returns the selection among them and the
// winner's index.
func (sc *classScorer) score(cands []Candidate) (Selection, int, error) {
	d, gamma, pi, K, held, maxLen := sc.d, sc.gamma, sc.pi, sc.K, sc.held, sc.maxLen
	// delta[c][k] are candidate c's residuals on the held-out fold k,
	// fitErr[c][k] why they could not be had.
	delta, fitErr := make([][][]float64, len(cands)), make([][]error, len(cands))
	for c := range cands {
		delta[c], fitErr[c] = make([][]float64, K), make([]error, K)
	}
	residuals := func(c, k int, m Model, err error) {
		if err == nil {
			delta[c][k], err = heldOutResiduals(m, held[k], gamma)
		}
		if err != nil {
			fitErr[c][k] = fmt.Errorf("value: select: %s on fold %d: %w", cands[c].Name, k, err)
		}
	}
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	// The Linear candidates are fitted together from one pass over the
	// data per group: the polynomial ones that differ in degree only share
	// the moments of the largest degree (fitFolds); the others each have
	// their own pass. Their residuals are scored while the next group's
	// pass runs.
	type group struct {
		idx []int
		ls  []Linear
	}
	var groups []group
	var others []int // the candidates that fit each training set anew
	at := map[Linear]int{}
	for c := range cands {
		l, ok := cands[c].Learner.(Linear)
		if !ok {
			others = append(others, c)
			continue
		}
		if l.Features != "" && l.Features != "poly" {
			groups = append(groups, group{[]int{c}, []Linear{l}})
			continue
		}
		key := l
		key.Degree, key.Features = 0, ""
		i, seen := at[key]
		if !seen {
			i = len(groups)
			at[key] = i
			groups = append(groups, group{})
		}
		groups[i].idx, groups[i].ls = append(groups[i].idx, c), append(groups[i].ls, l)
	}
	for _, gr := range groups {
		ms, errs := fitFolds(d, held, maxLen, gamma, pi, gr.ls)
		for i, c := range gr.idx {
			for k := range K {
				g.Go(func() error { residuals(c, k, ms[i][k], errs[i][k]); return nil })
			}
		}
	}
	for _, c := range others {
		train := sc.trainSets()
		for k := range K {
			g.Go(func() error {
				m, err := cands[c].Learner.Fit(train[k], gamma, pi)
				residuals(c, k, m, err)
				return nil
			})
		}
	}
	_ = g.Wait()
	if sc.psErr != nil {
		return Selection{}, -1, sc.psErr
	}
	ps := sc.ps
	sel := Selection{Scores: make([]Score, 0, len(cands))}
	best, bestScore := -1, math.Inf(1)
	var errs []error
	for c, cd := range cands {
		if i := slices.IndexFunc(fitErr[c], func(e error) bool { return e != nil }); i >= 0 {
			errs = append(errs, fitErr[c][i]) // its first failed fold
			continue                          // a failed class gets no score and is not chosen
		}
		sums := ps.newSums()
		for k := range K {
			ps.accumulate(sums, held[k], delta[c][k])
		}
		sc, se := ps.score(sums)
		if math.IsNaN(sc) || math.IsInf(sc, 0) {
			continue
		}
		sel.Scores = append(sel.Scores, Score{Name: cd.Name, Score: sc, SE: se})
		if sc < bestScore {
			best, bestScore = c, sc
		}
	}
	if best < 0 {
		return Selection{}, -1, errors.Join(errs...)
	}
	sel.Winner = cands[best].Name
	return sel, best, nil
}
