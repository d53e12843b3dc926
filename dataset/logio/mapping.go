package logio

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ihope-ope/ihope/dataset"
)

// ReadOptions say how to read a log whose form or column names are not
// the contract's own: other OPE tools name the behavior probability
// pscore and the step index step, and logs carry columns the contract
// has no use for. The zero value reads the contract as it is, choosing
// the format by the file's extension.
//
// The command line's flags are these fields: --format, --column
// ROLE=NAME (Columns), --ignore NAME (Ignore) and --categorical
// (Categorical).
type ReadOptions struct {
	// Format is the file's form; "" chooses it by the file's extension
	// (ReadFileWith). Read, which has no name to go by, needs it.
	Format Format

	// Columns maps contract columns onto the file's columns: the key is a
	// contract column (a role: "behavior_prob", "episode", "t",
	// "state_0") and the value the file's name for it ("pscore"). A key
	// ending in "_" maps a vector prefix: "state_" → "obs_" reads the
	// file's obs_0, obs_1, ... as state_0, state_1, .... ParseColumns
	// builds the map from ROLE=NAME strings.
	Columns map[string]string

	// Ignore lists file columns to drop unread. Every other column must
	// be a contract column, by its own name or through Columns: a column
	// the contract does not know is refused, so that a mistyped name is
	// never dropped silently.
	Ignore []string

	// Categorical lists "state" and "action" when their columns hold
	// labels (any strings, such as "left") rather than ids. Labels get
	// the ids 0, 1, 2, ... in sorted (byte) order, one numbering for
	// state and next_state; the Labels a reader returns say which is
	// which. A categorical column may also hold numbers, which are then
	// labels like any other ("10" sorts before "9").
	Categorical []string

	// Shard reads the file as one of an ordered series of shards (package
	// stream): its first episode, in the order of the file's rows, may
	// start at t > 0, continuing the previous shard's last episode, and
	// the dataset.Dataset records where each episode begins (dataset.Dataset.Origin).
	Shard bool

	// Policy names the target policy whose columns are read when the
	// file gives several, named: target_prob@NAME (or
	// target_logprob@NAME), target_prob_k@NAME and next_target_prob_k@NAME
	// are then read as target_prob, target_prob_k and next_target_prob_k,
	// and the other policies' columns are skipped. "" reads the first
	// policy the header names. ReadPolicies reads every policy.
	Policy string

	// Target is the target policy the caller will set (SetTargetPolicy,
	// a --target-policy file): a file without target columns (no
	// target_prob, target_logprob or target_prob_k) is then read, and
	// its target probabilities are Target's, as SetTargetPolicy sets
	// them (LogTarget = log Target(a_t|s_t), TargetProbs); the error of a
	// state or action Target does not cover names the file. A file with
	// target columns is read as without Target. Discrete states and
	// actions only.
	Target dataset.TablePolicy

	// OneStep reads every row as an episode of one step that ends in a
	// terminal state: a contextual bandit's log (Open Bandit Pipeline's
	// context, action, reward and pscore), which has no episode and no t
	// column (a file with either is refused). The episodes' ids are 0, 1,
	// 2, ... in row order. The command line's --bandit.
	OneStep bool
	// BeforeTarget, if set, is called with the log as read before Target
	// fills its probabilities at every step (steps x actions floats), so
	// that a caller can refuse a size it cannot hold; its error is the
	// reader's.
	BeforeTarget func(*dataset.Dataset) error
}

// ParseColumns parses column mappings written ROLE=NAME, as --column
// gives them, into ReadOptions.Columns. ROLE is a contract column or a
// vector prefix (state_, action_, next_state_, target_prob_,
// next_target_prob_); NAME is the file's column (or, for a prefix, the
// file's prefix). A ROLE given twice, or two ROLEs given one NAME, is an
// error.
func ParseColumns(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(flags))
	for _, f := range flags {
		// The name is kept as it is: spreadsheets leave spaces in names.
		role, name, ok := strings.Cut(f, "=")
		role = strings.TrimSpace(role)
		if !ok || role == "" || name == "" {
			return nil, fmt.Errorf("column mapping %q: want ROLE=NAME, such as behavior_prob=pscore", f)
		}
		if prev, dup := m[role]; dup {
			return nil, fmt.Errorf("column mapping %q: %s is mapped twice (also to %q)", f, role, prev)
		}
		m[role] = name
	}
	o := ReadOptions{Columns: m}
	if err := o.Check(); err != nil {
		return nil, err
	}
	return m, nil
}

