"""Builds the ihope package with the ihope binary inside it.

The hook compiles the Go command ./cmd/ihope of the enclosing repository
(the clone this directory sits in) with the Go toolchain, offline, and puts
it in the package as ihope/bin/ihope (ihope.exe on Windows):

    pip install --no-build-isolation ./python     # from a clone, with Go

The package's version is the binary's: the Go module version the
toolchain stamps into it (a tag, or a pseudo-version of the commit), read
back with `go version -m` and mapped to PEP 440 by ihope/_goversion.py.
The environment variables IHOPE_GOOS and IHOPE_GOARCH cross-compile, and
IHOPE_WHEEL_PLAT names the wheel's platform tag (build-wheels.sh sets all
three for each platform). CGO_ENABLED=0: the binary is static and runs on
any Linux libc, so one binary serves the manylinux and musllinux wheels.
"""

import importlib.util
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _load_goversion():
    # Loaded by path: importing the package would import pandas.
    spec = importlib.util.spec_from_file_location("_goversion", os.path.join(HERE, "ihope", "_goversion.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _go_env(key):
    return subprocess.run(["go", "env", key], check=True, stdout=subprocess.PIPE, cwd=ROOT).stdout.decode().strip()


def _target():
    goos = os.environ.get("IHOPE_GOOS") or _go_env("GOOS")
    goarch = os.environ.get("IHOPE_GOARCH") or _go_env("GOARCH")
    return goos, goarch


def build_binary():
    """Compiles ihope for the target platform; returns (path, module version)."""
    if not os.path.isfile(os.path.join(ROOT, "go.mod")) or not os.path.isdir(os.path.join(ROOT, "cmd", "ihope")):
        raise SystemExit("ihope: building the package needs the repository around python/ "
                         "(go.mod and cmd/ihope in %s); install from a clone or a wheel" % ROOT)
    if shutil.which("go") is None:
        raise SystemExit("ihope: building the package needs the Go toolchain (go) on PATH")
    goos, goarch = _target()
    out = os.path.join(HERE, "build", "go", "%s_%s" % (goos, goarch), "ihope.exe" if goos == "windows" else "ihope")
    env = dict(os.environ, CGO_ENABLED="0", GOOS=goos, GOARCH=goarch)
    # -buildvcs=auto overrides a GOFLAGS=-buildvcs=false: in a git clone the
    # binary then carries the commit's pseudo-version, which names the wheel.
    cmd = ["go", "build", "-buildvcs=auto", "-trimpath", "-ldflags", "-s -w", "-o", out, "./cmd/ihope"]
    subprocess.run(cmd, check=True, cwd=ROOT, env=env)
    info = subprocess.run(["go", "version", "-m", out], check=True, stdout=subprocess.PIPE).stdout.decode()
    version = "(devel)"
    for line in info.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0] == "mod":
            version = f[2]
            break
    return out, version


BINARY, GO_VERSION = build_binary()
VERSION = _load_goversion().pep440(GO_VERSION)


class BuildPy(build_py):
    """build_py that puts the compiled binary and its version in the package."""

    def run(self):
        super().run()
        pkg = os.path.join(self.build_lib, "ihope")
        bindir = os.path.join(pkg, "bin")
        shutil.rmtree(bindir, ignore_errors=True)  # a previous platform's binary
        os.makedirs(bindir)
        dest = os.path.join(bindir, os.path.basename(BINARY))
        shutil.copy2(BINARY, dest)
        os.chmod(dest, 0o755)
        goos, goarch = _target()
        with open(os.path.join(pkg, "_build_info.py"), "w") as f:
            f.write('"""Written by setup.py: the bundled binary\'s version and platform."""\n')
            f.write("GO_VERSION = %r\nVERSION = %r\nGOOS = %r\nGOARCH = %r\n" % (GO_VERSION, VERSION, goos, goarch))


class BdistWheel(bdist_wheel):
    """Wheels tagged py3-none-PLATFORM: any Python 3, no ABI (the package is
    pure Python), one platform (the binary's)."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        plat = os.environ.get("IHOPE_WHEEL_PLAT") or super().get_tag()[2]
        return "py3", "none", plat


with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
    LONG = f.read()

setup(
    name="ihope",
    version=VERSION,
    description="Off-policy evaluation of RL policies from logs: a Python layer over the ihope binary",
    long_description=LONG,
    long_description_content_type="text/markdown",
    url="https://github.com/ihope-ope/ihope",
    packages=["ihope"],
    python_requires=">=3.8",
    install_requires=["numpy", "pandas"],
    entry_points={"console_scripts": ["ihope=ihope.__main__:main"]},
    cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel},
    zip_safe=False,
)
