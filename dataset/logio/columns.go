package logio

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ihope-ope/ihope/dataset"
)

// role is what a log column holds.
type role uint8

const (
	roleEpisode role = iota
	roleT
	roleState      // state id
	roleStateK     // state_k
	roleAction     // action id
	roleActionK    // action_k
	roleReward     // reward
	roleBehavior   // behavior_prob
	roleBehaviorLn // behavior_logprob
	roleTarget     // target_prob
	roleTargetLn   // target_logprob
	roleNext       // next_state id
	roleNextK      // next_state_k
	roleTargetK    // target_prob_k
	roleNextTarget // next_target_prob_k
	roleTerminal   // terminal (0/1)
	roleTruncated  // truncated (0/1): the episode was cut off here (a time limit)
	roleIgnore     // a column the reader skips (ReadOptions.Ignore)
	// Labelled state, action and next_state (ReadOptions.Categorical).
	roleStateLabel
	roleActionLabel
	roleNextLabel
	numRoles
)

// scalarNames are the column names without a vector index, indexed by role
// ("" for the vector roles).
var scalarNames = [numRoles]string{
	roleEpisode:    "episode",
	roleT:          "t",
	roleState:      "state",
	roleAction:     "action",
	roleReward:     "reward",
	roleBehavior:   "behavior_prob",
	roleBehaviorLn: "behavior_logprob",
	roleTarget:     "target_prob",
	roleTargetLn:   "target_logprob",
	roleNext:       "next_state",
	roleTerminal:   "terminal",
	roleTruncated:  "truncated",
}

// vectorPrefixes maps the vector roles to their name prefixes.
var vectorPrefixes = [...]struct {
	prefix string
	role   role
}{
	{"state_", roleStateK},
	{"action_", roleActionK},
	{"next_state_", roleNextK},
	{"target_prob_", roleTargetK},
	{"next_target_prob_", roleNextTarget},
}

// maxVectorDim bounds the index k of a vector column name (state_k, ...).
const maxVectorDim = 1 << 16

// classify returns the role of a column name and, for a vector column,
// its index k. Indices are written in decimal without leading zeros.
func classify(name string) (r role, k int, ok bool) {
	for r, s := range scalarNames {
		if s != "" && s == name {
			return role(r), -1, true
		}
	}
	for _, v := range vectorPrefixes {
		rest, found := strings.CutPrefix(name, v.prefix)
		if !found || rest == "" || len(rest) > 6 || (rest[0] == '0' && len(rest) > 1) {
			continue
		}
		k, err := strconv.Atoi(rest)
		if err != nil || k < 0 || k >= maxVectorDim || rest[0] == '+' || rest[0] == '-' {
			continue
		}
		return v.role, k, true
	}
	return 0, 0, false
}

// cutPolicy splits the name of a target column named for one of several
// target policies (target_prob@NAME, target_logprob@NAME,
// target_prob_k@NAME, next_target_prob_k@NAME, or the prefixes
// target_prob_@NAME and next_target_prob_@NAME of --column) into the
// contract name and the policy's name. A policy's name is not empty and
// holds neither '@' nor '='.
func cutPolicy(name string) (base, policy string, ok bool) {
	base, policy, ok = strings.Cut(name, "@")
	if !ok || policy == "" || strings.ContainsAny(policy, "@=") {
		return name, "", false
	}
	if base == "target_prob_" || base == "next_target_prob_" {
		return base, policy, true
	}
	switch r, _, known := classify(base); {
	case known && (r == roleTarget || r == roleTargetLn || r == roleTargetK || r == roleNextTarget):
		return base, policy, true
	}
	return name, "", false
}

// column is one column of a log.
type column struct {
	name string
	role role
	k    int // vector index, -1 for scalar columns
}

