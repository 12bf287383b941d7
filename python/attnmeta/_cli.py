"""The `attnmeta` console script of the wheel: runs the bundled command-line
tool (attnmeta/bin/attnmeta) with the same arguments."""

import os
import sys

__all__ = ["main", "cli_path"]


def cli_path() -> str:
    """The bundled tool's path ("" when this package has none, as in a
    source checkout: use <build>/bin/attnmeta there)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "attnmeta")
    return path if os.access(path, os.X_OK) else ""


def main() -> int:
    path = cli_path()
    if not path:
        sys.stderr.write(
            "attnmeta: this installation of the Python package has no bundled command-line "
            "tool (install the wheel built by `pip install .`, or run <build>/bin/attnmeta)\n"
        )
        return 2
    sys.stdout.flush()
    os.execv(path, [path] + sys.argv[1:])
    return 2  # not reached
