"""Other libraries' logged data as logs in ihope's contract (DataFrames).

Duck-typed: none of those libraries is imported or needed; an adapter reads
the attributes or keys each library documents, which are cited at each
function. Every adapter returns a DataFrame that ihope.estimate takes as it
is (and that can be inspected, edited or written to a file first).
"""

import numpy as np
import pandas as pd


def _get(obj, key, default=None):
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _has(obj, key):
    return (key in obj) if isinstance(obj, dict) else hasattr(obj, key)


def _matrix(x, n, what):
    a = np.asarray(x)
    if a.shape[0] != n:
        raise ValueError("%s: %d rows, want %d" % (what, a.shape[0], n))
    a = a.reshape(n, -1)
    return a


def _frame(episode, t, states, actions, rewards, discrete_actions, terminal=None, extra=None):
    """A contract DataFrame from per-step arrays; states (n, d) as
    state_0.. (float64), actions as action (ids) or action_0.. (reals)."""
    n = len(t)
    cols = {"episode": episode, "t": np.asarray(t, dtype=np.int64)}
    s = _matrix(states, n, "observations").astype(np.float64)
    for j in range(s.shape[1]):
        cols["state_%d" % j] = s[:, j]
    a = _matrix(actions, n, "actions")
    if discrete_actions is None:
        discrete_actions = np.issubdtype(a.dtype, np.integer) and a.shape[1] == 1
    if discrete_actions:
        if a.shape[1] != 1:
            raise ValueError("discrete actions: want one action id per step, got shape %s" % (a.shape,))
        cols["action"] = a[:, 0].astype(np.int64)
    else:
        a = a.astype(np.float64)
        for j in range(a.shape[1]):
            cols["action_%d" % j] = a[:, j]
    cols["reward"] = np.asarray(rewards, dtype=np.float64).reshape(n)
    for k, v in (extra or {}).items():
        cols[k] = v
    if terminal is not None:
        cols["terminal"] = np.asarray(terminal, dtype=np.int8)
    return pd.DataFrame(cols)


def _steps(lengths):
    """Episode ids and step indices for episodes of the given lengths."""
    lengths = np.asarray(lengths, dtype=np.int64)
    episode = np.repeat(np.arange(len(lengths)), lengths)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return episode, np.arange(lengths.sum()) - starts


def _last_flags(lengths, ended):
    """A 0/1 per step: 1 on the last step of each episode that ended in a
    terminal state."""
    lengths = np.asarray(lengths, dtype=np.int64)
    flags = np.zeros(int(lengths.sum()), dtype=np.int8)
    ends = np.cumsum(lengths) - 1
    flags[ends[np.asarray(ended, dtype=bool)]] = 1
    return flags


def from_d3rlpy(dataset, *, behavior_prob=None, discrete_actions=None):
    """A d3rlpy dataset as a log.

    dataset: d3rlpy 2's ReplayBuffer or MDPDataset (its ``episodes``, each
    with ``observations``, ``actions``, ``rewards`` and ``terminated``:
    d3rlpy/dataset/components.py, class Episode, where a timeout leaves
    ``terminated`` false), d3rlpy 1's MDPDataset (``episodes`` whose flag is
    ``terminal``), or the arrays MDPDataset is built from, as an object or
    a dict: ``observations``, ``actions``, ``rewards``, ``terminals`` and
    ``timeouts`` (d3rlpy/dataset/compat.py; d3rlpy 1 named the second flag
    ``episode_terminals``; D4RL's dicts use the same keys).

    An episode that terminated gets terminal = 1 on its last row; one cut
    off by a timeout is cut off (its next state is unknown: d3rlpy keeps no
    observation after an episode's last step). d3rlpy logs no behavior
    probabilities: give behavior_prob (one per step, in the episodes'
    order), or estimate with fit_behavior=True. Integer actions of one
    column are discrete ids; discrete_actions overrides that.
    """
    episodes = _get(dataset, "episodes")
    if episodes is not None and not _has(dataset, "terminals"):
        obs, act, rew, lengths, ended = [], [], [], [], []
        for ep in episodes:
            o = np.asarray(ep.observations)
            n = len(np.asarray(ep.actions))
            obs.append(o.reshape(len(o), -1)[:n])
            act.append(np.asarray(ep.actions).reshape(n, -1))
            rew.append(np.asarray(ep.rewards, dtype=np.float64).reshape(n))
            lengths.append(n)
            ended.append(bool(getattr(ep, "terminated", getattr(ep, "terminal", False))))
        states, actions, rewards = np.vstack(obs), np.vstack(act), np.concatenate(rew)
    else:
        for key in ("observations", "actions", "rewards", "terminals"):
            if not _has(dataset, key):
                raise TypeError("from_d3rlpy: want d3rlpy's episodes or the arrays observations, actions, "
                                "rewards, terminals (and timeouts); %r has no %s" % (type(dataset).__name__, key))
        states = np.asarray(_get(dataset, "observations"))
        n = len(states)
        states = states.reshape(n, -1)
        actions = np.asarray(_get(dataset, "actions")).reshape(n, -1)
        rewards = np.asarray(_get(dataset, "rewards"), dtype=np.float64).reshape(n)
        terminals = np.asarray(_get(dataset, "terminals")).reshape(n).astype(bool)
        cut = _get(dataset, "timeouts")
        if cut is None:
            cut = _get(dataset, "episode_terminals")
        cut = np.zeros(n, dtype=bool) if cut is None else np.asarray(cut).reshape(n).astype(bool)
        end = terminals | cut
        end[-1] = True  # d3rlpy closes the last episode as a timeout
        ends = np.flatnonzero(end)
        lengths = np.diff(np.concatenate([[-1], ends]))
        ended = terminals[ends]
    episode, t = _steps(lengths)
    extra = {}
    if behavior_prob is not None:
        extra["behavior_prob"] = np.asarray(behavior_prob, dtype=np.float64).reshape(len(t))
    return _frame(episode, t, states, actions, rewards, discrete_actions,
                  terminal=_last_flags(lengths, ended), extra=extra)


