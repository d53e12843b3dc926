"""What ihope estimate and ihope benchmark return, as Python objects."""

import html

import pandas as pd

# The first columns of .estimates, in this order; the JSON's other fields
# follow as it gives them.
_FIRST = ["policy", "estimator", "estimate", "estimand", "ci_low", "ci_high"]
# ihope estimate --json's "recommended": one object per target policy.
RECOMMENDED_COLUMNS = ["policy", "estimator", "estimate", "ci_low", "ci_high", "why"]
# ihope estimate --bounds --baseline ... --json's "verdicts": one per target policy.
VERDICT_COLUMNS = ["policy", "baseline", "verdict", "bound_method", "level", "guaranteed", "why"]


def _frame(rows, first):
    frame = pd.DataFrame(rows)
    lead = [c for c in first if c in frame.columns]
    return frame[lead + [c for c in frame.columns if c not in lead]]


class Estimate:
    """The result of ihope.estimate.

    estimates: DataFrame, one row per estimator (and target policy):
        estimator, estimate, estimand, ci_low, ci_high and every other field
        of ``ihope estimate --json``'s rows (ess, weight_unit, note, ...).
    recommended: DataFrame, the estimate to report per target policy
        (policy, estimator, estimate, ci_low, ci_high, why).
    verdicts: DataFrame, with bounds=True and baseline=...: per target
        policy better, worse or not shown against the baseline (policy,
        baseline, verdict, bound_method, level, guaranteed, why).
    warnings: list of str.  data: dict, the data summary.
    ranking: dict or None (several target policies).  raw: the JSON object.
    report_html: the HTML report (str), or None with report=False.
    command: the command line that produced it (the binary first).
    """

    def __init__(self, raw, report_html=None, command=None):
        self.raw = raw
        self.report_html = report_html
        self.command = command
        self.estimates = _frame(raw.get("estimates") or [], _FIRST)
        self.warnings = list(raw.get("warnings") or [])
        self.data = raw.get("data") or {}
        self.bootstrap = raw.get("bootstrap")
        self.ranking = raw.get("ranking")

    @property
    def recommended(self):
        rows = self.raw.get("recommended")
        if not rows:
            return pd.DataFrame(columns=RECOMMENDED_COLUMNS)
        return _frame(rows, RECOMMENDED_COLUMNS)

    @property
    def verdicts(self):
        rows = self.raw.get("verdicts")
        if not rows:
            return pd.DataFrame(columns=VERDICT_COLUMNS)
        return _frame(rows, VERDICT_COLUMNS)

    def save_report(self, path):
        """Writes the HTML report to path."""
        if self.report_html is None:
            raise ValueError("no report: this estimate ran with report=False")
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.report_html)

    def _repr_html_(self):
        if self.report_html is None:
            return self.estimates._repr_html_()
        # The report is a whole page with its own styles: in an iframe it
        # keeps them to itself and leaves the notebook's alone.
        return ('<iframe srcdoc="%s" style="width:100%%;height:720px;border:1px solid #ddd" '
                'title="ihope report"></iframe>' % html.escape(self.report_html, quote=True))

    def __repr__(self):
        with pd.option_context("display.width", 120, "display.max_columns", 8):
            table = self.estimates[[c for c in _FIRST if c in self.estimates.columns]].to_string(index=False)
        lines = [table]
        lines += ["warning: " + w for w in self.warnings]
        return "\n".join(lines)


class Benchmark:
    """The result of ihope.benchmark.

    leaderboard: DataFrame, the overall leaderboard (one row per estimator
        and estimand: log10_nmse, rank, coverage, spearman, regret_at_1, ...).
    worlds: DataFrame, one row per world and estimator.
    raw: the leaderboard JSON.  out: the directory of its files.
    """

    def __init__(self, raw, out):
        self.raw = raw
        self.out = out
        self.leaderboard = _frame(raw.get("overall") or [], ["estimator", "estimand"])
        rows = []
        for w in raw.get("worlds") or []:
            for e in w.get("estimators") or []:
                row = {"world": w.get("world"), "suite": w.get("suite")}
                row.update(e)
                rows.append(row)
        self.worlds = _frame(rows, ["world", "suite", "estimator", "estimand"])

    def __repr__(self):
        return self.leaderboard.to_string(index=False)
