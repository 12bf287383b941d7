# SPDX-License-Identifier: Apache-2.0
"""`python -m attnmeta`: what `attnmeta info` prints (tools/cli_info.c),
line for line, through this package's library: its version and commit,
the library's file, each backend's module file with the architectures it
was built for, its devices and the versions of the GPU driver and runtime
it runs on, and the default backend; then the package's own version and
folder."""

import ctypes
import os
import sys
from typing import List, Optional, Tuple

from . import _lib
from ._devices import backend_module_path
from ._diagnostics import runtime_versions_line
from ._lib import Backend
from ._version import __version__

_HEADER = tuple(int(x) for x in __version__.split("."))


def _module_path(kind: Backend) -> str:
    path = backend_module_path(kind)
    return os.path.realpath(path) if path else "(the loader does not say)"


def _open(kind: Backend, device: int) -> Tuple[Optional[int], Optional[str]]:
    """(handle, None) or (None, the open error text)."""
    handle = ctypes.c_void_p()
    status = _lib.open_context(ctypes.byref(handle), int(kind), device)
    if status:
        return None, (_lib.open_error() or b"").decode(errors="replace")
    return handle.value, None


def _name(handle: int) -> str:
    return (_lib.context_device_name(handle) or b"").decode(errors="replace")


def info_lines() -> List[str]:
    """The lines of `attnmeta info`."""
    lines = ["attnmeta %s, commit %s (header %d.%d.%d)"
             % (_lib.version_string(), _lib.build_commit(), _HEADER[0], _HEADER[1], _HEADER[2])]
    lines.append("library: %s" % _module_path(Backend.CPU))
    for kind in (Backend.CPU, Backend.CUDA, Backend.HIP):
        name = _lib.backend_name(kind)
        targets = ctypes.c_char_p()
        status = _lib.backend_targets(int(kind), ctypes.byref(targets))
        if status:
            handle, error = _open(kind, 0)
            if handle is not None:
                _lib.close(handle)
                error = _lib.status_string(status)
            lines.append("backend %-5s unavailable: %s" % (name, error))
            continue
        found = ctypes.c_int(0)
        _lib.backend_device_count(int(kind), ctypes.byref(found))
        count = found.value
        lines.append("backend %-5s built for: %s; devices: %d"
                     % (name, (targets.value or b"").decode(), count))
        if kind != Backend.CPU:
            lines.append("              module: %s" % _module_path(kind))
        if count == 0:
            handle, error = _open(kind, 0)
            if handle is None:
                lines.append("              %s" % error)
            else:
                _lib.close(handle)
        for device in range(count):
            handle, error = _open(kind, device)
            if handle is None:
                lines.append("  device %d: cannot open: %s" % (device, error))
            else:
                lines.append("  device %d: %s" % (device, _name(handle)))
                _lib.close(handle)
        lines.append(runtime_versions_line(kind))
    handle, error = _open(Backend.AUTO, 0)
    if handle is None:
        lines.append("default backend: none: %s" % error)
    else:
        lines.append("default backend: %s (%s)"
                     % (_lib.backend_name(_lib.context_backend(handle)), _name(handle)))
        _lib.close(handle)
    lines.extend("GPU runtime library: %s" % path for path in runtime_libraries())
    return lines


_RUNTIME_LIBS = ("libcuda.so", "libcudart.so", "libamdhip64.so", "libhsa-runtime64.so")


def runtime_libraries() -> List[str]:
    """The GPU driver and runtime libraries this process has loaded, links
    resolved, sorted (a driver's file name carries its version)."""
    found = set()
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)  # address, perms, offset, dev, inode[, path]
                path = fields[5].strip() if len(fields) == 6 else ""
                if path.startswith("/") and os.path.basename(path).startswith(_RUNTIME_LIBS):
                    found.add(os.path.realpath(path))
    except OSError:
        pass
    return sorted(found)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print("usage: python -m attnmeta\n  prints what `attnmeta info` prints: the library "
              "(version, commit, file), its backends (module files, targets, devices, driver "
              "and runtime versions) and the default backend; then this package's version and "
              "folder")
        return 0
    if argv:
        sys.stderr.write("usage: python -m attnmeta (no arguments; -h for help)\n")
        return 2
    print("\n".join(info_lines()))
    print("python package: attnmeta %s in %s" % (__version__, os.path.dirname(os.path.abspath(__file__))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