def from_obp(bandit_feedback, action_dist=None, *, policy=None):
    """Open Bandit Pipeline's logged bandit feedback as a log of one-step
    episodes.

    bandit_feedback: the dict ``obtain_batch_bandit_feedback`` returns
    (obp/dataset/synthetic.py: ``n_rounds``, ``n_actions``, ``context``
    (n_rounds, dim_context), ``action_context``, ``action``, ``position``,
    ``reward``, ``expected_reward``, ``pscore``; OpenBanditDataset's has the
    same keys). Each round is an episode of one step that terminates, read
    with ``ihope estimate --bandit`` (the frame's attrs say so, and
    ihope.estimate passes it): state_k the context (or one state 0 without
    one), action, reward, behavior_prob = pscore.
    action_dist: the evaluation policy as OBP gives it, (n_rounds,
    n_actions, len_list), read at each round's position (or (n_rounds,
    n_actions)): the target_prob_k columns; a dict {name: action_dist}
    gives several policies (target_prob_k@name). policy names the one
    policy's columns (target_prob_k@policy).

    A bandit's value is one step's expected reward: is-trajectory (IPW),
    wis-trajectory (SNIPW), fqe (DM) and dr (DR) run on it; the long-run
    estimators are left out.
    """
    action = np.asarray(bandit_feedback["action"]).astype(np.int64)
    n = len(action)
    context = bandit_feedback.get("context")
    cols = {}
    if context is None:
        cols["state"] = np.zeros(n, dtype=np.int64)
    else:
        c = _matrix(context, n, "context").astype(np.float64)
        for j in range(c.shape[1]):
            cols["state_%d" % j] = c[:, j]
    cols["action"] = action
    cols["reward"] = np.asarray(bandit_feedback["reward"], dtype=np.float64).reshape(n)
    if bandit_feedback.get("pscore") is not None:
        cols["behavior_prob"] = np.asarray(bandit_feedback["pscore"], dtype=np.float64).reshape(n)
    position = bandit_feedback.get("position")
    position = np.zeros(n, dtype=np.int64) if position is None else np.asarray(position).astype(np.int64)
    if action_dist is not None:
        dists = action_dist if isinstance(action_dist, dict) else {policy: action_dist}
        for name, dist in dists.items():
            d = np.asarray(dist, dtype=np.float64)
            if d.ndim == 3:
                d = d[np.arange(n), :, position]
            if d.ndim != 2 or d.shape[0] != n:
                raise ValueError("action_dist: want (n_rounds, n_actions[, len_list]), got %s" % (np.shape(dist),))
            suffix = "" if name is None else "@%s" % name
            for k in range(d.shape[1]):
                cols["target_prob_%d%s" % (k, suffix)] = d[:, k]
    frame = pd.DataFrame(cols)
    # No episode and no t column: ihope estimate --bandit reads every row as
    # a one-step episode that ends, and runs IPW, SNIPW, DM and DR.
    frame.attrs["ihope_options"] = {"bandit": True}
    return frame


