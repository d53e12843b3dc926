"""python -m ihope ARGS (and the ihope command a wheel installs) runs the
bundled binary with ARGS, as if it were on PATH."""

import os
import subprocess
import sys

from ._binary import binary


def main():
    path = binary()
    if os.path.realpath(path) == os.path.realpath(sys.argv[0]):
        # This launcher found itself on PATH: no bundled binary.
        sys.exit("ihope: no bundled binary; set IHOPE_BINARY to the Go binary's path")
    if sys.platform == "win32":
        sys.exit(subprocess.call([path] + sys.argv[1:]))
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    main()
