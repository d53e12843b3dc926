#!/usr/bin/env bash
# Cross-compiles the ihope binary and packs it into one platform wheel per
# target, tagged py3-none-PLATFORM (any Python 3: the package is pure
# Python; one platform: the binary's), in python/dist/ (or $OUT).
#
#   python/build-wheels.sh                      # every platform below
#   python/build-wheels.sh linux/amd64          # only these GOOS/GOARCH
#
# The binary is static (CGO_ENABLED=0), built with -trimpath and stripped
# (-ldflags "-s -w") by setup.py, so one Linux binary serves both the
# manylinux (glibc) and the musllinux (Alpine) wheel of its architecture.
# macOS 12.0 is the oldest release Go 1.26's linker targets (it writes
# 12.0.0 into the Mach-O LC_BUILD_VERSION: cmd/link/internal/ld/macho.go).
# Offline: Go's module cache, Debian's setuptools and wheel, no PyPI
# ($PYTHON, default /usr/bin/python3 when present, must import both).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$here/dist}"
if [ -z "${PYTHON:-}" ]; then
  PYTHON=python3
  [ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3
fi
targets=(
  "linux/amd64 manylinux_2_17_x86_64.manylinux2014_x86_64"
  "linux/amd64 musllinux_1_1_x86_64"
  "linux/arm64 manylinux_2_17_aarch64.manylinux2014_aarch64"
  "linux/arm64 musllinux_1_1_aarch64"
  "darwin/amd64 macosx_12_0_x86_64"
  "darwin/arm64 macosx_12_0_arm64"
  "windows/amd64 win_amd64"
)
mkdir -p "$out"
for t in "${targets[@]}"; do
  read -r platform tag <<<"$t"
  if [ $# -gt 0 ] && [[ " $* " != *" $platform "* ]]; then
    continue
  fi
  echo "== $platform -> $tag" >&2
  IHOPE_GOOS="${platform%/*}" IHOPE_GOARCH="${platform#*/}" IHOPE_WHEEL_PLAT="$tag" \
    "$PYTHON" -m pip wheel --quiet --no-deps --no-index --no-build-isolation -w "$out" "$here"
done
ls -l "$out"/*.whl
