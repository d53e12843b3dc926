package dataset

// Absorbing returns d with its absorbing state made explicit, the form in
// which every estimator reads an episodic log: each episode that ended in
// a terminal state (Terminal) leads, after its last logged step, to an
// absorbing state z with reward 0 that z leads back to under every action,
// and is padded with steps in z up to length T. An episode already T
// steps long or longer gets none; its last step's next state is z all the
// same.
//
// The semantics are those of d3rlpy's terminals and of the episodic MDPs
// of Sutton and Barto (Section 3.4): after a terminal step the return
// collects only zeros, so
//
//   - over a horizon T, the missing steps contribute 0 (the IS family
//     sees each terminal episode padded to T with reward 0; the ratio of
//     a padded step is 1, as both policies take z's only action);
//   - for gamma < 1 the normalised value (1 - gamma) E_d0[V] counts the
//     absorbing tail as zeros, and the ratio and value learners see z as
//     one more state whose value is 0 and whose ratio they learn from the
//     padded steps (a tabular learner solves it exactly).
//
// z is represented as follows:
//
//   - discrete states: the id NumStates (the result has one state more);
//   - real states: a vector one component longer, the logged states
//     (s, 0) and z = (0, ..., 0, 1): an explicit indicator, so a learner
//     over real states can give z its own value and ratio;
//   - in z the logged action is action 0 (a zero vector for real
//     actions), with log-probability 0 under both policies, and
//     TargetProbs, where the log has them, put all mass on action 0.
//
// Episodes that were cut off (Terminal false) are copied as they are.
// The result has no Terminal column (its absorbing steps are explicit)
// and every step of d keeps its place within its episode, so that
// per-episode quantities (the bootstrap's multiplicities) carry over. If
// no episode is terminal, Absorbing returns d itself.
func (d *Dataset) Absorbing(T int) *Dataset {
	if d.NumTerminal() == 0 {
		return d
	}
	out := &Dataset{NumStates: d.NumStates, NumActions: d.NumActions, StateDim: d.StateDim,
		ActionDim: d.ActionDim, Start: make([]int, 1, len(d.Start))}
	z := int32(d.NumStates)
	if d.Discrete() {
		out.NumStates++
	} else {
		out.StateDim++
	}
	out.IDs = d.IDs
	n := d.NumSteps()
	for e := range d.NumEpisodes() {
		if d.IsTerminal(e) {
			n += max(0, T-d.Len(e))
		}
	}
	if d.Discrete() {
		out.State = make([]int32, 0, n)
		out.FinalState = make([]int32, 0, len(d.IDs))
	} else {
		out.Obs = make([]float64, 0, n*out.StateDim)
		out.FinalObs = make([]float64, 0, len(d.IDs)*out.StateDim)
	}
	if d.ActionDim == 0 {
		out.Action = make([]int32, 0, n)
	} else {
		out.ActionVec = make([]float64, 0, n*d.ActionDim)
	}
	out.Reward = make([]float64, 0, n)
	out.LogTarget = make([]float64, 0, n)
	if d.LogBehavior != nil {
		out.LogBehavior = make([]float64, 0, n)
	}
	K := d.NumActions
	var zProbs []float64 // pi(.|z): all mass on action 0
	if d.TargetProbs != nil {
		out.TargetProbs = make([]float64, 0, n*K)
		out.FinalTargetProbs = make([]float64, 0, len(d.IDs)*K)
		out.HasFinalTarget = make([]bool, 0, len(d.IDs))
		zProbs = make([]float64, K)
		zProbs[0] = 1
	}
	zObs := make([]float64, out.StateDim)
	if !d.Discrete() {
		zObs[d.StateDim] = 1
	}
	for e := range d.NumEpisodes() {
		lo, hi := d.Span(e)
		// A block end of a moving-block resample (Blocks) keeps its
		// logged next state, at its new index.
		for j := lo; j < hi && d.cuts != nil; j++ {
			if c, ok := d.cuts[j]; ok {
				if out.cuts == nil {
					out.cuts = map[int]next{}
				}
				if c.obs != nil {
					c.obs = append(append([]float64(nil), c.obs...), 0)
				}
				out.cuts[len(out.Reward)+j-lo] = c
			}
		}
		// The logged steps.
		if d.Discrete() {
			out.State = append(out.State, d.State[lo:hi]...)
		} else {
			for j := lo; j < hi; j++ {
				out.Obs = append(append(out.Obs, d.ObsAt(j)...), 0)
			}
		}
		if d.ActionDim == 0 {
			out.Action = append(out.Action, d.Action[lo:hi]...)
		} else {
			out.ActionVec = append(out.ActionVec, d.ActionVec[lo*d.ActionDim:hi*d.ActionDim]...)
		}
		out.Reward = append(out.Reward, d.Reward[lo:hi]...)
		out.LogTarget = append(out.LogTarget, d.LogTarget[lo:hi]...)
		if d.LogBehavior != nil {
			out.LogBehavior = append(out.LogBehavior, d.LogBehavior[lo:hi]...)
		}
		if d.TargetProbs != nil {
			out.TargetProbs = append(out.TargetProbs, d.TargetProbs[lo*K:hi*K]...)
		}
		if !d.IsTerminal(e) {
			out.Start = append(out.Start, len(out.Reward))
			out.appendFinalOf(d, e, hi-1)
			continue
		}
		// The absorbing steps, then z as the final state.
		for range max(0, T-(hi-lo)) {
			if d.Discrete() {
				out.State = append(out.State, z)
			} else {
				out.Obs = append(out.Obs, zObs...)
			}
			if d.ActionDim == 0 {
				out.Action = append(out.Action, 0)
			} else {
				out.ActionVec = append(out.ActionVec, make([]float64, d.ActionDim)...)
			}
			out.Reward = append(out.Reward, 0)
			out.LogTarget = append(out.LogTarget, 0)
			if d.LogBehavior != nil {
				out.LogBehavior = append(out.LogBehavior, 0)
			}
			if d.TargetProbs != nil {
				out.TargetProbs = append(out.TargetProbs, zProbs...)
			}
		}
		out.Start = append(out.Start, len(out.Reward))
		out.HasFinal = append(out.HasFinal, true)
		if d.Discrete() {
			out.FinalState = append(out.FinalState, z)
		} else {
			out.FinalObs = append(out.FinalObs, zObs...)
		}
		if d.TargetProbs != nil {
			out.FinalTargetProbs = append(out.FinalTargetProbs, zProbs...)
			out.HasFinalTarget = append(out.HasFinalTarget, true)
		}
	}
	return out
}

// appendFinalOf appends, as the final state of out's last episode, the
// state after step j of d's episode e (out's states may carry the
// absorbing indicator of Absorbing: a 0 is appended to a real state).
func (out *Dataset) appendFinalOf(d *Dataset, e, j int) {
	if out.StateDim == d.StateDim {
		out.appendFinal(d, e, j)
		return
	}
	if d.TargetProbs != nil {
		v, ok := d.NextTargetProbs(e, j)
		if !ok {
			v = make([]float64, d.NumActions)
		}
		out.FinalTargetProbs = append(out.FinalTargetProbs, v...)
		out.HasFinalTarget = append(out.HasFinalTarget, ok)
	}
	v, ok := d.NextObs(e, j)
	if !ok {
		v = make([]float64, d.StateDim)
	}
	out.FinalObs = append(append(out.FinalObs, v...), 0)
	out.HasFinal = append(out.HasFinal, ok)
}
