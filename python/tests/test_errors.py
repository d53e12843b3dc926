import numpy as np
import pandas as pd
import pytest

import ihope


def _log():
    # Two episodes of three steps, discrete states and actions.
    return pd.DataFrame({
        "episode": [0, 0, 0, 1, 1, 1], "t": [0, 1, 2, 0, 1, 2],
        "state": [0, 1, 0, 1, 0, 1], "action": [1, 0, 1, 1, 0, 0],
        "reward": [1.0, 0.0, 1.0, 0.5, 0.0, 1.0],
        "behavior_prob": [0.5] * 6, "target_prob": [0.7, 0.3, 0.7, 0.7, 0.3, 0.3],
    }, index=["a", "b", "c", "d", "e", "f"])


@pytest.mark.parametrize("col,pos,value,msg", [
    ("behavior_prob", 3, 0.0, "outside (0, 1]"),
    ("behavior_prob", 0, 1.5, "outside (0, 1]"),
    ("target_prob", 5, -0.1, ""),
    ("state", 2, -1, ""),
])
def test_dataframe_error_names_row(col, pos, value, msg):
    frame = _log()
    frame[col] = frame[col].astype(type(value))
    frame.iloc[pos, frame.columns.get_loc(col)] = value
    with pytest.raises(ihope.DataError) as e:
        ihope.estimate(frame, bootstrap=0, report=False)
    err = e.value
    assert (err.file, err.row, err.column, err.index) == (None, pos + 2, col, frame.index[pos])
    assert msg in err.reason
    assert str(err).startswith("DataFrame: row %d (DataFrame index %r), column" % (pos + 2, frame.index[pos]))


def test_file_error_names_file_row_column(tmp_path):
    path = str(tmp_path / "bad.csv")
    frame = _log()
    frame.loc["e", "behavior_prob"] = 0.0
    frame.to_csv(path, index=False)
    with pytest.raises(ihope.DataError) as e:
        ihope.estimate(path, bootstrap=0, report=False)
    assert (e.value.file, e.value.row, e.value.column) == (path, 6, "behavior_prob")
    assert str(e.value) == '%s: row 6, column "behavior_prob": 0 is outside (0, 1]' % path


def test_header_error():
    frame = _log().rename(columns={"reward": "rewrad"})
    with pytest.raises(ihope.DataError) as e:
        ihope.estimate(frame, bootstrap=0, report=False)
    assert (e.value.row, e.value.column) == (1, "rewrad")
    assert "did you mean \"reward\"" in e.value.reason


def test_columns_mapping_and_its_errors():
    frame = _log().rename(columns={"behavior_prob": "pscore", "episode": "trajectory_id"})
    ok = ihope.estimate(frame, columns={"behavior_prob": "pscore", "episode": "trajectory_id"},
                        bootstrap=0, estimators=["wis-trajectory"], report=False)
    want = ihope.estimate(_log(), bootstrap=0, estimators=["wis-trajectory"], report=False)
    assert ok.raw["estimates"] == want.raw["estimates"]
    frame.iloc[1, frame.columns.get_loc("pscore")] = 2.0
    with pytest.raises(ihope.DataError) as e:
        ihope.estimate(frame, columns={"behavior_prob": "pscore", "episode": "trajectory_id"}, bootstrap=0, report=False)
    assert (e.value.row, e.value.column, e.value.index) == (3, "pscore", "b")


def test_callable_target_shape_errors():
    frame = _log().drop(columns=["target_prob"])
    with pytest.raises(ValueError, match=r"probabilities \(n, K\)"):
        ihope.estimate(frame, target=lambda s: np.full(len(s), 0.5), report=False)
    with pytest.raises(ValueError, match="want 6 rows"):
        ihope.estimate(frame, target=np.full((5, 2), 0.5), report=False)
    with pytest.raises(ValueError, match="already has the column"):
        ihope.estimate(_log(), target=np.full(6, 0.5), report=False)


def test_probabilities_that_do_not_sum_to_one():
    frame = _log().drop(columns=["target_prob"])
    probs = np.tile([0.7, 0.3], (6, 1))
    probs[4] = [0.7, 0.7]
    with pytest.raises(ihope.DataError) as e:
        ihope.estimate(frame, target=probs, bootstrap=0, report=False)
    assert e.value.row == 6 and e.value.index == "e" and e.value.column.startswith("target_prob_")


def test_bool_and_nullable_integer_columns():
    # A bool terminal column and a next_state column that pandas holds as
    # floats (NaN but on the last row) reach ihope as the episode's flags
    # and next state.
    frame = _log()
    frame["terminal"] = [False, False, True, False, False, False]
    frame["next_state"] = [np.nan, np.nan, np.nan, np.nan, np.nan, 0.0]
    r = ihope.estimate(frame, bootstrap=0, estimators=["wis-stepwise"], report=False)
    assert (r.data["terminal_episodes"], r.data["episodes_without_next_state"]) == (1, 0)
