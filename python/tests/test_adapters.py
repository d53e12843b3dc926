"""Each adapter on synthetic data of its library's shape (the libraries
themselves are not installed: the adapters are duck-typed)."""

import dataclasses
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import ihope


@dataclasses.dataclass(frozen=True)
class D3Episode:
    # d3rlpy 2's Episode (d3rlpy/dataset/components.py).
    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    terminated: bool


def _d3rlpy_arrays():
    rng = np.random.default_rng(0)
    n = 9  # episodes of 3 (terminated), 2 (timeout), 4 (the buffer's end)
    obs = rng.normal(size=(n, 2)).astype(np.float32)
    act = rng.integers(0, 3, size=(n, 1)).astype(np.int32)
    rew = rng.normal(size=(n, 1)).astype(np.float32)
    terminals = np.array([0, 0, 1, 0, 0, 0, 0, 0, 0], dtype=np.float32)
    timeouts = np.array([0, 0, 0, 0, 1, 0, 0, 0, 0], dtype=np.float32)
    return obs, act, rew, terminals, timeouts


def test_from_d3rlpy_episodes_and_arrays_agree():
    obs, act, rew, terminals, timeouts = _d3rlpy_arrays()
    buffer = SimpleNamespace(episodes=[
        D3Episode(obs[0:3], act[0:3], rew[0:3], True),
        D3Episode(obs[3:5], act[3:5], rew[3:5], False),
        D3Episode(obs[5:9], act[5:9], rew[5:9], False),
    ])
    a = ihope.from_d3rlpy(buffer)
    b = ihope.from_d3rlpy(dict(observations=obs, actions=act, rewards=rew, terminals=terminals, timeouts=timeouts))
    pd.testing.assert_frame_equal(a, b)
    assert a["episode"].tolist() == [0, 0, 0, 1, 1, 2, 2, 2, 2]
    assert a["t"].tolist() == [0, 1, 2, 0, 1, 0, 1, 2, 3]
    assert a["terminal"].tolist() == [0, 0, 1, 0, 0, 0, 0, 0, 0]
    assert a["action"].tolist() == act[:, 0].tolist()
    # float32 observations widened exactly.
    assert np.array_equal(a[["state_0", "state_1"]].to_numpy(), obs.astype(np.float64))
    # ihope reads it (with a uniform target; d3rlpy logs no behavior
    # probabilities, which --fit-behavior fits): 3 episodes, 9 steps, one
    # terminal.
    r = ihope.estimate(a, target=np.full((9, 3), 1 / 3), fit_behavior=True, bootstrap=0,
                       estimators=["naive", "wis-stepwise"], report=False)
    assert (r.data["episodes"], r.data["steps"], r.data["terminal_episodes"]) == (3, 9, 1)


def test_from_d3rlpy_continuous_actions_and_behavior_prob():
    obs, _, rew, terminals, timeouts = _d3rlpy_arrays()
    act = np.linspace(-1, 1, 18).reshape(9, 2).astype(np.float32)
    f = ihope.from_d3rlpy(dict(observations=obs, actions=act, rewards=rew, terminals=terminals, timeouts=timeouts),
                          behavior_prob=np.full(9, 0.25))
    assert ["action_0", "action_1"] == [c for c in f.columns if c.startswith("action")]
    assert f["behavior_prob"].tolist() == [0.25] * 9


def test_from_obp_matches_hand_wis():
    # OBP's bandit_feedback (obp/dataset/synthetic.py obtain_batch_bandit_feedback).
    rng = np.random.default_rng(1)
    n, k = 40, 3
    pi_b = np.full((n, k), 1 / 3)
    action = rng.integers(0, k, size=n)
    feedback = dict(n_rounds=n, n_actions=k, context=rng.normal(size=(n, 2)), action_context=np.eye(k),
                    action=action, position=np.zeros(n, dtype=int), reward=rng.binomial(1, 0.4, size=n),
                    expected_reward=np.full((n, k), 0.4), pscore=pi_b[np.arange(n), action])
    dist = rng.dirichlet(np.ones(k), size=n)
    f = ihope.from_obp(feedback, action_dist=dist[:, :, None])
    assert "episode" not in f.columns and "t" not in f.columns and f.attrs["ihope_options"] == {"bandit": True}
    assert f[["target_prob_0", "target_prob_1", "target_prob_2"]].to_numpy().tolist() == dist.tolist()
    r = ihope.estimate(f, estimators=["wis-trajectory"], bootstrap=0, report=False)
    w = dist[np.arange(n), action] / feedback["pscore"]
    want = np.sum(w * feedback["reward"]) / np.sum(w)
    assert r.estimates["estimate"].iloc[0] == pytest.approx(want, rel=1e-12)
    # Several policies by name.
    two = ihope.from_obp(feedback, action_dist={"a": dist[:, :, None], "b": pi_b})
    r2 = ihope.estimate(two, estimators=["wis-trajectory"], bootstrap=0, report=False)
    est = dict(zip(r2.estimates["policy"], r2.estimates["estimate"]))
    assert est["a"] == pytest.approx(want, rel=1e-12)
    assert est["b"] == pytest.approx(feedback["reward"].mean(), rel=1e-12)
    # The bandit's default set: IPW, SNIPW, DM and DR, and nothing of the
    # long run (400 rounds: dr's cross-fitted value model needs more than 40).
    m = 400
    act = rng.integers(0, k, size=m)
    big = dict(n_rounds=m, n_actions=k, context=rng.normal(size=(m, 2)), action=act, reward=rng.binomial(1, 0.4, size=m),
               pscore=np.full(m, 1 / 3))
    r3 = ihope.estimate(ihope.from_obp(big, action_dist=rng.dirichlet(np.ones(k), size=m)), bootstrap=0, report=False)
    assert r3.estimates["estimator"].tolist() == ["is-trajectory", "wis-trajectory", "fqe", "dr"]
    assert r3.estimates["estimate"].notna().all()