// layout is a validated header: which column holds what.
type layout struct {
	cols []column

	// at[r] is the position of the scalar column of role r, -1 if absent.
	at [numRoles]int

	// stateDim, actionDim are the vector lengths, 0 for ids.
	stateDim, actionDim int
	// next reports whether next-state columns are present.
	next bool
	// behavior reports whether behavior_prob or behavior_logprob is
	// present (the behavior probabilities are optional).
	behavior bool
	// behaviorLn, targetLn report that the log-probability columns are
	// used instead of the probability columns.
	behaviorLn, targetLn bool
	// target names the contract column of the logged action's target
	// probability (target_prob or target_logprob), "" if only
	// target_prob_k are given.
	target string
	// targetK is the number K of target_prob_k columns (0 if none).
	targetK int
	// terminal reports whether the dataset.Dataset has a Terminal column: the
	// optional terminal or truncated column is present, or every row is
	// a one-step episode (derive).
	terminal bool
	// derive says where episodes come from when the file has no episode
	// and no t column: the terminal and truncated flags, or one row each
	// (ReadOptions.OneStep); deriveNone reads the episode and t columns.
	derive deriveMode
	// labelState, labelAction report that the state (and next_state)
	// and action columns hold labels (ReadOptions.Categorical).
	labelState, labelAction bool
	// display maps contract names to the file's names where
	// ReadOptions.Columns renamed a column, or where a named policy's
	// column is read as the target's (nil if none was).
	display map[string]string
	// shard is ReadOptions.Shard.
	shard bool
	// policy is the named target policy whose columns are read, and
	// policies every policy the header names (cutPolicy), in order.
	policy   string
	policies []string
	// fillTarget is ReadOptions.Target when the file has no target
	// columns: the reader sets the target's probabilities from it.
	fillTarget   dataset.TablePolicy
	beforeTarget func(*dataset.Dataset) error // ReadOptions.BeforeTarget
}

// discreteActions reports whether actions are ids (so that probabilities
// are probabilities, not densities).
func (l *layout) discreteActions() bool { return l.actionDim == 0 }

// newLayout checks a header (the file's column names in file order)
// against the log contract, read through o (nil for the contract as it
// is). row is the row number of the header (1 for CSV, 0 for Parquet,
// which has none). Every problem of the header is reported, in one
// error (headerError).
func newLayout(file string, names []string, row int, o *ReadOptions) (*layout, error) {
	l, ps := layoutProblems(names, o)
	if err := headerError(file, row, ps); err != nil {
		return nil, err
	}
	return l, nil
}

