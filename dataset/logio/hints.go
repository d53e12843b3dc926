package logio

import (
	"fmt"
	"strings"
)

// hints chooses the flag that reads each unknown column of a header so
// that following every flag printed reads the header: a contract column
// is proposed for at most one of the file's columns, never for one the
// file already has (by its own name or through --column), nor beside
// its alternative (state beside state_0, behavior_prob beside
// behavior_logprob), and a column a proposal cannot serve is dropped
// with --ignore, which is always accepted. Other tools' names (aliases,
// prefixAliases, a named policy's pi_NAME_k) come first, in column
// order, then near misses of contract names, closest first.
type hints struct {
	names   []string
	count   map[string]int     // how often each name is in the header
	present func(r role) bool  // the layout has a column of role r (or of its alternative)
	named   bool               // the header names its target policies (target_prob@NAME, ...)
	plain   bool               // the header has an unnamed target column
	user    map[string]string  // the --column flags given (ReadOptions.Columns)
	taken   map[string]string  // contract column or prefix -> the file's name (or prefix) proposed for it
	out     map[int]suggestion // by position in the header
}

// alternative is the role that excludes r (state_k for state, ...), or r.
func alternative(r role) role {
	for _, p := range [...][2]role{
		{roleState, roleStateK}, {roleAction, roleActionK},
		{roleBehavior, roleBehaviorLn}, {roleTarget, roleTargetLn},
		{roleNext, roleNextK},
	} {
		if r == p[0] {
			return p[1]
		}
		if r == p[1] {
			return p[0]
		}
	}
	return r
}

// free reports whether the contract column or prefix role may be
// proposed, and if not, what already holds it (for the message).
func (h *hints) free(target string) (bool, string) {
	if by, ok := h.user[target]; ok {
		return false, fmt.Sprintf("--column %s=%s is given", target, by)
	}
	if by, ok := h.taken[target]; ok {
		return false, fmt.Sprintf("%q is proposed for it already", by)
	}
	base, policy, named := cutPolicy(target)
	r, k, ok := classify(base)
	if !ok {
		for _, v := range vectorPrefixes {
			if v.prefix == base {
				r, k, ok = v.role, 0, true
			}
		}
	}
	if !ok {
		return false, "not a contract column"
	}
	target4 := r == roleTarget || r == roleTargetLn || r == roleTargetK || r == roleNextTarget
	switch {
	case named && h.plainTaken():
		return false, "an unnamed target column is proposed"
	case !named && target4 && h.namedTaken():
		return false, "a named policy's columns are proposed"
	case named && h.plain:
		return false, "the file has an unnamed target column"
	case named && policy != "" && h.namedPolicy(policy):
		return false, fmt.Sprintf("the file names policy %q's columns already", policy)
	case !named && target4 && h.named:
		return false, "the file names its target policies' columns (target_prob@NAME, ...)"
	case !named && (h.present(r) || h.present(alternative(r))):
		return false, "the file has it already"
	case r == roleNext && h.has(roleStateK):
		return false, "the states are vectors (state_0, ...)"
	case r == roleNextK && !h.has(roleStateK):
		return false, "the states are not vectors (state_0, ...)"
	case (r == roleTargetK || r == roleNextTarget) && h.has(roleActionK):
		return false, "the actions are vectors (action_0, ...)"
	case r == roleNextTarget && !h.has(roleTargetK):
		return false, "the file gives no target_prob_k columns"
	case r == roleNextTarget && !h.has(roleNext) && !h.has(roleNextK):
		return false, "the file gives no next state"
	}
	if named {
		return true, ""
	}
	// A scalar beside a proposed vector (state beside state_), and the
	// other way round.
	alt := alternative(r)
	for t := range h.taken {
		if tr, _, ok := classify(t); ok && (tr == alt || tr == r && k >= 0) {
			return false, fmt.Sprintf("%q is proposed for %s", h.taken[t], t)
		}
		for _, v := range vectorPrefixes {
			if v.prefix == t && (v.role == alt || v.role == r) {
				return false, fmt.Sprintf("%q is proposed for %s", h.taken[t], t)
			}
		}
	}
	return true, ""
}

// has reports whether the header has a column of role r, or one is
// proposed for it.
func (h *hints) has(r role) bool { return h.present(r) || h.takenRole(r) }

// ownTerminal reports whether the header's terminal column is the one
// named terminal, read by its own name (not through --column).
func (h *hints) ownTerminal() bool {
	_, mapped := h.user["terminal"]
	_, remapped := h.user["truncated"]
	return h.count["terminal"] == 1 && !mapped && !remapped && h.present(roleTerminal)
}

// namedTaken reports whether a named policy's columns are proposed.
func (h *hints) namedTaken() bool {
	for t := range h.taken {
		if strings.Contains(t, "@") {
			return true
		}
	}
	return false
}