def test_from_scope_rl():
    # SCOPE-RL's logged_dataset (docs/documentation/examples/real_world.rst):
    # 2 trajectories of 4 steps; the env ended after row 1 inside the first
    # (done, not at the limit), the first block ends at the limit
    # (terminal), the second ends done before the limit.
    size, k = 8, 2
    rng = np.random.default_rng(2)
    logged = dict(size=size, n_trajectories=2, step_per_trajectory=4, action_type="discrete", n_actions=k,
                  state=rng.normal(size=(size, 3)), action=np.array([0, 1, 1, 0, 1, 1, 0, 0]),
                  reward=np.arange(size, dtype=float), done=np.array([0, 1, 0, 1, 0, 0, 0, 1]),
                  terminal=np.array([0, 0, 0, 1, 0, 0, 0, 0]), pscore=np.full(size, 0.5))
    dist = np.tile([0.3, 0.7], (size, 1))
    f = ihope.from_scope_rl(logged, input_dict={"pi": {"evaluation_policy_action_dist": dist}})
    assert f["episode"].tolist() == [0, 0, 1, 1, 2, 2, 2, 2]
    assert f["t"].tolist() == [0, 1, 0, 1, 0, 1, 2, 3]
    assert f["terminal"].tolist() == [0, 1, 0, 0, 0, 0, 0, 1]
    assert f["target_prob_1@pi"].tolist() == [0.7] * size
    r = ihope.estimate(f, estimators=["wis-stepwise"], bootstrap=0, report=False)
    assert (r.data["episodes"], r.data["steps"], r.data["terminal_episodes"]) == (3, 8, 2)
    assert r.estimates["policy"].tolist() == ["pi"]


@dataclasses.dataclass
class MinariEpisode:
    # Minari's EpisodeData (docs/api/minari_dataset/episode_data.md).
    id: int
    observations: np.ndarray  # steps + 1
    actions: np.ndarray
    rewards: np.ndarray
    terminations: np.ndarray
    truncations: np.ndarray
    infos: dict = None


def test_from_minari():
    rng = np.random.default_rng(3)
    eps = []
    for i, (n, term) in enumerate([(3, True), (4, False)]):
        flags = np.zeros(n, dtype=bool)
        flags[-1] = term
        eps.append(MinariEpisode(i + 10, rng.normal(size=(n + 1, 2)), rng.integers(0, 2, size=n),
                                 rng.normal(size=n), flags, ~flags & (np.arange(n) == n - 1)))
    dataset = SimpleNamespace(iterate_episodes=lambda: iter(eps))
    f = ihope.from_minari(dataset, behavior_prob=np.full(7, 0.5))
    assert f["episode"].tolist() == [10, 10, 10, 11, 11, 11, 11]
    assert f["terminal"].tolist() == [0, 0, 1, 0, 0, 0, 0]
    assert f["next_state_0"].iloc[6] == eps[1].observations[4, 0]
    assert f["next_state_1"].isna().tolist() == [True, True, False, True, True, True, False]
    # A target callable is evaluated at the 7 states and at the one next
    # state the cut-off episode gives (the terminated one needs none).
    seen = []

    def target(s):
        seen.append(s.shape)
        return np.tile([0.25, 0.75], (len(s), 1))

    r = ihope.estimate(f, target=target, estimators=["wis-stepwise", "fqe"], bootstrap=0, report=False)
    assert seen == [(7, 2), (1, 2)]
    assert (r.data["episodes"], r.data["terminal_episodes"], r.data["episodes_without_next_state"]) == (2, 1, 0)
