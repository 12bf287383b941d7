"""`python -m attnmeta`: what `attnmeta info` prints (tools/cli_info.c),
line for line, through this package's library: its version, each backend's
module with the architectures it was built for, its devices (with the code
the driver runs on each, SASS or PTX JIT), and the default backend."""

import ctypes
import sys

from . import _lib
from ._lib import Backend

_HEADER = tuple(int(x) for x in _lib.__version__.split("."))


def _open(kind, device):
    """(handle, None) or (None, the open error text)."""
    handle = ctypes.c_void_p()
    status = _lib.open_context(ctypes.byref(handle), int(kind), device)
    if status:
        return None, (_lib.open_error() or b"").decode(errors="replace")
    return handle.value, None


def _name(handle):
    return (_lib.context_device_name(handle) or b"").decode(errors="replace")


def info_lines():
    """The lines of `attnmeta info`."""
    lines = ["attnmeta %s (header %d.%d.%d)" % ((_lib.version_string(),) + _HEADER)]
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
        count = ctypes.c_int(0)
        _lib.backend_device_count(int(kind), ctypes.byref(count))
        count = count.value
        lines.append("backend %-5s built for: %s; devices: %d"
                     % (name, (targets.value or b"").decode(), count))
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
    handle, error = _open(Backend.AUTO, 0)
    if handle is None:
        lines.append("default backend: none: %s" % error)
    else:
        lines.append("default backend: %s (%s)"
                     % (_lib.backend_name(_lib.context_backend(handle)), _name(handle)))
        _lib.close(handle)
    return lines


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print("usage: python -m attnmeta\n  prints what `attnmeta info` prints: the library, "
              "its backends, their devices and the default backend")
        return 0
    if argv:
        sys.stderr.write("usage: python -m attnmeta (no arguments; -h for help)\n")
        return 2
    print("\n".join(info_lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