// layoutProblems checks a header as newLayout does and returns its
// problems, each with the flag that fixes it, if any.
func layoutProblems(names []string, o *ReadOptions) (*layout, []problem) {
	var ps []problem
	fail := func(col, format string, args ...any) {
		ps = append(ps, problem{col: col, msg: fmt.Sprintf(format, args...)})
	}
	rn := newRenamer(o)
	l := &layout{cols: make([]column, len(names)), shard: o != nil && o.Shard}
	for r := range l.at {
		l.at[r] = -1
	}
	// Several target policies, named: read one, skip the others.
	for _, name := range names {
		contract, _, _ := rn.contract(name)
		if _, p, ok := cutPolicy(contract); ok && !slices.Contains(l.policies, p) {
			l.policies = append(l.policies, p)
		}
	}
	if len(l.policies) > 0 {
		l.policy = l.policies[0]
		if o != nil && o.Policy != "" {
			l.policy = o.Policy
		}
		if !slices.Contains(l.policies, l.policy) {
			fail("", "no column is named for target policy %q (the file names %s)", l.policy, strings.Join(l.policies, ", "))
		}
	} else if o != nil && o.Policy != "" {
		fail("", "target policy %q asked for, but no column is named for a policy (target_prob@%s, target_prob_0@%s, ...)", o.Policy, o.Policy, o.Policy)
	}
	var plainTarget string                   // an unnamed target column beside named ones
	seen := make(map[string]int, len(names)) // contract name -> position
	// Vector columns by role: index -> position in the file.
	vec := map[role]map[int]int{roleStateK: {}, roleActionK: {}, roleNextK: {}, roleTargetK: {}, roleNextTarget: {}}
	first := map[role]int{}        // first position of each role
	suggested := map[string]bool{} // contract columns and prefixes that suggestions provide
	var unknown []int              // positions of the columns no contract name or flag reads
	unknownAt := map[int]int{}     // their problems' places in ps
	for j, name := range names {
		l.cols[j] = column{name: name, role: roleIgnore, k: -1}
		if name == "" {
			hint := ""
			if j == 0 {
				hint = " (pandas writes its index this way; save with to_csv(index=False))"
			}
			fail("", "column %d has no name%s", j+1, hint)
			continue
		}
		contract, ignored, flag := rn.contract(name)
		if ignored {
			continue
		}
		if p, dup := seen[contract]; dup {
			switch {
			case names[p] == name:
				fail(name, "duplicate column (columns %d and %d have this name)", p+1, j+1)
			default:
				fail(name, "is %s (%s), but column %d, %s, is %s too", contract, flag, p+1, dataset.Quote(names[p]), contract)
			}
			continue
		}
		seen[contract] = j
		if base, p, named := cutPolicy(contract); named {
			if p != l.policy {
				continue // another policy's column: ReadPolicies reads it
			}
			contract = base
		} else if r, _, ok := classify(contract); ok && len(l.policies) > 0 &&
			(r == roleTarget || r == roleTargetLn || r == roleTargetK || r == roleNextTarget) {
			if plainTarget == "" {
				plainTarget = name
				fail(name, "is a target column for no policy while other columns name theirs (%s@%s, ...); "+
					"name every policy's columns, or give one policy's unnamed", contract, l.policies[0])
			}
			continue
		}
		r, k, ok := classify(contract)
		if !ok {
			unknownAt[j] = len(ps) // its problem, filled once the whole header is known
			unknown = append(unknown, j)
			ps = append(ps, problem{col: name})
			continue
		}
		if contract != name {
			if l.display == nil {
				l.display = map[string]string{}
			}
			l.display[contract] = name
		}
		l.cols[j] = column{name: name, role: r, k: k}
		if k >= 0 {
			vec[r][k] = j
		} else {
			l.at[r] = j
		}
		if _, ok := first[r]; !ok {
			first[r] = j
		}
	}
	if len(unknown) > 0 {
		h := &hints{names: names, count: map[string]int{}, named: len(l.policies) > 0, plain: plainTarget != "", user: rn.user(),
			present: func(r role) bool { _, ok := first[r]; return ok }}
		for _, n := range names {
			h.count[n]++
		}
		for j, s := range h.plan(unknown) {
			ps[unknownAt[j]] = problem{col: names[j], msg: s.msg, flag: s.flag, short: s.short}
			if s.role != "" {
				suggested[s.role] = true
			}
		}
	}
	ps = append(rn.unused(names), ps...)
	provided := func(r role) bool {
		if s := scalarNames[r]; s != "" {
			return suggested[s]
		}
		for _, v := range vectorPrefixes {
			if v.role == r {
				return suggested[v.prefix]
			}
		}
		return false
	}

	// Alternatives that exclude each other; name the one that comes later.
	for _, pair := range [...][2]role{
		{roleState, roleStateK}, {roleAction, roleActionK},
		{roleBehavior, roleBehaviorLn}, {roleTarget, roleTargetLn},
		{roleNext, roleNextK},
	} {
		a, okA := first[pair[0]]
		b, okB := first[pair[1]]
		if okA && okB {
			later := names[max(a, b)]
			fail(later, "both %s and %s are given; use one of them", dataset.Quote(names[min(a, b)]), dataset.Quote(later))
		}
	}

	// Episodes without an episode column: one row each (--bandit), or
	// delimited by the terminal and truncated flags when there is no t
	// column either (d3rlpy's and Minari's flat dumps, Gymnasium's
	// terminated and truncated); a suggestion that provides a flag
	// counts, so that following it reads the file.
	_, hasEp := first[roleEpisode]
	_, hasT := first[roleT]
	_, hasTerm := first[roleTerminal]
	_, hasTrunc := first[roleTruncated]
	switch {
	case o != nil && o.OneStep:
		for _, r := range [...]role{roleEpisode, roleT} {
			if p, ok := first[r]; ok {
				fail(names[p], "is the %s column, but --bandit reads every row as an episode of one step; drop --bandit to read the file's episodes", scalarNames[r])
			}
		}
		l.derive = deriveOneStep
	case !hasEp && !hasT && (hasTerm || hasTrunc || provided(roleTerminal) || provided(roleTruncated)):
		l.derive = deriveFlags
	}
	if l.derive != deriveNone && l.shard {
		fail("", "episodes read from the row order (no episode column) cannot be split across shards; give an episode column, or read the log as one file")
	}

	// Required columns, in the order of the contract; one that a
	// suggestion above provides is not named again.
	for _, req := range [...]struct {
		r, alt role
		msg    string
	}{
		{roleEpisode, roleEpisode, episodeMissing},
		{roleT, roleT, ""},
		{roleState, roleStateK, ` (give "state" for a state id or "state_0", "state_1", ... for a state vector)`},
		{roleAction, roleActionK, ` (give "action" for an action id or "action_0", "action_1", ... for an action vector)`},
		{roleReward, roleReward, ""},
		{roleTarget, roleTargetLn, ` (give "target_prob" or "target_logprob", or the target's whole action distribution as target_prob_0, target_prob_1, ...)`},
	} {
		_, ok1 := first[req.r]
		_, ok2 := first[req.alt]
		_, ok3 := first[roleTargetK]
		covered := provided(req.r) || provided(req.alt) || l.derive != deriveNone && (req.r == roleEpisode || req.r == roleT) ||
			req.r == roleTarget && (ok3 || provided(roleTargetK) || suggested["target_logprob"] || o != nil && o.Target != nil)
		if !ok1 && !ok2 && (req.r != roleTarget || !ok3) && !covered {
			fail(scalarNames[req.r], "required column is missing%s", req.msg)
		}
	}

	// Vector columns must be numbered 0, 1, ..., d-1.
	dims := map[role]int{}
	for _, v := range vectorPrefixes {
		cols := vec[v.role]
		d := 0
		for k := range cols {
			d = max(d, k+1)
		}
		for k := 0; k < d; k++ {
			if _, ok := cols[k]; !ok {
				fail(l.name(v.prefix+strconv.Itoa(k)),
					"column is missing: vector columns must be numbered %s0, %s1, ... without gaps, and %s is present",
					v.prefix, v.prefix, l.name(v.prefix+strconv.Itoa(d-1)))
				break
			}
		}
		dims[v.role] = d
	}
	l.stateDim, l.actionDim = dims[roleStateK], dims[roleActionK]

	// Next-state columns must match the state columns.
	if p, ok := first[roleNext]; ok && l.stateDim > 0 {
		fail(names[p], "is a state id but the states are vectors (%s); use %s", span("state", l.stateDim), span("next_state", l.stateDim))
	}
	if p, ok := first[roleNextK]; ok {
		nd := dims[roleNextK]
		switch {
		case l.stateDim == 0:
			fail(names[p], `is a state vector component but the states are ids (column "state"); use next_state`)
		case nd > l.stateDim:
			// One side has a column the other lacks; a dropped state column
			// is the likelier mistake than an extra next-state one.
			fail(l.name(fmt.Sprintf("state_%d", l.stateDim)), "column is missing: the next states have %d components (%s), the states %d (%s)",
				nd, span("next_state", nd), l.stateDim, span("state", l.stateDim))
		case nd < l.stateDim:
			fail(l.name(fmt.Sprintf("next_state_%d", nd)), "column is missing: the state has %d components (%s)", l.stateDim, span("state", l.stateDim))
		}
	}
	_, hasNext := first[roleNext]
	_, hasNextK := first[roleNextK]
	l.next = hasNext || hasNextK
	_, l.behaviorLn = first[roleBehaviorLn]
	_, hasB := first[roleBehavior]
	l.behavior = hasB || l.behaviorLn
	_, l.targetLn = first[roleTargetLn]
	l.terminal = hasTerm || hasTrunc || l.derive == deriveOneStep
	if _, ok := first[roleTarget]; ok {
		l.target = scalarNames[roleTarget]
	} else if _, ok := first[roleTargetLn]; ok {
		l.target = scalarNames[roleTargetLn]
	}

	// The target's whole action distribution: discrete actions only;
	// next_target_prob_k has one column per target_prob_k and needs the
	// next state.
	l.targetK = dims[roleTargetK]
	if l.target == "" && l.targetK == 0 && o != nil && o.Target != nil {
		l.fillTarget, l.beforeTarget = o.Target, o.BeforeTarget
	}
	pk, hasK := first[roleTargetK]
	pn, hasNextTarget := first[roleNextTarget]
	switch nd := dims[roleNextTarget]; {
	case l.actionDim > 0 && (hasK || hasNextTarget):
		p := pk
		if !hasK || (hasNextTarget && pn < pk) {
			p = pn
		}
		fail(names[p], "gives the target's probability of one discrete action, but the actions are vectors (%s); "+
			"the target_prob_k and next_target_prob_k columns are for action ids (column \"action\")", span("action", l.actionDim))
	case hasNextTarget && !hasK:
		fail(names[pn], "next_target_prob_k (the target's action distribution at the next state) needs the target_prob_k columns (target_prob_0, target_prob_1, ...)")
	case nd > l.targetK:
		fail(l.name(fmt.Sprintf("next_target_prob_%d", l.targetK)), "there are only %d target_prob_k columns (%s)", l.targetK, span("target_prob", l.targetK))
	case hasNextTarget && nd < l.targetK:
		fail(l.name(fmt.Sprintf("next_target_prob_%d", nd)), "column is missing: there are %d target_prob_k columns (%s), so give %s",
			l.targetK, span("target_prob", l.targetK), span("next_target_prob", l.targetK))
	case hasNextTarget && !l.next:
		fail(names[pn], "next_target_prob_k give the target's action distribution at the state after an episode's last row, "+
			"which needs the next_state column (or next_state_0, ...)")
	}

	// Categorical columns hold labels: ids only, not vectors.
	if o != nil {
		for _, c := range o.Categorical {
			switch {
			case c == "state" && l.stateDim > 0:
				fail(l.name("state_0"), "--categorical state: the states are vectors (%s); labels are for a state column", span("state", l.stateDim))
			case c == "state":
				l.labelState = true
				l.relabel(roleState, roleStateLabel)
				l.relabel(roleNext, roleNextLabel)
			case c == "action" && l.actionDim > 0:
				fail(l.name("action_0"), "--categorical action: the actions are vectors (%s); labels are for an action column", span("action", l.actionDim))
			case c == "action" && l.targetK > 0:
				fail(l.name("target_prob_0"), "--categorical action: target_prob_k give the target's probability of action id k, "+
					"which labels do not have until the whole file is read; give the logged action's target_prob instead, or action ids")
			case c == "action":
				l.labelAction = true
				l.relabel(roleAction, roleActionLabel)
			}
		}
	}
	return l, ps
}

