#!/usr/bin/env bash
# The Python package's tests, as the README's test command runs them: pip
# builds the package from this clone (its setup.py compiles the binary
# into it) in a fresh virtual environment over Debian's Python packages
# (pandas, pytest, setuptools, nbclient, ipykernel, nbconvert; offline),
# then its tests (which require the bundled binary) and the quickstart
# notebook run against the installed package. PY names the Python
# (default /usr/bin/python3); KEEP=DIR keeps the environment in DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-/usr/bin/python3}"
pyenv="${KEEP:-$(mktemp -d)}"
"$PY" -m venv --system-site-packages "$pyenv/venv"
"$pyenv/venv/bin/pip" install -q --no-index --no-build-isolation ./python
"$pyenv/venv/bin/python" -m ipykernel install --sys-prefix --name python3 --display-name "Python 3" >/dev/null
IHOPE_REQUIRE_BUNDLED=1 "$pyenv/venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
PYDEVD_DISABLE_FILE_VALIDATION=1 "$pyenv/venv/bin/python" -m nbconvert --to notebook --execute \
  --ExecutePreprocessor.timeout=900 --output-dir "$pyenv" python/examples/quickstart.ipynb
