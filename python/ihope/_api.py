"""ihope.estimate, ihope.sample and ihope.benchmark: thin wrappers over the
binary's commands of the same names."""

import glob
import json
import os
import tempfile

import numpy as np
import pandas as pd

from . import _log
from ._binary import binary, run, run_json
from ._result import Benchmark, Estimate

# Flags that may be given several times; a list gives each element.
_REPEATED = {"column", "target_policy", "reference"}


def _flags(options):
    """Keyword options as command-line flags: snake_case -> --kebab-case,
    True -> a bare flag, False/None -> nothing, a list -> comma-separated
    (or the flag repeated for --column, --target-policy, --reference), a
    dict -> NAME=VALUE pairs, a float -> its exact repr. A value is joined
    to its flag (--flag=value), so that one starting with "-" (a negative
    --baseline, --reward-range=-1,20) is not read as a flag."""
    out = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            out.append(flag)
        elif isinstance(value, dict):
            out += ["%s=%s=%s" % (flag, k, _text(v)) for k, v in value.items()]
        elif isinstance(value, (list, tuple)):
            if key in _REPEATED:
                out += ["%s=%s" % (flag, _text(v)) for v in value]
            else:
                out.append("%s=%s" % (flag, ",".join(_text(v) for v in value)))
        else:
            out.append("%s=%s" % (flag, _text(value)))
    return out


def _text(v):
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return os.fspath(v) if isinstance(v, os.PathLike) else str(v)


def estimate(data, *, target=None, gamma=1.0, estimators=None, estimand=None, bootstrap=None,
             seed=1, columns=None, report=True, **options):
    """Estimates target policies' values from logs with ``ihope estimate``.

    data: a DataFrame in the log contract (one row per step: episode, t,
        state or state_0.., action or action_0.., reward, behavior_prob or
        behavior_logprob, target columns), a path (CSV, TSV, gzipped, or
        Parquet), or what an adapter returns (ihope.from_d3rlpy, ...).
    target: the target policy, if the log's columns do not give it:
        an array or DataFrame (n,) of the logged action's probabilities, or
        (n, K) of every action's; a callable states (n, d) -> probabilities
        (n, K), evaluated at the logged states and at the next states the
        episodes' last rows give; for real-valued actions a callable
        states (n, d) -> actions (n, A) drawn from the target (the
        --target-draws file); or a mapping {name: one of those} for several
        policies, ranked.
    columns: {role: file column} as --column takes (e.g. {"behavior_prob":
        "pscore", "state_": "obs_"}).
    report: True keeps the HTML report in result.report_html (shown inline
        in Jupyter), a path also writes it there, False skips it.
    gamma, estimators (list), estimand ("horizon"/"long-run"), bootstrap
    (resamples), seed, and any other flag of ``ihope estimate --help`` as a
    keyword: alpha=0.1, train_seed=3, value_model="linear",
    fit_behavior=True, target_policy={"pi19": "pi19.csv"},
    reference={"pi19": -0.14}, ignore=["user_id"], workers=2, ...

    Returns an ihope.Estimate (.estimates, .recommended, .warnings, .data,
    .raw). Bad data raises ihope.DataError naming the row and column.
    """
    roles = _log.Roles(columns)
    with tempfile.TemporaryDirectory(prefix="ihope-") as tmp:
        files = {}
        args = ["estimate", "--json"]
        if _log.is_path(data) and target is None:
            path = os.fspath(data)
            files[path] = path
        else:
            if _log.is_path(data):
                shown = os.fspath(data)
                frame = _log.read(data, roles)
            elif isinstance(data, pd.DataFrame):
                shown, frame = None, data
                # An adapter's frame may carry the flags its shape needs
                # (from_obp: bandit); the caller's own options win.
                for k, v in data.attrs.get("ihope_options", {}).items():
                    options.setdefault(k, v)
            else:
                raise TypeError("data: a DataFrame, a path or an adapter's result, not %s" % type(data).__name__)
            if target is not None:
                if _log.real_actions(frame, roles):
                    if isinstance(target, dict) or not callable(target):
                        raise TypeError("target: with real-valued actions, give a callable that draws the "
                                        "target's actions at states (n, d) -> (n, A)")
                    draws = os.path.join(tmp, "draws.csv")
                    _log.draws(frame, roles, target).to_csv(draws, index=False)
                    files[draws] = "target draws"
                    args += ["--target-draws", draws]
                else:
                    frame = _log.with_columns(frame, _log.target_columns(frame, roles, target))
            path = os.path.join(tmp, "log.csv")
            _log.write(frame, roles, path)
            files[path] = shown
            files[path + "#index"] = list(frame.index)
        args += ["--data", path]
        if isinstance(options.get("target_draws"), pd.DataFrame):
            draws = os.path.join(tmp, "given-draws.csv")
            _log.write(options.pop("target_draws"), _log.Roles(None), draws)
            files[draws] = "target_draws"
            args += ["--target-draws", draws]
        report_path = None
        if report:
            report_path = os.path.join(tmp, "report.html") if report is True else os.fspath(report)
            args += ["--report", report_path]
        opts = dict(gamma=float(gamma), estimators=estimators, estimand=estimand, bootstrap=bootstrap, seed=seed)
        opts.update(options)
        args += [a for pair in roles.flags() for a in pair] + _flags(opts)
        raw = run_json(args, files)
        html = None
        if report_path:
            with open(report_path, encoding="utf-8") as f:
                html = f.read()
        return Estimate(raw, html, [binary()] + args)


def sample(env="taxi", *, n=200, T=400, seed=1, target_draws=False, **options):
    """Logs sampled from a built-in world with ``ihope sample``, as a
    DataFrame in the log contract (the same seed gives the same logs as the
    CLI; target_probs=True adds target_prob_k). With target_draws=True
    (env="pendulum") returns (logs, draws): draws is the --target-draws
    table, which ihope.estimate takes as target_draws=."""
    with tempfile.TemporaryDirectory(prefix="ihope-") as tmp:
        out = os.path.join(tmp, "logs.csv")
        args = ["sample", "--env", env, "--n", n, "--t", T, "--seed", seed, "--out", out]
        draws = os.path.join(tmp, "draws.csv") if target_draws else None
        if draws:
            args += ["--target-draws", draws]
        run(args + _flags(options))
        logs = _log.read(out)
        if draws:
            return logs, _log.read(draws)
        return logs


def benchmark(*, suite="all", seeds=None, quick=False, out=None, workers=None):
    """Runs ``ihope benchmark`` and returns its leaderboard (ihope.Benchmark).

    out: the directory of the results files, leaderboards and figures
    (resumable: a rerun computes only the missing cells); default a
    temporary directory, removed after reading.
    """
    def go(directory):
        run(["benchmark", "--suite", suite, "--out", directory] + _flags(dict(seeds=seeds, quick=quick, workers=workers)))
        found = sorted(glob.glob(os.path.join(directory, "leaderboard-*.json")))
        if not found:
            raise FileNotFoundError("ihope benchmark wrote no leaderboard JSON in %s" % directory)
        tag = "%s%s.json" % (suite, ".quick" if quick else "")
        pick = [f for f in found if f.endswith("leaderboard-" + tag)] or found
        with open(pick[0], encoding="utf-8") as f:
            return json.load(f)

    if out is not None:
        return Benchmark(go(os.fspath(out)), os.fspath(out))
    with tempfile.TemporaryDirectory(prefix="ihope-bench-") as tmp:
        return Benchmark(go(tmp), None)
