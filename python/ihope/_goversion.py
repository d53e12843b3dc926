"""The Go module version of the ihope binary as a PEP 440 version.

The binary reports the version the Go toolchain stamped into it
(``ihope --version``; ``debug.ReadBuildInfo().Main.Version``): a tag such
as ``v1.2.3`` or ``v1.2.3-rc.1``, a pseudo-version such as
``v0.0.0-20261128102131-275d3ce8c48c`` for a commit after (or without) a
tag, either with ``+dirty`` when the tree had uncommitted changes, or
``(devel)`` when the build carried no version control information. The
Python package's ``__version__`` is that version mapped so that pip orders
the versions as Go does:

==========================================  ================================
Go module version                           PEP 440 version
==========================================  ================================
``v1.2.3``                                  ``1.2.3``
``v1.2.3-rc.1`` / ``-beta.2`` / ``-alpha.3``  ``1.2.3rc1`` / ``1.2.3b2`` / ``1.2.3a3``
``v1.2.4-0.20261128102131-275d3ce8c48c``    ``1.2.4.dev20261128102131+g275d3ce8c48c``
``v0.0.0-20261128102131-275d3ce8c48c``      ``0.0.0.dev20261128102131+g275d3ce8c48c``
``v1.2.3-rc.1.0.20261128102131-275d…``      ``1.2.3rc1.post0.dev20261128102131+g275d…``
``…+dirty``                                 ``…+dirty`` (``….dirty`` after a hash)
``(devel)``                                 ``0+devel``
==========================================  ================================

A pseudo-version sorts before the release it precedes in both schemes
(``.devN`` is a pre-release in PEP 440), and the commit hash, which orders
nothing, goes into the local label. This module uses only the standard
library: setup.py loads it by path to name the wheel.
"""

import re

_SEMVER = re.compile(
    r"v(?P<release>\d+\.\d+\.\d+)"
    r"(?:-(?P<pre>[0-9A-Za-z.-]+))?"
    r"(?:\+(?P<build>[0-9A-Za-z.-]+))?"
)
# The tail Go appends to make a pseudo-version: a UTC timestamp and the
# commit's 12-digit hash, after "0." (a release or pre-release tag before
# it) or alone (no tag).
_PSEUDO = re.compile(r"(?:(?P<pre>.*?)\.?0\.|)(?P<time>\d{14})-(?P<hash>[0-9a-f]{12})")
_PRE = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "rc": "rc", "c": "rc"}


def _local(*parts):
    """A PEP 440 local label of parts ("" for none): alphanumerics and dots."""
    label = ".".join(p for p in parts if p)
    return re.sub(r"[^0-9A-Za-z]+", ".", label).strip(".")


def _pre(pre):
    """A Go pre-release such as "rc.1" as PEP 440 ("rc1"), and a local label
    for one PEP 440 has no word for ("", "pre.x" -> ("", "pre.x"))."""
    m = re.fullmatch(r"(alpha|beta|rc|a|b|c)\.?(\d*)", pre)
    if m:
        return _PRE[m.group(1)] + (m.group(2) or "0"), ""
    return "", pre


def pep440(go_version):
    """The PEP 440 form of a Go module version (see the module's table)."""
    v = go_version.strip()
    if v in ("", "(devel)"):
        return "0+devel"
    m = _SEMVER.fullmatch(v)
    if not m:
        raise ValueError("not a Go module version: %r" % go_version)
    release, pre, build = m.group("release"), m.group("pre") or "", m.group("build") or ""
    out, local = release, []
    if pre:
        p = _PSEUDO.fullmatch(pre)
        if p:
            if p.group("pre"):
                # After a pre-release tag Go sorts the commit after the
                # tag: a post-release of it in PEP 440 (1.2.3rc1.post0.devN
                # lies between 1.2.3rc1 and 1.2.3rc2).
                word, extra = _pre(p.group("pre"))
                out += (word + ".post0") if word else ""
                local.append(extra)
            out += ".dev" + p.group("time")
            local.insert(0, "g" + p.group("hash"))
        else:
            word, extra = _pre(pre)
            out += word
            local.append(extra)
    local.append(build)
    label = _local(*local)
    return out + ("+" + label if label else "")


def module_version(version_line):
    """The module version in the first line ``ihope --version`` prints,
    e.g. "ihope v1.2.3, commit …, go1.26.8" -> "v1.2.3"."""
    line = version_line.strip().splitlines()[0] if version_line.strip() else ""
    m = re.match(r"ihope (\S+?)(?:,|$)", line)
    if not m:
        raise ValueError("not the output of ihope --version: %r" % version_line)
    return m.group(1)
