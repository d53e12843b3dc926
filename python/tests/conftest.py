"""Shared fixtures: the binary the package runs, and small Taxi logs
written by the CLI itself (so that the package and the CLI read the same
file)."""

import os
import subprocess

import pytest

import ihope

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
POLICIES = os.path.join(ROOT, "sim", "taxi", "policies")


def cli(*args):
    """Runs the binary the package uses; returns its stdout (bytes)."""
    return subprocess.run([ihope.binary()] + [str(a) for a in args], check=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE).stdout


@pytest.fixture(scope="session")
def taxi_csv(tmp_path_factory):
    """50 Taxi episodes of 100 steps (behavior pi18, target pi19) with the
    target's whole distribution, as the CLI writes them."""
    path = str(tmp_path_factory.mktemp("taxi") / "logs.csv")
    cli("sample", "--env", "taxi", "-n", 50, "-T", 100, "--seed", 3, "--target-probs", "--out", path)
    return path
