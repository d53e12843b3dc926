import json
import os

import numpy as np
import pandas as pd
import pytest

import ihope
from conftest import POLICIES, cli

OPTS = ["--bootstrap", "30", "--seed", "5"]


def _cli_json(*args):
    return json.loads(cli("estimate", "--json", *args))


def _same_estimates(got, want):
    """Every field of every row equal, floats to the last digit."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g == w


def test_path_and_dataframe_equal_cli(taxi_csv):
    want = _cli_json("--data", taxi_csv, *OPTS)
    by_path = ihope.estimate(taxi_csv, bootstrap=30, seed=5, report=False)
    frame = pd.read_csv(taxi_csv, float_precision="round_trip")
    by_frame = ihope.estimate(frame, bootstrap=30, seed=5, report=False)
    _same_estimates(by_path.raw["estimates"], want["estimates"])
    _same_estimates(by_frame.raw["estimates"], want["estimates"])
    assert by_path.warnings == want["warnings"]
    summary = {k: v for k, v in by_frame.data.items() if k != "file"}
    assert summary == {k: v for k, v in want["data"].items() if k != "file"}
    est = by_frame.estimates
    assert list(est.columns[:5]) == ["estimator", "estimate", "estimand", "ci_low", "ci_high"]
    assert est["estimate"].tolist() == [r["estimate"] for r in want["estimates"]]
    # The default set with the target's distribution includes fqe and dr.
    assert {"fqe", "dr", "wis-stepwise"} <= set(est["estimator"])


def test_sample_equals_cli_file(taxi_csv):
    logs = ihope.sample("taxi", n=50, T=100, seed=3, target_probs=True)
    file = pd.read_csv(taxi_csv, float_precision="round_trip")
    assert list(logs.columns) == list(file.columns)
    for c in logs.columns:
        got = logs[c].astype("float64").to_numpy()
        assert np.array_equal(got, file[c].to_numpy(dtype=float), equal_nan=True), c


def _policy(name):
    table = pd.read_csv(os.path.join(POLICIES, name + ".csv"), float_precision="round_trip")
    probs = table.sort_values("state").iloc[:, 1:].to_numpy()
    return lambda states: probs[states[:, 0]]


def _behavior_only(frame):
    return frame[[c for c in frame.columns if not c.startswith(("target_", "next_target_"))]]


def test_callable_equals_columns(taxi_csv):
    frame = pd.read_csv(taxi_csv, float_precision="round_trip")
    opts = dict(bootstrap=30, seed=5, report=False, estimators=["wis-stepwise", "model-based", "fqe", "dr", "mql"])
    want = ihope.estimate(frame, **opts)
    calls = []

    def pi19(states):
        calls.append(states.shape)
        return _policy("pi19")(states)

    got = ihope.estimate(_behavior_only(frame), target=pi19, **opts)
    _same_estimates(got.raw["estimates"], want.raw["estimates"])
    # Called at the 5000 logged states, then at the 50 episodes' next states.
    assert calls == [(5000, 1), (50, 1)]
    # The same probabilities as an (n, K) array (no next states: the
    # array gives the logged rows only, so compare with the columns minus
    # next_target_prob_k).
    k = [c for c in frame.columns if c.startswith("target_prob_")]
    arr = ihope.estimate(_behavior_only(frame), target=frame[k].to_numpy(), **opts)
    cols = ihope.estimate(frame.drop(columns=[c for c in frame.columns if c.startswith("next_target_")]), **opts)
    _same_estimates(arr.raw["estimates"], cols.raw["estimates"])


def test_mapping_equals_policy_files(taxi_csv):
    frame = _behavior_only(pd.read_csv(taxi_csv, float_precision="round_trip"))
    plain = os.path.join(os.path.dirname(taxi_csv), "behavior.csv")
    frame.to_csv(plain, index=False)
    want = _cli_json("--data", plain, "--bootstrap", "0", "--estimators", "wis-stepwise,fqe,dr",
                     "--target-policy", "pi19=" + os.path.join(POLICIES, "pi19.csv"),
                     "--target-policy", "pi17=" + os.path.join(POLICIES, "pi17.csv"))
    got = ihope.estimate(frame, target={"pi19": _policy("pi19"), "pi17": _policy("pi17")},
                         bootstrap=0, estimators=["wis-stepwise", "fqe", "dr"], report=False)
    _same_estimates(got.raw["estimates"], want["estimates"])
    assert got.ranking["policies"] == ["pi19", "pi17"]
    assert set(got.estimates["policy"]) == {"pi19", "pi17"}


def test_real_action_draws(tmp_path):
    logs, draws = ihope.sample("pendulum", n=8, T=50, seed=3, target_draws=True)
    path, dpath = str(tmp_path / "p.csv"), str(tmp_path / "d.csv")
    cli("sample", "--env", "pendulum", "-n", 8, "-T", 50, "--seed", 3, "--out", path, "--target-draws", dpath)
    want = _cli_json("--data", path, "--target-draws", dpath, "--bootstrap", "0", "--gamma", "0.9",
                     "--estimators", "fqe,dr")
    states = [c for c in draws.columns if c.startswith("state_")]
    acts = [c for c in draws.columns if c.startswith("action_")]
    lookup = {tuple(s): a for s, a in zip(draws[states].to_numpy(), draws[acts].to_numpy())}

    def draw(s):  # the target "drawing" at the states: the CLI's draws
        return np.array([lookup[tuple(x)] for x in s])

    opts = dict(bootstrap=0, gamma=0.9, estimators=["fqe", "dr"], report=False)
    got = ihope.estimate(logs, target=draw, **opts)
    _same_estimates(got.raw["estimates"], want["estimates"])
    given = ihope.estimate(logs, target_draws=draws, **opts)
    _same_estimates(given.raw["estimates"], want["estimates"])


def test_report_renders(taxi_csv, tmp_path):
    out = str(tmp_path / "r.html")
    r = ihope.estimate(taxi_csv, bootstrap=20, estimators=["naive", "wis-stepwise", "dr"], report=out)
    assert r.report_html and r.report_html.lstrip().lower().startswith("<!doctype html")
    with open(out, encoding="utf-8") as f:
        assert f.read() == r.report_html
    for row in r.raw["estimates"]:
        assert ">%.6g<" % row["estimate"] in r.report_html, row["estimator"]
    page = r._repr_html_()
    assert page.startswith("<iframe srcdoc=") and "&lt;table" in page
    assert ihope.estimate(taxi_csv, bootstrap=0, estimators=["naive"], report=False)._repr_html_().startswith("<div>")


def test_recommended():
    empty = ihope.Estimate({"estimates": []})
    assert list(empty.recommended.columns) == ["policy", "estimator", "estimate", "ci_low", "ci_high", "why"]
    assert len(empty.recommended) == 0
    rows = [{"policy": "pi19", "estimator": "dr", "estimate": -0.15, "ci_low": -0.2, "ci_high": -0.1, "why": "w"},
            {"policy": "pi17", "estimator": None, "estimate": None, "ci_low": None, "ci_high": None, "why": "tie"}]
    rec = ihope.Estimate({"estimates": [], "recommended": rows}).recommended
    assert rec["estimator"].tolist() == ["dr", None] and rec["estimate"].iloc[0] == -0.15


def test_verdicts(taxi_csv):
    assert list(ihope.Estimate({"estimates": []}).verdicts.columns) == [
        "policy", "baseline", "verdict", "bound_method", "level", "guaranteed", "why"]
    r = ihope.estimate(taxi_csv, bootstrap=50, estimators=["model-based", "wis-trajectory"], report=False,
                       bounds=True, reward_range="-1,20", baseline="0")
    v = r.verdicts
    assert len(v) == 1 and v["baseline"].iloc[0] == "0"
    # every reward of Taxi's log is -1 or 20 and the target's value is
    # negative: better than 0 is never shown
    assert v["verdict"].iloc[0] in ("worse", "not shown")
    method = r.raw["verdicts"][0].get("bound_method", "")
    assert bool(v["guaranteed"].iloc[0]) == (method not in ("", "bootstrap"))


def test_options_reach_the_binary(taxi_csv):
    a = ihope.estimate(taxi_csv, bootstrap=20, seed=9, alpha=0.1, estimators=["wis-stepwise"], report=False)
    assert a.bootstrap == {"resamples": 20, "alpha": 0.1, "method": "episodes (Poisson)", "seed": 9}
    with pytest.raises(ihope.UsageError, match="--no-such-flag"):
        ihope.estimate(taxi_csv, no_such_flag=1, report=False)


def test_benchmark_quick(tmp_path):
    b = ihope.benchmark(suite="cobs", seeds=1, quick=True, out=tmp_path)
    assert len(b.leaderboard) == len(b.raw["overall"]) > 0
    assert {"estimator", "estimand", "log10_nmse", "rank"} <= set(b.leaderboard.columns)
    assert set(b.worlds["world"]) == {w["world"] for w in b.raw["worlds"]}