// deriveMode is where a layout's episodes come from (layout.derive).
type deriveMode uint8

const (
	deriveNone    deriveMode = iota // the episode and t columns
	deriveFlags                     // the rows in file order, an episode ending where terminal or truncated is 1
	deriveOneStep                   // every row an episode of one step, ended in a terminal state (ReadOptions.OneStep)
)

// episodeMissing is what the message of a missing episode column adds:
// the two other ways episodes are read.
const episodeMissing = ` (without episode and t columns, episodes are read in row order, each ending where a terminal or truncated column is 1; ` +
	`--bandit reads every row as an episode of one step)`

// relabel gives the columns of role from the role to, so that readers
// tell labels from ids by role alone.
func (l *layout) relabel(from, to role) {
	for j := range l.cols {
		if l.cols[j].role == from {
			l.cols[j].role = to
		}
	}
}

// name returns the file's name for a contract column: the name it has
// in the file when ReadOptions.Columns mapped it, else the contract name.
// Messages name columns as the user's file does.
func (l *layout) name(contract string) string {
	if n, ok := l.display[contract]; ok {
		return n
	}
	return contract
}

const contractColumns = "episode, t, state (or state_0, state_1, ...), action (or action_0, ...), reward, " +
	"target_prob or target_logprob, and optionally behavior_prob or behavior_logprob, next_state (or next_state_0, ...), " +
	"target_prob_0, target_prob_1, ..., next_target_prob_0, next_target_prob_1, ..., terminal and truncated"

// span names the vector columns name_0 ... name_{d-1}.
func span(name string, d int) string {
	if d == 1 {
		return name + "_0"
	}
	return fmt.Sprintf("%s_0 ... %s_%d", name, name, d-1)
}

// suggest returns the column name that a mistyped name probably meant, or
// "".
func suggest(name string) string {
	s, _ := suggestDist(name)
	return s
}

// suggestDist is suggest with the edit distance of the name (in its
// canonical form) from the suggestion: 0 for a contract name in other
// case or spelling.
func suggestDist(name string) (string, int) {
	canon := canonical(name)
	if _, _, ok := classify(canon); ok {
		return canon, 0
	}
	best, bestD := "", 3
	for _, s := range scalarNames {
		if s == "" {
			continue
		}
		if d := editDistance(canon, s); d < bestD {
			best, bestD = s, d
		}
	}
	return best, bestD
}

// editDistance is the Levenshtein distance between a and b (bytes), capped
// for long inputs so that a pathological header stays cheap.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 20
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