// Check reports mistakes in the options that no file can fix: a role
// that is not a contract column, two roles given one column, a column
// both mapped and ignored, an unknown format or categorical column.
// The readers call it first; the command line calls it to tell such
// mistakes (usage) from a bad file.
func (o *ReadOptions) Check() error {
	if o.Format != "" {
		if _, err := ParseFormat(string(o.Format)); err != nil {
			return err
		}
	}
	// A prefix (state_=obs_) maps the columns obs_0, obs_1, ..., not a
	// column obs_: it is checked against the other prefixes only.
	byName, byPrefix := map[string]string{}, map[string]string{}
	for _, role := range slices.Sorted(maps.Keys(o.Columns)) {
		name := o.Columns[role]
		if !validRole(role) {
			return fmt.Errorf("--column %s=%s: %q is not a column of the log contract; the roles are %s",
				role, name, role, roleList)
		}
		if name == "" {
			return fmt.Errorf("--column %s=: no column name", role)
		}
		seen := byName
		if isPrefixRole(role) {
			seen = byPrefix
		}
		if prev, dup := seen[name]; dup {
			return fmt.Errorf("--column %s=%s and --column %s=%s: one column cannot be two contract columns", prev, name, role, name)
		}
		seen[name] = role
	}
	for _, name := range o.Ignore {
		if role, both := byName[name]; both {
			return fmt.Errorf("--column %s=%s and --ignore %s: a column is either read or ignored", role, name, name)
		}
	}
	for _, c := range o.Categorical {
		if c != "state" && c != "action" {
			return fmt.Errorf("--categorical %s: only state and action may hold labels", c)
		}
	}
	return nil
}

// isPrefixRole reports whether a --column role is a vector prefix
// (state_, target_prob_@A), as newRenamer reads it.
func isPrefixRole(role string) bool {
	if base, _, named := cutPolicy(role); named {
		role = base
	}
	return strings.HasSuffix(role, "_") && !isVectorName(role)
}

// validRole reports whether role names a contract column (state_0
// included) or a vector prefix.
func validRole(role string) bool {
	if base, _, ok := cutPolicy(role); ok {
		role = base
	}
	if _, _, ok := classify(role); ok {
		return true
	}
	for _, v := range vectorPrefixes {
		if role == v.prefix {
			return true
		}
	}
	return false
}

// roleList lists the roles --column accepts, for messages.
const roleList = "episode, t, state, action, reward, behavior_prob, behavior_logprob, target_prob, target_logprob, next_state, terminal, truncated, " +
	"a vector column such as state_0, or a prefix: state_, action_, next_state_, target_prob_, next_target_prob_; " +
	"a named policy's target column adds @NAME (target_prob@NAME, target_prob_0@NAME)"

// renamer applies ReadOptions to a header: which contract column each of
// the file's columns is, and which are ignored.
type renamer struct {
	o      *ReadOptions
	byName map[string]string // file name -> role, for the exact mappings
	prefix [][3]string       // {role prefix, file prefix, @policy or ""}, longest file prefix first
	ignore map[string]bool
	used   map[string]bool // the mappings and ignores that matched a column, by flag text
}

func newRenamer(o *ReadOptions) *renamer {
	r := &renamer{o: o, byName: map[string]string{}, ignore: map[string]bool{}, used: map[string]bool{}}
	if o == nil {
		return r
	}
	for role, name := range o.Columns {
		base, policy, named := cutPolicy(role)
		switch {
		case named && strings.HasSuffix(base, "_") && !isVectorName(base):
			r.prefix = append(r.prefix, [3]string{base, name, "@" + policy})
		case strings.HasSuffix(role, "_") && !isVectorName(role):
			r.prefix = append(r.prefix, [3]string{role, name, ""})
		default:
			r.byName[name] = role
		}
	}
	slices.SortFunc(r.prefix, func(a, b [3]string) int { return len(b[1]) - len(a[1]) })
	for _, name := range o.Ignore {
		r.ignore[name] = true
	}
	return r
}

// user returns the --column flags given, by role (nil without options).
func (r *renamer) user() map[string]string {
	if r.o == nil {
		return nil
	}
	return r.o.Columns
}

// isVectorName reports whether s is a vector column name such as state_0
// (as opposed to a prefix such as state_).
func isVectorName(s string) bool {
	_, k, ok := classify(s)
	return ok && k >= 0
}

