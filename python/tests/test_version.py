import os

import pytest

import ihope
from ihope._goversion import module_version, pep440

CASES = [
    ("v1.2.3", "1.2.3"),
    ("v1.2.3-rc.1", "1.2.3rc1"),
    ("v1.2.3-beta.2", "1.2.3b2"),
    ("v1.2.3-alpha", "1.2.3a0"),
    ("v1.2.4-0.20261128102131-275d3ce8c48c", "1.2.4.dev20261128102131+g275d3ce8c48c"),
    ("v0.0.0-20261128102131-275d3ce8c48c", "0.0.0.dev20261128102131+g275d3ce8c48c"),
    ("v1.2.3-rc.1.0.20261128102131-275d3ce8c48c", "1.2.3rc1.post0.dev20261128102131+g275d3ce8c48c"),
    ("v0.0.0-20261128102131-275d3ce8c48c+dirty", "0.0.0.dev20261128102131+g275d3ce8c48c.dirty"),
    ("v1.2.3+dirty", "1.2.3+dirty"),
    ("v2.0.0+incompatible", "2.0.0+incompatible"),
    ("v1.0.0-pre", "1.0.0+pre"),
    ("(devel)", "0+devel"),
]


@pytest.mark.parametrize("go,want", CASES)
def test_pep440(go, want):
    assert pep440(go) == want


def test_pep440_orders_as_go():
    # Go orders a pseudo-version after the tag it follows and before the
    # next release; pip must order their PEP 440 forms the same way.
    version = pytest.importorskip("packaging.version").Version
    go_order = ["v1.2.3-rc.1", "v1.2.3-rc.1.0.20261128102131-275d3ce8c48c", "v1.2.3",
                "v1.2.4-0.20261128102131-275d3ce8c48c", "v1.2.4"]
    got = [version(pep440(v)) for v in go_order]
    assert got == sorted(got)
    for go, _ in CASES:
        version(pep440(go))  # every form is valid PEP 440


@pytest.mark.parametrize("line,want", [
    ("ihope v1.2.3, commit abc (2026-11-28T10:21:31Z), go1.26.8", "v1.2.3"),
    ("ihope (devel), go1.26.8", "(devel)"),
])
def test_module_version(line, want):
    assert module_version(line) == want


def test_version_is_the_binary_s():
    assert ihope.__version__ == pep440(module_version(ihope.binary_version()))


def test_build_info_matches_bundled_binary():
    # CI sets IHOPE_REQUIRE_BUNDLED=1: the installed package must be the one
    # under test, with its own binary (not a source checkout's IHOPE_BINARY).
    if os.environ.get("IHOPE_REQUIRE_BUNDLED") != "1":
        pytest.importorskip("ihope._build_info", reason="not installed from a wheel")
    from ihope import _build_info as info
    assert ihope.binary() == os.path.join(os.path.dirname(ihope.__file__), "bin", os.path.basename(ihope.binary()))
    assert info.GO_VERSION == module_version(ihope.binary_version())
    assert info.VERSION == ihope.__version__
