"""Logs and target policies as the files ihope reads.

A log reaches the binary as a CSV file in the log contract (docs/logs.md: "Log
contract"): a DataFrame is written to a temporary file, a path is passed as
it is unless a target must be added to it. A target given in Python (an
array of probabilities, a callable, several of them by name) becomes the
contract's target columns of that file, or for real-valued actions the
--target-draws file.
"""

import os

import numpy as np
import pandas as pd

# The contract's columns that hold integers (ids, steps, flags). pandas
# turns an int column with a missing value (next_state, which only an
# episode's last row gives) into floats and reads 0/1 flags as ints or
# bools; these columns are kept (and written) as integers, 2 rather than
# 2.0, as the user's own file would hold them.
_INTEGER_ROLES = ("t", "state", "action", "next_state", "terminal")


class Roles:
    """The file's name of each contract column, by the --column mapping
    (role -> name; a role ending in "_" maps a prefix: state_ -> obs_)."""

    def __init__(self, columns):
        self.columns = dict(columns or {})

    def name(self, role):
        if role in self.columns:
            return self.columns[role]
        base, _, k = role.rpartition("_")
        if k.isdigit() and base + "_" in self.columns:
            return self.columns[base + "_"] + k
        return role

    def vector(self, frame, role):
        """The file's names of role_0, role_1, ... present in frame."""
        names = []
        while self.name("%s_%d" % (role, len(names))) in frame.columns:
            names.append(self.name("%s_%d" % (role, len(names))))
        return names

    def flags(self):
        return [("--column", "%s=%s" % (r, n)) for r, n in self.columns.items()]


def read(path, roles=None):
    """A log file as a DataFrame whose floats are the file's to the bit."""
    p = str(path)
    low = p.lower()
    if low.endswith(".parquet"):
        return pd.read_parquet(p)
    sep = "\t" if low.endswith((".tsv", ".tsv.gz")) else ","
    frame = pd.read_csv(p, sep=sep, float_precision="round_trip", keep_default_na=False,
                        na_values=[""])
    return integer_columns(frame, roles or Roles(None))


def integer_columns(frame, roles):
    """frame with the integer roles' columns of whole floats as Int64 and
    bools as 0/1."""
    out = None
    for role in _INTEGER_ROLES:
        name = roles.name(role)
        if name not in frame.columns:
            continue
        col = frame[name]
        if col.dtype == bool:
            new = col.astype("int8")
        elif pd.api.types.is_float_dtype(col):
            v = col.to_numpy()
            finite = v[~np.isnan(v)]
            if not np.all(finite == np.round(finite)):
                continue
            new = col.astype("Int64")
        else:
            continue
        if out is None:
            out = frame.copy(deep=False)
        out[name] = new
    return frame if out is None else out


def write(frame, roles, path):
    """frame as a CSV file in the contract: floats as their shortest exact
    decimal (pandas writes repr), float32 columns widened to float64 first
    so that a state is written as the draws file writes it."""
    frame = integer_columns(frame, roles)
    wide = [c for c in frame.columns if frame[c].dtype == np.float32]
    if wide:
        frame = frame.astype({c: np.float64 for c in wide})
    frame.to_csv(path, index=False)


def states(frame, roles, rows=None, next_=False):
    """The logged states (or next states) as an (n, d) array: (n, 1)
    integers for a discrete state column, (n, d) floats for state_0..."""
    role = "next_state" if next_ else "state"
    sub = frame if rows is None else frame.iloc[rows]
    if roles.name(role) in frame.columns:
        return sub[roles.name(role)].to_numpy(dtype=np.int64).reshape(-1, 1)
    names = roles.vector(frame, role)
    if not names:
        raise ValueError("the log has no %s column (nor %s_0, %s_1, ...)" % (role, role, role))
    return sub[names].to_numpy(dtype=np.float64)


def real_actions(frame, roles):
    """Whether the log's actions are real vectors (action_0, ...)."""
    return roles.name("action") not in frame.columns and bool(roles.vector(frame, "action"))