// contract returns the contract name of the file's column name, whether
// the column is ignored, and the flag that mapped it ("" if none).
func (r *renamer) contract(name string) (contract string, ignored bool, flag string) {
	if r.ignore[name] {
		r.used["--ignore "+name] = true
		return "", true, ""
	}
	if role, ok := r.byName[name]; ok {
		flag = "--column " + role + "=" + name
		r.used[flag] = true
		return role, false, flag
	}
	for _, p := range r.prefix {
		rest, ok := strings.CutPrefix(name, p[1])
		if !ok {
			continue
		}
		if _, k, ok := classify(p[0] + rest); ok && k >= 0 {
			flag = "--column " + p[0] + p[2] + "=" + p[1]
			r.used[flag] = true
			return p[0] + rest + p[2], false, flag
		}
	}
	return name, false, ""
}

// unused returns a problem for every mapping or ignore that matched no
// column of the file (names are the file's columns, for suggestions).
func (r *renamer) unused(names []string) []problem {
	if r.o == nil {
		return nil
	}
	var out []problem
	for _, role := range slices.Sorted(maps.Keys(r.o.Columns)) {
		name := r.o.Columns[role]
		flag := "--column " + role + "=" + name
		if r.used[flag] {
			continue
		}
		what := fmt.Sprintf("the file has no column %s", dataset.Quote(name))
		if strings.HasSuffix(role, "_") && !isVectorName(role) {
			what = fmt.Sprintf("no column of the file is %s followed by a number (%s0, %s1, ...)", dataset.Quote(name), name, name)
		}
		out = append(out, problem{msg: flag + ": " + what + closest(name, names)})
	}
	for _, name := range r.o.Ignore {
		if !r.used["--ignore "+name] {
			out = append(out, problem{msg: fmt.Sprintf("--ignore %s: the file has no column %s%s", shellWord(name), dataset.Quote(name), closest(name, names))})
		}
	}
	return out
}

