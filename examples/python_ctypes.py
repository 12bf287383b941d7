#!/usr/bin/env python3
"""attnmeta from Python with nothing but ctypes (and numpy when present).

Loads the C library, opens the CPU backend and builds the token -> request
map of a small step, then checks it. Exits 0 when every value is right.

    python3 python_ctypes.py [LIBRARY]

LIBRARY is the path of libattnmeta.so (or of an install prefix); without it,
$ATTNMETA_LIBRARY, then the dynamic loader's search path (ldconfig,
LD_LIBRARY_PATH) are used. On the CPU backend "device" memory is host
memory, so numpy arrays (or ctypes arrays) are passed straight in.
"""
import ctypes
import ctypes.util
import os
import sys

try:
    import numpy as np
except ImportError:  # plain ctypes arrays do as well
    np = None

ATTNMETA_OK = 0
ATTNMETA_BACKEND_CPU = 1


def find_library(argv):
    """The library file to load: argv[1], $ATTNMETA_LIBRARY, or the loader's path."""
    path = argv[1] if len(argv) > 1 else os.environ.get("ATTNMETA_LIBRARY", "")
    if path and os.path.isdir(path):  # an install prefix
        for sub in ("lib", "lib64"):
            cand = os.path.join(path, sub, "libattnmeta.so.0")
            if os.path.exists(cand):
                return cand
        sys.exit("python_ctypes: no lib/libattnmeta.so.0 (nor lib64/) under %s\n%s" % (path, USAGE))
    if path:
        return path
    return ctypes.util.find_library("attnmeta") or "libattnmeta.so.0"


def load(path):
    lib = ctypes.CDLL(path)
    c_ctx = ctypes.c_void_p  # attnmeta_context *, opaque
    i32p = ctypes.POINTER(ctypes.c_int32)
    lib.attnmeta_version_string.restype = ctypes.c_char_p
    lib.attnmeta_version_string.argtypes = []
    lib.attnmeta_status_string.restype = ctypes.c_char_p
    lib.attnmeta_status_string.argtypes = [ctypes.c_int]
    lib.attnmeta_open.restype = ctypes.c_int
    lib.attnmeta_open.argtypes = [ctypes.POINTER(c_ctx), ctypes.c_int, ctypes.c_int]
    lib.attnmeta_open_error.restype = ctypes.c_char_p
    lib.attnmeta_open_error.argtypes = []
    lib.attnmeta_close.restype = ctypes.c_int
    lib.attnmeta_close.argtypes = [c_ctx]
    lib.attnmeta_last_error.restype = ctypes.c_char_p
    lib.attnmeta_last_error.argtypes = [c_ctx]
    lib.attnmeta_context_device_name.restype = ctypes.c_char_p
    lib.attnmeta_context_device_name.argtypes = [c_ctx]
    # attnmeta_token_to_req(ctx, query_start_loc, num_reqs, num_mapped,
    #                       num_tokens, out, stream)
    lib.attnmeta_token_to_req.restype = ctypes.c_int
    lib.attnmeta_token_to_req.argtypes = [c_ctx, i32p, ctypes.c_int32, ctypes.c_int32,
                                          ctypes.c_int32, i32p, ctypes.c_void_p]
    return lib


def int32_array(values):
    """A C-contiguous int32 array holding `values`, and its int32_t *."""
    i32p = ctypes.POINTER(ctypes.c_int32)
    if np is not None:
        arr = np.array(values, dtype=np.int32)
        return arr, arr.ctypes.data_as(i32p)
    arr = (ctypes.c_int32 * len(values))(*values)
    return arr, ctypes.cast(arr, i32p)


USAGE = """usage: python3 python_ctypes.py [LIBRARY]
  LIBRARY  libattnmeta.so.0, or an install prefix holding lib/libattnmeta.so.0
           (default: $ATTNMETA_LIBRARY, then the dynamic loader's search path)"""


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(USAGE, file=sys.stderr if len(argv) > 2 else sys.stdout)
        return 2 if len(argv) > 2 else 0
    path = find_library(argv)
    try:
        lib = load(path)
    except OSError as e:
        given = len(argv) > 1 or os.environ.get("ATTNMETA_LIBRARY")
        print("python_ctypes: cannot load %s: %s" % (path, e), file=sys.stderr)
        if not given:
            print("no library given and none on the loader's search path: pass its path "
                  "or install prefix, or set ATTNMETA_LIBRARY", file=sys.stderr)
        print(USAGE, file=sys.stderr)
        return 2
    except AttributeError as e:  # a library without attnmeta's functions
        print("python_ctypes: %s is not libattnmeta: %s" % (path, e), file=sys.stderr)
        return 2
    print("attnmeta %s from %s" % (lib.attnmeta_version_string().decode(), path))

    ctx = ctypes.c_void_p()
    st = lib.attnmeta_open(ctypes.byref(ctx), ATTNMETA_BACKEND_CPU, 0)
    if st != ATTNMETA_OK:
        print("attnmeta_open: %s: %s" % (lib.attnmeta_status_string(st).decode(),
                                         lib.attnmeta_open_error().decode()), file=sys.stderr)
        return 1
    try:
        print("backend cpu, device %s" % lib.attnmeta_context_device_name(ctx).decode())
        # 3 requests of 2, 1 and 3 tokens, padded to 8; num_mapped < 0 maps
        # the real tokens (query_start_loc[R]) and zeroes the padding.
        qsl, qsl_p = int32_array([0, 2, 3, 6])
        out, out_p = int32_array([-7] * 8)  # poisoned: every entry must be written
        st = lib.attnmeta_token_to_req(ctx, qsl_p, 3, -1, 8, out_p, None)
        if st != ATTNMETA_OK:
            print("attnmeta_token_to_req: %s: %s" % (lib.attnmeta_status_string(st).decode(),
                                                     lib.attnmeta_last_error(ctx).decode()),
                  file=sys.stderr)
            return 1
    finally:
        lib.attnmeta_close(ctx)

    got = [int(v) for v in out]
    want = [0, 0, 1, 2, 2, 2, 0, 0]
    print("token_to_req  ", " ".join("%3d" % v for v in got))
    if got != want:
        print("mismatch: expected", want, file=sys.stderr)
        print("python_ctypes: FAILED", file=sys.stderr)
        return 1
    print("python_ctypes: all values as expected (%s arrays)" % ("numpy" if np else "ctypes"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