def last_rows_with_next_state(frame, roles):
    """Positions of each episode's last row (largest t) that gives a next
    state and did not end in a terminal state: where the target's
    distribution after the episode is wanted."""
    ep, t = roles.name("episode"), roles.name("t")
    for c in (ep, t):
        if c not in frame.columns:
            raise ValueError("the log has no %r column" % c)
    # Rows sorted by episode, then t: an episode's last row is the one
    # before the next episode's first.
    codes, _ = pd.factorize(frame[ep])
    order = np.lexsort((frame[t].to_numpy(), codes))
    sorted_codes = codes[order]
    is_last = np.r_[sorted_codes[1:] != sorted_codes[:-1], True]
    last = np.sort(order[is_last])
    if roles.name("next_state") in frame.columns:
        given = frame[roles.name("next_state")].notna().to_numpy()
    else:
        names = roles.vector(frame, "next_state")
        if not names:
            return last[:0]
        given = frame[names].notna().all(axis=1).to_numpy()
    keep = given[last]
    term = roles.name("terminal")
    if term in frame.columns:
        tv = frame[term].to_numpy()
        ended = np.array([str(x).lower() in ("1", "true", "1.0") for x in tv[last]])
        keep &= ~ended
    return last[keep]


def _probabilities(value, n, what):
    p = np.asarray(value.to_numpy() if isinstance(value, (pd.DataFrame, pd.Series)) else value, dtype=np.float64)
    if p.ndim not in (1, 2) or p.shape[0] != n:
        raise ValueError("%s: want %d rows (one per logged step) of probabilities, got shape %s" % (what, n, p.shape))
    return p


def target_columns(frame, roles, target):
    """The columns a target adds to the log, as {name: values}.

    target: an array or DataFrame, (n,) for the logged action's probability
    (target_prob) or (n, K) for the whole distribution (target_prob_k); a
    callable states (n, d) -> (n, K), evaluated at the logged states and at
    the next states the episodes' last rows give (next_target_prob_k); or a
    mapping name -> either, for several policies (columns ...@name).
    """
    n = len(frame)
    if isinstance(target, dict):
        cols = {}
        for name, t in target.items():
            name = str(name)
            if not name or any(c in name for c in "@=,"):
                raise ValueError("target policy name %r: give a name without '@', '=' or ','" % name)
            for k, v in _one_target(frame, roles, t, "target %r" % name).items():
                cols[k + "@" + name] = v
        return cols
    return _one_target(frame, roles, target, "target")


def _one_target(frame, roles, target, what):
    n = len(frame)
    if callable(target) and not isinstance(target, (pd.DataFrame, pd.Series, np.ndarray)):
        p = _probabilities(target(states(frame, roles)), n, what + " at the logged states")
        if p.ndim != 2:
            raise ValueError("%s: a callable target returns probabilities (n, K), one column per action; got shape %s"
                             % (what, p.shape))
        cols = {"target_prob_%d" % k: p[:, k] for k in range(p.shape[1])}
        last = last_rows_with_next_state(frame, roles)
        if len(last):
            q = np.asarray(target(states(frame, roles, rows=last, next_=True)), dtype=np.float64)
            if q.shape != (len(last), p.shape[1]):
                raise ValueError("%s at the next states: want shape %s, got %s" % (what, (len(last), p.shape[1]), q.shape))
            for k in range(p.shape[1]):
                col = np.full(n, np.nan)
                col[last] = q[:, k]
                cols["next_target_prob_%d" % k] = col
        return cols
    p = _probabilities(target, n, what)
    if p.ndim == 1:
        return {"target_prob": p}
    return {"target_prob_%d" % k: p[:, k] for k in range(p.shape[1])}


def with_columns(frame, cols):
    clash = [c for c in cols if c in frame.columns]
    if clash:
        raise ValueError("the log already has the column(s) %s that target= would write; "
                         "give the target either as columns or as target=, not both" % ", ".join(clash))
    extra = pd.DataFrame(cols, index=frame.index)
    return pd.concat([frame, extra], axis=1)


def draws(frame, roles, draw):
    """The --target-draws file's rows for a callable that draws the
    target's real-valued actions: one draw at every logged state and at
    every next state an episode's last row gives (docs/logs.md: "Real-valued
    actions"). The states are the log's own values, so that the file
    writes them as the log does and ihope matches them bit for bit."""
    s = states(frame, roles)
    last = last_rows_with_next_state(frame, roles)
    if len(last):
        s = np.vstack([s, states(frame, roles, rows=last, next_=True)])
    a = np.asarray(draw(s), dtype=np.float64)
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    if a.ndim != 2 or a.shape[0] != len(s):
        raise ValueError("target draws: want one action per state, shape (%d, A), got %s" % (len(s), a.shape))
    if roles.name("state") in frame.columns:
        out = {"state": s[:, 0].astype(np.int64)}
    else:
        out = {"state_%d" % j: s[:, j] for j in range(s.shape[1])}
    out.update({"action_%d" % j: a[:, j] for j in range(a.shape[1])})
    return pd.DataFrame(out)


def is_path(data):
    return isinstance(data, (str, os.PathLike))
