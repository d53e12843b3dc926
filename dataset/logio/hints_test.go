package logio

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// hintFlags returns the flags a header's problems propose, each once, in
// the order the message prints them.
func hintFlags(ps []problem) []string {
	var out []string
	for _, p := range ps {
		if p.flag != "" && !slices.Contains(out, p.flag) {
			out = append(out, p.flag)
		}
	}
	return out
}

// shellWords splits a command line as a POSIX shell does for the words
// shellWord writes: spaces separate words, '...' quotes, and a backslash
// outside quotes escapes the next byte.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	in, quoted := false, false // inside a word; inside '...'
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			w.WriteByte(c)
		case c == '\'':
			quoted, in = true, true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			in = true
		case c == ' ':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// follow adds the flags to o as the command line reads them when a user
// pastes them (dataFlags.options: ParseColumns, then Check).
func follow(o ReadOptions, flags []string) (ReadOptions, error) {
	var cols []string
	for role, name := range o.Columns {
		cols = append(cols, role+"="+name)
	}
	o.Ignore = slices.Clone(o.Ignore)
	for _, f := range flags { // one proposal may hold several flags
		words := shellWords(f)
		if len(words)%2 != 0 {
			return o, fmt.Errorf("flags %q: %d words", f, len(words))
		}
		for i := 0; i < len(words); i += 2 {
			switch v := words[i+1]; words[i] {
			case "--column":
				cols = append(cols, v)
			case "--ignore":
				o.Ignore = append(o.Ignore, v)
			default:
				return o, fmt.Errorf("flag %q is neither --column nor --ignore", words[i])
			}
		}
	}
	m, err := ParseColumns(cols)
	if err != nil {
		return o, err
	}
	o.Columns = m
	return o, o.Check()
}

// hintAccepted checks that following every flag the header's problems
// propose is accepted: the flags parse, none is unused, no problem
// proposes another flag, none is about a column a flag read (a
// duplicate, an alternative given twice, a scalar beside a vector), and
// there are no more problems than before. It returns the flags.
func hintAccepted(names []string, o ReadOptions) ([]string, error) {
	_, before := layoutProblems(names, &o)
	flags := hintFlags(before)
	for _, p := range before {
		if p.flag != "" && !strings.Contains(p.msg, p.flag) {
			return flags, fmt.Errorf("problem of %q proposes %q but its message does not say it: %s", p.col, p.flag, p.msg)
		}
	}
	if len(flags) == 0 {
		return nil, nil
	}
	o2, err := follow(o, flags)
	if err != nil {
		return flags, fmt.Errorf("following %q: the flags are refused: %v", flags, err)
	}
	_, after := layoutProblems(names, &o2)
	mapped := map[string]bool{}
	rn := newRenamer(&o2)
	for _, n := range names {
		if c, ignored, flag := rn.contract(n); !ignored && flag != "" && c != n {
			mapped[n] = true
		}
	}
	for _, p := range after {
		if slices.ContainsFunc(before, func(q problem) bool { return q.col == p.col && q.msg == p.msg }) {
			continue // the header's own, which no flag made
		}
		switch {
		case p.flag != "":
			return flags, fmt.Errorf("following %q proposes %q for column %q: %s", flags, p.flag, p.col, p.msg)
		case strings.HasPrefix(p.msg, "--"):
			return flags, fmt.Errorf("following %q: %s", flags, p.msg)
		case mapped[p.col]:
			return flags, fmt.Errorf("following %q: column %q, which a flag read: %s", flags, p.col, p.msg)
		}
	}
	if len(after) > len(before) {
		return flags, fmt.Errorf("following %q: %d problems, %d before: %v", flags, len(after), len(before), after)
	}
	return flags, nil
}

