"""Finding the ihope binary and running it."""

import functools
import json
import os
import shutil
import stat
import subprocess
import sys

from ._errors import IhopeError, error_from
from ._goversion import module_version, pep440

_EXE = "ihope.exe" if sys.platform == "win32" else "ihope"
_BUNDLED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", _EXE)


def binary():
    """The path of the ihope binary this package runs.

    In order: the binary bundled in the package (``ihope/bin/``, present
    when the package was installed from a wheel or with ``pip install`` from
    a clone), the ``IHOPE_BINARY`` environment variable, ``ihope`` on PATH.
    """
    if os.path.isfile(_BUNDLED):
        if not os.access(_BUNDLED, os.X_OK):
            # A wheel unpacked by a tool that drops the mode bits.
            os.chmod(_BUNDLED, os.stat(_BUNDLED).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return _BUNDLED
    env = os.environ.get("IHOPE_BINARY")
    if env:
        if not os.path.isfile(env):
            raise IhopeError("IHOPE_BINARY=%s: no such file" % env)
        return env
    found = shutil.which("ihope")
    if found:
        return found
    raise IhopeError(
        "no ihope binary: this package was not installed from a wheel or a clone "
        "(which bundle one in ihope/bin/); set IHOPE_BINARY to its path or put ihope "
        "on PATH (go install github.com/ihope-ope/ihope/cmd/ihope@latest)"
    )


@functools.lru_cache(maxsize=None)
def _version_line(path):
    out = subprocess.run([path, "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, check=False)
    if out.returncode != 0:
        raise IhopeError("%s --version failed: %s" % (path, out.stderr.decode(errors="replace").strip()))
    return out.stdout.decode().strip()


def binary_version():
    """What ``ihope --version`` prints for the binary in use, e.g.
    "ihope v0.0.0-20261128102131-275d3ce8c48c, commit 275d…, go1.26.8"."""
    return _version_line(binary())


def version():
    """The binary's module version as a PEP 440 version (``ihope.__version__``)."""
    return pep440(module_version(binary_version()))


def run(args, files=None):
    """Runs ``ihope ARGS`` and returns its standard output (bytes).

    A failure raises DataError (a file, row or column named), UsageError
    (exit status 2: a flag) or IhopeError. files maps the paths given to the
    binary to the names the user knows them by (None for a DataFrame), so
    that errors name the user's file rather than a temporary one.
    """
    cmd = [binary()] + [str(a) for a in args]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, check=False)
    if out.returncode != 0:
        raise error_from(out.returncode, out.stderr.decode(errors="replace"), files or {})
    return out.stdout


def run_json(args, files=None):
    """run, with --json among args: the one JSON object it prints."""
    stdout = run(args, files)
    try:
        return json.loads(stdout)
    except ValueError as e:
        raise IhopeError("ihope printed no JSON object (%s): %r" % (e, stdout[:200])) from None