def from_scope_rl(logged_dataset, input_dict=None):
    """SCOPE-RL's logged dataset as a log.

    logged_dataset: the dict SCOPE-RL's SyntheticDataset.obtain_episodes
    returns and its guide for real-world data asks for
    (docs/documentation/examples/real_world.rst; scope_rl/dataset/
    synthetic.py): ``size``, ``n_trajectories``, ``step_per_trajectory``,
    ``action_type`` ("discrete" or "continuous"), ``state`` (size,
    state_dim), ``action`` ((size,) ids or (size, action_dim)), ``reward``,
    ``done`` (the episode ended), ``terminal`` (it reached the fixed
    length) and ``pscore`` (the behavior's probability of the action; for
    continuous actions SCOPE-RL records one density per action dimension,
    whose product is the action's density).

    Trajectories are consecutive blocks of step_per_trajectory rows.
    SCOPE-RL marks every block's last row done; a row that is done but
    not terminal (not at the length limit) ended in a terminal state, and
    done inside a block ends an episode there (the rows after it start the
    next one, as SCOPE-RL's rollouts reset the environment).

    input_dict: SCOPE-RL's OPE input, {policy name: {...,
    "evaluation_policy_action_dist": (size, n_actions), ...}}: each
    policy's distribution as target_prob_k@name (discrete actions).
    """
    state = np.asarray(logged_dataset["state"], dtype=np.float64)
    size = len(state)
    L = int(logged_dataset.get("step_per_trajectory") or size)
    if size % L:
        raise ValueError("logged_dataset: size %d is not a multiple of step_per_trajectory %d" % (size, L))
    done = np.asarray(logged_dataset["done"]).reshape(size).astype(bool)
    limit = logged_dataset.get("terminal")
    limit = np.zeros(size, dtype=bool) if limit is None else np.asarray(limit).reshape(size).astype(bool)
    end = done.copy()
    end[L - 1::L] = True
    ends = np.flatnonzero(end)
    lengths = np.diff(np.concatenate([[-1], ends]))
    ended = done[ends] & ~limit[ends]
    episode, t = _steps(lengths)
    discrete = logged_dataset.get("action_type", "discrete") == "discrete"
    extra = {}
    pscore = logged_dataset.get("pscore")
    if pscore is not None:
        p = np.asarray(pscore, dtype=np.float64).reshape(size, -1)
        extra["behavior_prob"] = p.prod(axis=1)
    if input_dict:
        for name, inputs in input_dict.items():
            dist = inputs.get("evaluation_policy_action_dist")
            if dist is None:
                continue
            d = np.asarray(dist, dtype=np.float64).reshape(size, -1)
            for k in range(d.shape[1]):
                extra["target_prob_%d@%s" % (k, name)] = d[:, k]
    return _frame(episode, t, state, logged_dataset["action"], logged_dataset["reward"], discrete,
                  terminal=_last_flags(lengths, ended), extra=extra)


def from_minari(dataset, *, behavior_prob=None, discrete_actions=None):
    """A Minari dataset (or any iterable of its EpisodeData) as a log.

    Each EpisodeData has ``id``, ``observations`` (one more than the steps:
    the initial and the final observation are included), ``actions``,
    ``rewards``, ``terminations`` and ``truncations`` (Minari's
    docs/api/minari_dataset/episode_data.md); MinariDataset yields them
    from ``iterate_episodes()``. The final observation becomes the last
    row's next_state_k (ignored by ihope when the episode terminated);
    an episode whose last termination flag is set gets terminal = 1. Array
    observations only (a Dict space's must be flattened first). Minari logs
    no behavior probabilities: give behavior_prob (one per step) or
    estimate with fit_behavior=True.
    """
    episodes = dataset.iterate_episodes() if hasattr(dataset, "iterate_episodes") else dataset
    frames = []
    for i, ep in enumerate(episodes):
        act = np.asarray(ep.actions)
        n = len(act)
        obs = np.asarray(ep.observations)
        if obs.dtype == object or len(obs) != n + 1:
            raise ValueError("episode %s: want %d + 1 array observations, got %s" % (getattr(ep, "id", i), n, obs.shape))
        obs = obs.reshape(n + 1, -1).astype(np.float64)
        term = np.asarray(ep.terminations).reshape(n).astype(bool)
        ended = bool(term[-1]) if n else False
        ep_id = getattr(ep, "id", i)
        f = _frame(np.full(n, ep_id), np.arange(n), obs[:n], act.reshape(n, -1), ep.rewards,
                   discrete_actions, terminal=_last_flags([n], [ended]))
        for j in range(obs.shape[1]):
            col = np.full(n, np.nan)
            col[-1] = obs[n, j]
            f["next_state_%d" % j] = col
        frames.append(f)
    if not frames:
        raise ValueError("from_minari: no episodes")
    frame = pd.concat(frames, ignore_index=True)
    if behavior_prob is not None:
        frame.insert(frame.columns.get_loc("reward") + 1, "behavior_prob",
                     np.asarray(behavior_prob, dtype=np.float64).reshape(len(frame)))
    return frame