// TestHeaderHintFollowed is the regression test of the hints that were
// refused when followed (issue 33, items 8 and 11), and of the other
// tools' shapes: the flags proposed, and that following them reads the
// header.
func TestHeaderHintFollowed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header string
		o      ReadOptions
		want   []string
	}{
		{"OBP contexts", "x_0,x_1,x_2,x_3,x_4,action,reward,pscore,target_prob", ReadOptions{},
			[]string{"--column state_=x_", "--column behavior_prob=pscore"}},
		{"SCOPE-RL candidate policies", "episode,t,state,action,reward,pscore,pi_A_0,pi_A_1,pi_A_2,pi_B_0,pi_B_1,pi_B_2", ReadOptions{},
			[]string{"--column behavior_prob=pscore", "--column target_prob_@A=pi_A_", "--column target_prob_@B=pi_B_"}},
		{"done beside terminal", "episode,t,state,action,reward,target_prob,terminal,done", ReadOptions{},
			[]string{"--column terminal=done --column truncated=terminal"}},
		{"done beside terminal and truncated", "episode,t,state,action,reward,target_prob,terminal,done,truncated", ReadOptions{},
			[]string{"--ignore done"}},
		{"two near misses of t", "episode,note,lst,st,state,action,reward,target_prob", ReadOptions{},
			[]string{"--ignore note", "--ignore lst", "--column t=st"}},
		{"Reward_1 beside reward", "episode,t,state,action,reward,Reward_1,target_prob", ReadOptions{},
			[]string{"--ignore Reward_1"}},
		{"Reward_0 and Reward_1", "episode,t,state,action,Reward_0,Reward_1,target_prob", ReadOptions{},
			[]string{"--column reward=Reward_0", "--ignore Reward_1"}},
		{"d3rlpy dump", "observations_0,observations_1,actions,rewards,terminals,timeouts,pscore", ReadOptions{},
			[]string{"--column state_=observations_", "--column action=actions", "--column reward=rewards",
				"--column terminal=terminals", "--column truncated=timeouts", "--column behavior_prob=pscore"}},
		{"Minari flattened", "observations_0,actions,rewards,terminations,truncations", ReadOptions{},
			[]string{"--column state_=observations_", "--column action=actions", "--column reward=rewards",
				"--column terminal=terminations", "--column truncated=truncations"}},
		{"RLlib", "eps_id,t,obs_0,obs_1,actions,rewards,terminateds,truncateds,action_prob", ReadOptions{},
			[]string{"--column episode=eps_id", "--column state_=obs_", "--column action=actions", "--column reward=rewards",
				"--column terminal=terminateds", "--column truncated=truncateds", "--column target_prob=action_prob"}},
		{"old gym done with its time limit", "episode,t,state,action,reward,target_prob,done,timelimit_truncated", ReadOptions{},
			[]string{"--column terminal=done", "--column truncated=timelimit_truncated"}},
		{"next_obs beside state vectors", "episode,t,obs_0,next_obs,action,reward,target_prob", ReadOptions{},
			[]string{"--column state_=obs_", "--ignore next_obs"}},
		{"an index written 01", "episode,t,obs_0,obs_01,action,reward,target_prob", ReadOptions{},
			[]string{"--column state_=obs_", "--ignore obs_01"}},
		{"a column given twice", "episode,t,state,action,reward,target_prob,pscore,pscore", ReadOptions{},
			[]string{"--ignore pscore"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names := strings.Split(tc.header, ",")
			flags, err := hintAccepted(names, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(flags, tc.want) {
				t.Errorf("flags %q, want %q", flags, tc.want)
			}
		})
	}
}

// FuzzHeaderHint builds a header from the fuzzer's bytes (names split at
// ',', some options split at ';'), takes the flags its error proposes,
// follows them, and asserts that they are accepted (hintAccepted).
func FuzzHeaderHint(f *testing.F) {
	for _, s := range []string{
		"x_0,x_1,x_2,x_3,x_4,action,reward,pscore,target_prob",
		"episode,t,state,action,reward,pscore,pi_A_0,pi_A_1,pi_A_2,pi_B_0,pi_B_1,pi_B_2",
		"episode,t,state,action,reward,target_prob,terminal,done",
		"episode,note,lst,st,state,action,reward,target_prob",
		"episode,t,state,action,reward,Reward_1,target_prob",
		"observations_0,observations_1,actions,rewards,terminals,timeouts,pscore",
		"eps_id,t,obs_0,obs_1,actions,rewards,terminateds,truncateds,action_prob,action_logp",
		"Episode,T,State,Action,Rewrad,target_prob,next_obs,next_obs_0",
		"episode,t,state_0,action,reward,target_prob@A,pi_B_0,next_pi_B_0,next_action_dist_0",
		"trajectory_id,step,s,a,r,pi0,pi_e,Unnamed: 0,__index_level_0__",
		"episode,t,state,action,reward,target_prob;state_=obs_;ignore=foo",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1000 {
			return
		}
		head, opts, _ := strings.Cut(s, ";")
		names := strings.Split(head, ",")
		var o ReadOptions
		for _, opt := range strings.Split(opts, ";") {
			switch k, v, _ := strings.Cut(opt, "="); {
			case opt == "":
			case k == "ignore":
				o.Ignore = append(o.Ignore, v)
			case k == "bandit":
				o.OneStep = true
			default:
				if o.Columns == nil {
					o.Columns = map[string]string{}
				}
				o.Columns[k] = v
			}
		}
		if o.Check() != nil {
			return // the user's own flags are refused before any header is read
		}
		if _, err := hintAccepted(names, o); err != nil {
			t.Fatalf("header %q, options %+v: %v", names, o, err)
		}
	})
}
