"""ihope from Python: off-policy estimates of RL policies from logs.

A thin, pure-Python layer over the ihope binary (a Go program, bundled in
the wheel): DataFrames and policies in, DataFrames out.

    >>> import ihope
    >>> logs = ihope.sample("taxi", n=200, T=400, seed=1)
    >>> result = ihope.estimate(logs, bootstrap=200, seed=1)
    >>> result.estimates      # estimator, estimate, estimand, ci_low, ci_high, ...
    >>> result.recommended    # the estimate to report, and why
    >>> result                # in Jupyter: the HTML report

See ihope.estimate for the data and target forms, and the adapters
from_d3rlpy, from_obp, from_scope_rl and from_minari for other libraries'
logs.
"""

from ._api import benchmark, estimate, sample
from ._binary import binary, binary_version
from ._errors import DataError, IhopeError, UsageError
from ._goversion import pep440
from ._result import Benchmark, Estimate
from .adapters import from_d3rlpy, from_minari, from_obp, from_scope_rl

__all__ = [
    "estimate", "sample", "benchmark", "Estimate", "Benchmark",
    "DataError", "IhopeError", "UsageError", "binary", "binary_version", "pep440",
    "from_d3rlpy", "from_obp", "from_scope_rl", "from_minari", "__version__",
]


def __getattr__(name):
    # __version__ is the binary's version (ihope --version, as PEP 440).
    # A wheel records it when it is built, beside the binary it bundles;
    # otherwise (a source checkout running IHOPE_BINARY or PATH's ihope) it
    # is asked of the binary once.
    if name == "__version__":
        try:
            from ._build_info import VERSION
        except ImportError:
            from ._binary import version
            VERSION = version()
        globals()["__version__"] = VERSION
        return VERSION
    raise AttributeError("module 'ihope' has no attribute %r" % name)
