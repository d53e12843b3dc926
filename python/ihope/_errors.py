"""ihope's error messages as Python exceptions.

The binary refuses bad input with one line on standard error, naming the
file, the row (counted as a spreadsheet shows a CSV file: the header is row
1, the first data row row 2; a Parquet file's first record is row 1) and the
column, as the Go package dataset formats its FormatError:

    ihope: logs.csv: row 7, column "behavior_prob": 0 is outside (0, 1]
    ihope: logs.csv: row 1: 4 problems with the header:   (one per line after)
    ihope: logs.csv: column "t": ...
"""

import json
import re


class IhopeError(Exception):
    """ihope failed (the message is the binary's)."""


class UsageError(IhopeError, ValueError):
    """ihope refused a flag or an option's value (exit status 2)."""


class DataError(IhopeError, ValueError):
    """A log (or a policy or draws file) breaks the log contract.

    Attributes: ``file`` (the path given, None for a DataFrame), ``row``
    (ihope's row: the header is row 1, the first data row row 2; None when
    the problem has no row), ``column`` (the file's column name, or None),
    ``reason`` (what is wrong), and for a DataFrame ``index``: the label of
    the DataFrame's row (its position is ``row - 2``).
    """

    def __init__(self, message, file=None, row=None, column=None, reason=None, index=None):
        super().__init__(message)
        self.file = file
        self.row = row
        self.column = column
        self.reason = reason if reason is not None else message
        self.index = index


# "row 7, column "x": msg", "row 7: msg" or "column "x": msg"; Go's %q quotes
# the column as a Go string literal, which JSON reads for the names ihope
# writes (printable text).
_WHERE = re.compile(r'(?:row (?P<row>\d+)(?:, column (?P<col>"(?:[^"\\]|\\.)*"))?'
                    r'|column (?P<col2>"(?:[^"\\]|\\.)*")): (?P<msg>.*)', re.S)


def _unquote(q):
    try:
        return json.loads(q)
    except ValueError:
        return q[1:-1]


def error_from(status, stderr, files):
    """The exception for a run that exited with status and printed stderr.

    files maps the paths the binary was given to the user's names for them
    (None: a DataFrame, whose rows the error then also gives by index
    label, through files[path + "#index"] when present).
    """
    lines = [l for l in stderr.splitlines() if l.strip()]
    # The message starts at the first "ihope: " line; the usage text kong
    # prints after a flag mistake follows it.
    start = next((i for i, l in enumerate(lines) if l.startswith("ihope: ")), None)
    if start is None:
        return IhopeError(stderr.strip() or "ihope exited with status %d" % status)
    text = "\n".join(lines[start:])[len("ihope: "):]
    if status == 2:
        return UsageError(text.split("\nUsage:")[0])
    shown = None
    matched = None
    for path in sorted(files, key=len, reverse=True):
        if path.endswith("#index"):
            continue
        if text.startswith(path + ": "):
            matched, shown = path, files[path]
            text = text[len(path) + 2:]
            break
    if matched is None:
        # A file the caller did not name (a policy file, say): the part
        # before ": row" / ": column".
        m = re.match(r'(?P<file>[^\n]+?): (?=row \d+|column ")', text)
        if not m:
            return IhopeError(text)
        matched = shown = m.group("file")
        text = text[m.end():]
    m = _WHERE.match(text)
    row = column = None
    reason = text
    if m:
        row = int(m.group("row")) if m.group("row") else None
        q = m.group("col") or m.group("col2")
        column = _unquote(q) if q else None
        reason = m.group("msg")
    index = None
    labels = files.get(matched + "#index")
    where = text
    if shown is None:
        name = "DataFrame"
        if row is not None and labels is not None and 0 <= row - 2 < len(labels):
            index = labels[row - 2]
            where = text.replace("row %d" % row, "row %d (DataFrame index %r)" % (row, index), 1)
        message = "%s: %s" % (name, where)
    else:
        message = "%s: %s" % (shown, where)
    return DataError(message, file=shown, row=row, column=column, reason=reason, index=index)