// plainTaken reports whether an unnamed target column is proposed.
func (h *hints) plainTaken() bool {
	return h.takenRole(roleTarget) || h.takenRole(roleTargetLn) || h.takenRole(roleTargetK) || h.takenRole(roleNextTarget)
}

// takenRole reports whether a column of role r (unnamed) is proposed.
func (h *hints) takenRole(r role) bool {
	for t := range h.taken {
		if tr, _, ok := classify(t); ok && tr == r {
			return true
		}
		for _, v := range vectorPrefixes {
			if v.prefix == t && v.role == r {
				return true
			}
		}
	}
	return false
}

// namedPolicy reports whether the header names policy p's columns.
func (h *hints) namedPolicy(p string) bool {
	for _, n := range h.names {
		if _, q, ok := cutPolicy(n); ok && q == p {
			return true
		}
	}
	return false
}

// plan proposes a flag for each unknown column (positions in the
// header) and returns the proposals by position.
func (h *hints) plan(unknown []int) map[int]suggestion {
	h.taken, h.out = map[string]string{}, map[int]suggestion{}
	var near []int
	for _, j := range unknown {
		name := h.names[j]
		if len(name) > maxNameLen { // a flag naming it would be as long
			h.out[j] = suggestion{msg: "unknown column: rename it (a name this long cannot be given as a flag)"}
			continue
		}
		if h.count[name] > 1 {
			h.out[j] = ignoreSuggestion(name, fmt.Sprintf("unknown column, given %d times: drop every copy with --ignore %s, or rename them", h.count[name], shellWord(name)))
		}
	}
	// Other tools' names in three passes, so that what a column may be
	// depends on the columns it needs, not on their order: first the
	// state and the action (ids or vectors), then the others, then
	// next_target_prob_k (which need target_prob_k and a next state).
	for pass := range 3 {
		for _, j := range unknown {
			if _, done := h.out[j]; done {
				continue
			}
			if s, ok := h.other(h.names[j], pass); ok {
				h.out[j] = s
			}
		}
	}
	for _, j := range unknown {
		if _, done := h.out[j]; !done {
			near = append(near, j)
		}
	}
	// Near misses, closest first (a stable order: by distance, then by
	// position).
	type cand struct {
		j, d int
		s    string
	}
	var cs []cand
	for _, j := range near {
		s, d := suggestDist(h.names[j])
		cs = append(cs, cand{j, d, s})
	}
	for d := 0; d <= 3; d++ {
		for _, c := range cs {
			if c.d != d || c.s == "" {
				continue
			}
			name := h.names[c.j]
			if ok, why := h.free(c.s); ok {
				h.taken[c.s] = name
				flag := "--column " + shellWord(c.s+"="+name)
				h.out[c.j] = suggestion{role: c.s, flag: flag,
					msg: fmt.Sprintf("unknown column (did you mean %q?): rename it, or read it with %s", c.s, flag)}
			} else {
				h.out[c.j] = ignoreSuggestion(name, fmt.Sprintf("unknown column: drop it with --ignore %s (it looks like %s, but %s)", shellWord(name), c.s, why))
			}
		}
	}
	for _, j := range near {
		if _, ok := h.out[j]; !ok {
			h.out[j] = dropSuggestion(h.names[j])
		}
	}
	return h.out
}

// passOf is the pass of plan in which a proposal for the contract column
// or prefix role is made.
func passOf(role string) int {
	switch role {
	case "state", "state_", "action", "action_":
		return 0
	case "next_target_prob_":
		return 2
	}
	return 1
}

// ignoreSuggestion drops a column with --ignore.
func ignoreSuggestion(name, msg string) suggestion {
	return suggestion{flag: "--ignore " + shellWord(name), msg: msg}
}