// closest names the file's column nearest to a name given in a flag, as
// " (did you mean "x"?)", or "".
func closest(name string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(strings.ToLower(name), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", dataset.Quote(best))
}

// problem is one thing wrong with a header.
type problem struct {
	col   string // the file's column, "" if none
	msg   string
	flag  string // the flag that fixes it, or ""
	short string // msg for a list of problems, if shorter
}

// headerError turns a header's problems into one *FormatError: a single
// problem as every other error of the package, several as one message
// with a line each and the flags that fix them, so that a header is
// fixed in one run rather than one problem per run.
func headerError(file string, row int, ps []problem) error {
	switch len(ps) {
	case 0:
		return nil
	case 1:
		return &FormatError{File: file, Row: row, Column: ps[0].col, Msg: ps[0].msg}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problems with the header:", len(ps))
	var flags []string
	for _, p := range ps {
		b.WriteString("\n  ")
		if p.col != "" {
			fmt.Fprintf(&b, "column %s: ", dataset.Quote(p.col))
		}
		if p.short != "" {
			b.WriteString(p.short)
		} else {
			b.WriteString(p.msg)
		}
		if p.flag != "" && !slices.Contains(flags, p.flag) {
			flags = append(flags, p.flag)
		}
	}
	if len(flags) > 0 {
		fmt.Fprintf(&b, "\nto read the file as it is, add: %s", strings.Join(flags, " "))
	}
	return &FormatError{File: file, Row: row, Msg: b.String()}
}

// alias is another tool's name for a contract column.
type alias struct {
	role string // the contract column, or a prefix for vector columns
	note string // said after the suggestion, when the name is ambiguous
	alt  string // the contract column proposed when the file has role already, or ""
}

// aliases are other OPE and offline-RL tools' names for the contract's
// columns (Open Bandit Pipeline, SCOPE-RL, d3rlpy, D4RL, RLlib, COBS, ...),
// in lower case with '_' for '-', ' ' and '.'. A name here is still
// refused: the message names the --column flag that reads it.
var aliases = map[string]alias{
	"trajectory_id": {role: "episode"}, "trajectory": {role: "episode"}, "traj_id": {role: "episode"},
	"traj": {role: "episode"}, "episode_id": {role: "episode"}, "episode_idx": {role: "episode"},
	"episode_index": {role: "episode"}, "episodes": {role: "episode"}, "ep": {role: "episode"},
	"ep_id": {role: "episode"}, "eps_id": {role: "episode"},

	"step": {role: "t"}, "steps": {role: "t"}, "step_id": {role: "t"}, "step_idx": {role: "t"},
	"step_index": {role: "t"}, "timestep": {role: "t"}, "timesteps": {role: "t"}, "time_step": {role: "t"},
	"t_step": {role: "t"}, "ts": {role: "t"},

	"obs": {role: "state"}, "observation": {role: "state"}, "observations": {role: "state"},
	"s": {role: "state"}, "states": {role: "state"}, "state_id": {role: "state"},

	"a": {role: "action"}, "act": {role: "action"}, "actions": {role: "action"}, "action_id": {role: "action"},

	"r": {role: "reward"}, "rew": {role: "reward"}, "rewards": {role: "reward"},

	"pscore": {role: "behavior_prob"}, "propensity": {role: "behavior_prob"}, "propensity_score": {role: "behavior_prob"},
	"behavior_policy_prob": {role: "behavior_prob"}, "behavior_pscore": {role: "behavior_prob"},
	"behaviour_prob": {role: "behavior_prob"}, "logging_prob": {role: "behavior_prob"},
	"logging_policy_prob": {role: "behavior_prob"}, "pi_b": {role: "behavior_prob"}, "pi0": {role: "behavior_prob"},
	"mu": {role: "behavior_prob"},

	"log_pscore": {role: "behavior_logprob"}, "behavior_log_prob": {role: "behavior_logprob"},
	"behavior_logp": {role: "behavior_logprob"}, "log_propensity": {role: "behavior_logprob"},
	"behaviour_logprob": {role: "behavior_logprob"},

	"action_prob":            {role: "target_prob", alt: "behavior_prob", note: "RLlib's action_prob is the logging policy's: then read it with --column behavior_prob=%s"},
	"evaluation_policy_prob": {role: "target_prob"}, "evaluation_policy_action_prob": {role: "target_prob"},
	"eval_policy_prob": {role: "target_prob"}, "evaluation_prob": {role: "target_prob"},
	"eval_prob": {role: "target_prob"}, "target_policy_prob": {role: "target_prob"}, "pi_e": {role: "target_prob"},

	"action_logp":     {role: "target_logprob", alt: "behavior_logprob", note: "RLlib's action_logp is the logging policy's: then read it with --column behavior_logprob=%s"},
	"target_log_prob": {role: "target_logprob"}, "target_logp": {role: "target_logprob"},
	"evaluation_policy_logprob": {role: "target_logprob"},

	"next_obs": {role: "next_state"}, "next_observation": {role: "next_state"},
	"next_observations": {role: "next_state"}, "new_obs": {role: "next_state"}, "obs_next": {role: "next_state"},
	"s_next": {role: "next_state"}, "next_s": {role: "next_state"},

	"terminals": {role: "terminal"}, "is_terminal": {role: "terminal"}, "terminated": {role: "terminal"},
	"terminations": {role: "terminal"}, "is_terminals": {role: "terminal"},
	"terminateds": {role: "terminal"},
	"done":        {role: "terminal", note: doneNote},
	"dones":       {role: "terminal", note: doneNote},

	// d3rlpy's and D4RL's timeouts, Minari's truncations, RLlib's
	// truncateds, Gymnasium's truncated.
	"timeouts": {role: "truncated"}, "timeout": {role: "truncated"}, "timeouts_": {role: "truncated"},
	"truncations": {role: "truncated"}, "truncateds": {role: "truncated"}, "truncation": {role: "truncated"},
	"is_truncated": {role: "truncated"}, "timelimit_truncated": {role: "truncated"}, "time_limit_truncated": {role: "truncated"},
}

// doneNote is said after the suggestion for a done flag: gym's done is
// also set when a time limit cuts an episode off, which is not a terminal
// state.
const doneNote = "if %s is also set where a time limit cut an episode off, give the time limit's flag as the truncated column (a row with truncated 1 reads as cut off, whatever terminal says): a cut-off episode did not end in a terminal state"

// prefixAliases are other tools' prefixes of vector columns (obs_0,
// obs_1, ...), by the contract prefix they stand for.
var prefixAliases = map[string]string{
	"obs_": "state_", "observation_": "state_", "observations_": "state_", "s_": "state_",
	"x_": "state_", "context_": "state_", "contexts_": "state_", // Open Bandit Pipeline's contexts
	"act_": "action_", "a_": "action_", "actions_": "action_",
	"next_obs_": "next_state_", "next_observation_": "next_state_", "new_obs_": "next_state_", "obs_next_": "next_state_",
	"action_dist_": "target_prob_", "evaluation_policy_action_dist_": "target_prob_", "pi_e_": "target_prob_",
	"next_action_dist_": "next_target_prob_",
}

// canonical returns a column name in lower case with '_' for '-', ' '
// and '.', the form aliases are looked up in.
func canonical(name string) string {
	return strings.NewReplacer("-", "_", " ", "_", ".", "_").Replace(strings.ToLower(strings.TrimSpace(name)))
}

// splitIndex splits a vector column name into its prefix and index
// ("obs_12" → "obs_", 12); ok is false for a name without one.
func splitIndex(name string) (prefix string, k int, ok bool) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == len(name) || i == 0 || name[i-1] != '_' || len(name)-i > 6 {
		return "", 0, false
	}
	k, err := strconv.Atoi(name[i:])
	return name[:i], k, err == nil
}

// suggestion is what the message of an unknown column proposes.
type suggestion struct {
	role  string // the contract column (or prefix) it probably is, "" if none
	flag  string // the flag that reads it: --column ROLE=NAME or --ignore NAME
	msg   string
	short string // msg in a list of problems, if shorter
}

// suggestFor proposes how to read an unknown column: another tool's
// name (or prefix) maps onto its contract column, a near miss of a
// contract name ("Episode", "rewrad") too, and anything else is dropped
// with --ignore.
func suggestFor(name string) suggestion {
	if len(name) > maxNameLen { // a flag naming it would be as long
		return suggestion{msg: "unknown column: rename it (a name this long cannot be given as a flag)"}
	}
	canon := canonical(name)
	if a, ok := aliases[canon]; ok {
		flag := "--column " + shellWord(a.role+"="+name)
		msg := fmt.Sprintf("unknown column; other OPE tools' name for %s: read it with %s", a.role, flag)
		if a.note != "" {
			msg += " (" + fmt.Sprintf(a.note, shellWord(name)) + ")"
		}
		return suggestion{role: a.role, flag: flag, msg: msg}
	}
	if p, _, ok := splitIndex(canon); ok {
		role, known := prefixAliases[p]
		if _, k, ok := classify(canon); !known && ok && k >= 0 {
			role, known = p, true // a contract vector name in other case or spelling
		}
		if filePrefix, _, ok := splitIndex(name); known && ok {
			flag := "--column " + shellWord(role+"="+filePrefix)
			return suggestion{role: role, flag: flag,
				msg: fmt.Sprintf("unknown column; %s0, %s1, ... look like the vector columns %s0, %s1, ...: read them with %s",
					filePrefix, filePrefix, role, role, flag)}
		}
	}
	if s := suggest(name); s != "" {
		flag := "--column " + shellWord(s+"="+name)
		return suggestion{role: s, flag: flag,
			msg: fmt.Sprintf("unknown column (did you mean %q?): rename it, or read it with %s", s, flag)}
	}
	return dropSuggestion(name)
}

// dropSuggestion proposes --ignore for a column that is no contract
// column by any name ihope knows.
func dropSuggestion(name string) suggestion {
	flag := "--ignore " + shellWord(name)
	short := fmt.Sprintf("unknown column: drop it with %s, or read it as a contract column with --column ROLE=%s", flag, shellWord(name))
	var pandas string
	switch {
	case strings.HasPrefix(name, "__index_level_"):
		pandas = "; pandas writes its index this way: save with to_parquet(index=False)"
	case strings.HasPrefix(name, "Unnamed: "):
		pandas = "; pandas reads a nameless column (its index, saved) this way: save with to_csv(index=False)"
	}
	return suggestion{flag: flag, msg: short + " (the columns are " + contractColumns + ")" + pandas, short: short + pandas}
}

// shellWord quotes s for a POSIX shell if it needs quoting, so that a
// suggested flag can be pasted as it is.
//
// A name longer than a message shows (dataset.Quote) is shown cut, as dataset.Quote
// does: a flag with a 50 MB name could not be pasted anyway.
func shellWord(s string) string {
	if len(s) > dataset.MaxQuoted {
		return dataset.Quote(s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_-=.,/:+@%", c) >= 0) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}