// other proposes the flag for another tool's name of a contract column:
// an alias, a prefix of vector columns, or a named policy's action
// distribution (SCOPE-RL's pi_NAME_0, pi_NAME_1, ...). ok is false for
// a name that is none of these.
func (h *hints) other(name string, pass int) (suggestion, bool) {
	canon := canonical(name)
	if a, ok := aliases[canon]; ok {
		role := a.role
		if passOf(role) != pass {
			return suggestion{}, false
		}
		if role == "terminal" && (h.present(roleTruncated) || h.taken["truncated"] != "") {
			a.note = "" // done with a truncated column: a cut-off row reads as cut off
		}
		if free, _ := h.free(role); !free && a.alt != "" {
			if free, _ := h.free(a.alt); free {
				role, a.note = a.alt, "" // RLlib's action_prob beside the target's: the logging policy's
			}
		}
		if free, _ := h.free(role); !free && role == "terminal" && h.ownTerminal() {
			if free, _ := h.free("truncated"); free {
				// SCOPE-RL's done (any end) beside its terminal (the
				// time limit): done is the terminal column, terminal
				// the truncated one.
				h.taken["terminal"], h.taken["truncated"] = name, "terminal"
				flag := "--column " + shellWord("terminal="+name) + " --column truncated=terminal"
				return suggestion{role: "terminal", flag: flag, msg: fmt.Sprintf("unknown column; SCOPE-RL writes done (an episode ends) beside terminal "+
					"(it reached the maximum steps, a cut-off): read them with %s; if the file's terminal marks terminal states instead, drop %s with --ignore %s",
					flag, shellWord(name), shellWord(name))}, true
			}
		}
		if free, why := h.free(role); !free {
			return ignoreSuggestion(name, fmt.Sprintf("unknown column; other OPE tools' name for %s, but %s: drop it with --ignore %s", role, why, shellWord(name))), true
		}
		h.taken[role] = name
		flag := "--column " + shellWord(role+"="+name)
		msg := fmt.Sprintf("unknown column; other OPE tools' name for %s: read it with %s", role, flag)
		if a.note != "" {
			msg += " (" + fmt.Sprintf(a.note, shellWord(name)) + ")"
		}
		return suggestion{role: role, flag: flag, msg: msg}, true
	}
	p, k, ok := splitIndex(canon)
	filePrefix, _, fok := splitIndex(name)
	if !ok || !fok || len(filePrefix) != len(p) {
		return suggestion{}, false
	}
	role, known := prefixAliases[p]
	policy := ""
	if !known {
		if _, kk, ok := classify(canon); ok && kk >= 0 {
			role, known = p, true // a contract vector name in other case or spelling
		} else if pol, next, ok := policyPrefix(filePrefix); ok {
			role, policy, known = "target_prob_", pol, true
			if next {
				role = "next_target_prob_"
			}
		}
	}
	if !known || passOf(role) != pass {
		return suggestion{}, false
	}
	// The prefix mapping reads the columns whose index is written as the
	// contract writes it (0, 1, ..., 10; not 01).
	if _, kk, ok := classify(role + strings.TrimPrefix(name, filePrefix)); !ok || kk != k {
		return ignoreSuggestion(name, fmt.Sprintf("unknown column: drop it with --ignore %s (its index is not written 0, 1, 2, ..., so --column %s%s=%s does not read it)",
			shellWord(name), role, atPolicy(policy), shellWord(filePrefix))), true
	}
	key := role + atPolicy(policy)
	if by, ok := h.taken[key]; ok && by == filePrefix {
		return suggestion{role: role, flag: "--column " + shellWord(key+"="+filePrefix), msg: h.prefixMsg(filePrefix, role, policy)}, true
	}
	if free, why := h.free(key); !free {
		return ignoreSuggestion(name, fmt.Sprintf("unknown column; %s0, %s1, ... look like the vector columns %s0, %s1, ..., but %s: drop it with --ignore %s",
			filePrefix, filePrefix, role, role, why, shellWord(name))), true
	}
	h.taken[key] = filePrefix
	return suggestion{role: role, flag: "--column " + shellWord(key+"="+filePrefix), msg: h.prefixMsg(filePrefix, role, policy)}, true
}

// prefixMsg is the message of a prefix proposal.
func (h *hints) prefixMsg(filePrefix, role, policy string) string {
	flag := "--column " + shellWord(role+atPolicy(policy)+"="+filePrefix)
	if policy != "" {
		return fmt.Sprintf("unknown column; %s0, %s1, ... look like target policy %q's action distribution (%s0@%s, ...): read them with %s",
			filePrefix, filePrefix, policy, role, policy, flag)
	}
	return fmt.Sprintf("unknown column; %s0, %s1, ... look like the vector columns %s0, %s1, ...: read them with %s",
		filePrefix, filePrefix, role, role, flag)
}

// atPolicy is "@NAME" for a named policy, "" otherwise.
func atPolicy(p string) string {
	if p == "" {
		return ""
	}
	return "@" + p
}

// policyPrefix reads SCOPE-RL's names of several candidate policies'
// action distributions, pi_NAME_k (and next_pi_NAME_k at the next
// state): it returns NAME. pi_b_ (the behavior's) and pi_e_ (an
// unnamed target's, an alias) are not policies' names.
func policyPrefix(filePrefix string) (policy string, next bool, ok bool) {
	rest, found := strings.CutPrefix(filePrefix, "pi_")
	if !found {
		if rest, found = strings.CutPrefix(filePrefix, "next_pi_"); !found {
			return "", false, false
		}
		next = true
	}
	policy = strings.TrimSuffix(rest, "_")
	switch policy { // pi_B_ names policy B; pi_b_ is the behavior's
	case "", "b", "e", "0", "behavior", "behaviour":
		return "", false, false
	}
	for _, c := range policy { // a name that reads back the same from --column
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return "", false, false
		}
	}
	return policy, next, true
}
