# SPDX-License-Identifier: Apache-2.0
"""Loading the library, version, enums, errors, flags, contexts, and the
ctypes mirror of attnmeta_step against the C header."""

import ctypes
import os
import pickle
import shutil
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
SOURCE_ROOT = os.path.dirname(PYTHON_DIR)
HEADER = os.path.join(SOURCE_ROOT, "include", "attnmeta", "attnmeta.h")


def _run_python(code, env_changes, cwd=None):
    env = dict(os.environ)
    for key, value in env_changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=cwd or "/",
                          capture_output=True, text=True, timeout=120)


def test_version(attnmeta):
    assert attnmeta.version() == 0 * 10000 + 1 * 100 + 0 or attnmeta.version() >= 100
    text = attnmeta.version_string()
    major, minor, patch = (int(v) for v in text.split("."))
    assert attnmeta.version() == major * 10000 + minor * 100 + patch
    assert attnmeta.__version__.split(".")[:2] == text.split(".")[:2]


def test_library_path(attnmeta):
    assert os.path.isfile(attnmeta.library_path)
    env = os.environ.get("ATTNMETA_LIBRARY")
    if env:
        assert os.path.realpath(env) == os.path.realpath(attnmeta.library_path)


def test_candidates_with_env(attnmeta, monkeypatch):
    monkeypatch.setenv("ATTNMETA_LIBRARY", "/some/where/libattnmeta.so")
    assert attnmeta.library_candidates() == [("$ATTNMETA_LIBRARY", "/some/where/libattnmeta.so")]


def test_candidates_order(attnmeta, monkeypatch):
    monkeypatch.delenv("ATTNMETA_LIBRARY", raising=False)
    found = attnmeta.library_candidates()
    wheres = [w for w, _ in found]
    order = ["package", "build tree", "install prefix", "loader path"]
    ranks = [order.index(w) for w in wheres]
    assert ranks == sorted(ranks), wheres
    pkg = os.path.dirname(attnmeta.__file__)
    assert found[0] == ("package", os.path.join(pkg, "libattnmeta.so"))
    assert ("package", os.path.join(pkg, "lib", "libattnmeta.so")) in found
    assert ("install prefix", os.path.join(sys.prefix, "lib", "libattnmeta.so")) in found
    assert ("install prefix", "/usr/local/lib/libattnmeta.so") in found
    assert found[-2:] == [("loader path", "libattnmeta.so.0"), ("loader path", "libattnmeta.so")]
    builds = [p for w, p in found if w == "build tree"]
    for path in builds:
        assert path.startswith(SOURCE_ROOT + os.sep) and path.endswith("/lib/libattnmeta.so")
    from attnmeta import _lib

    keys = [(_lib._sanitized(p), -os.stat(p).st_mtime) for p in builds]
    assert keys == sorted(keys)


def test_sanitizer_builds_come_last(attnmeta, tmp_path):
    from attnmeta import _lib

    for name, flag in (("plain", "OFF"), ("asan", "ON")):
        (tmp_path / name / "lib").mkdir(parents=True)
        (tmp_path / name / "lib" / "libattnmeta.so").write_bytes(b"")
        (tmp_path / name / "CMakeCache.txt").write_text("ATTNMETA_SANITIZE:BOOL=%s\n" % flag)
    plain = str(tmp_path / "plain" / "lib" / "libattnmeta.so")
    asan = str(tmp_path / "asan" / "lib" / "libattnmeta.so")
    os.utime(asan, (2e9, 2e9))  # the newer one
    assert sorted([asan, plain], key=_lib._build_order) == [plain, asan]
    assert _lib._sanitized(asan) and not _lib._sanitized(plain)


def test_bad_env_path_fails_import():
    result = _run_python("import attnmeta", {"ATTNMETA_LIBRARY": "/nonexistent/libattnmeta.so",
                                             "PYTHONPATH": PYTHON_DIR})
    assert result.returncode != 0
    assert "ImportError" in result.stderr
    assert "/nonexistent/libattnmeta.so" in result.stderr
    assert "ATTNMETA_LIBRARY" in result.stderr


def test_library_next_to_a_copied_package(attnmeta, tmp_path):
    """An installed copy finds attnmeta/lib/libattnmeta.so before anything else."""
    pkg = tmp_path / "attnmeta"
    shutil.copytree(os.path.dirname(attnmeta.__file__), pkg,
                    ignore=shutil.ignore_patterns("__pycache__", "lib", "*.so*"))
    (pkg / "lib").mkdir()
    shutil.copy(attnmeta.library_path, pkg / "lib" / "libattnmeta.so")
    result = _run_python("import attnmeta; print(attnmeta.library_path)",
                         {"ATTNMETA_LIBRARY": None, "PYTHONPATH": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == os.path.realpath(pkg / "lib" / "libattnmeta.so")


def test_copied_package_without_library(attnmeta, tmp_path):
    pkg = tmp_path / "attnmeta"
    shutil.copytree(os.path.dirname(attnmeta.__file__), pkg,
                    ignore=shutil.ignore_patterns("__pycache__", "lib", "*.so*"))
    result = _run_python(
        "import attnmeta; print(attnmeta.library_path)",
        {"ATTNMETA_LIBRARY": None, "PYTHONPATH": str(tmp_path), "LD_LIBRARY_PATH": None})
    # Found on the install prefixes or the loader path, or a clear ImportError.
    if result.returncode != 0:
        assert "cannot load libattnmeta.so" in result.stderr and "Tried:" in result.stderr


def test_source_checkout_finds_a_build_tree(attnmeta):
    import glob

    if not glob.glob(os.path.join(SOURCE_ROOT, "build*", "lib", "libattnmeta.so")):
        pytest.skip("no build tree inside the source checkout")
    result = _run_python("import attnmeta; print(attnmeta.library_path)",
                         {"ATTNMETA_LIBRARY": None, "PYTHONPATH": PYTHON_DIR})
    assert result.returncode == 0, result.stderr
    path = result.stdout.strip()
    assert path.startswith(SOURCE_ROOT + os.sep + "build"), path


def test_status_strings(attnmeta):
    seen = set()
    for status in attnmeta.Status:
        text = attnmeta.status_string(status)
        assert text and text != "unknown status code"
        seen.add(text)
    assert len(seen) == len(attnmeta.Status)
    assert attnmeta.status_string(99) == "unknown status code"
    assert attnmeta.status_string(attnmeta.Status.OK) == "success"


def test_backend_names(attnmeta):
    names = {b: attnmeta.backend_name(b) for b in attnmeta.Backend}
    assert names == {attnmeta.Backend.AUTO: "auto", attnmeta.Backend.CPU: "cpu",
                     attnmeta.Backend.CUDA: "cuda", attnmeta.Backend.HIP: "hip"}
    assert attnmeta.backend_name(42) == "unknown"


def test_backend_queries(attnmeta):
    assert attnmeta.backend_device_count(attnmeta.Backend.CPU) == 1
    assert attnmeta.backend_targets(attnmeta.Backend.CPU)
    for kind in (attnmeta.Backend.CUDA, attnmeta.Backend.HIP):
        assert attnmeta.backend_device_count(kind) >= 0
    with pytest.raises(attnmeta.AttnmetaError) as info:
        attnmeta.backend_device_count(77)
    assert info.value.status == attnmeta.Status.UNKNOWN_BACKEND


def test_describe_error_flags(attnmeta):
    assert attnmeta.describe_error_flags(0) == "no error"
    texts = []
    for flag in attnmeta.ErrorFlag:
        if flag:
            text = attnmeta.describe_error_flags(flag)
            assert text and "unknown flags" not in text
            texts.append(text)
    assert len(set(texts)) == len([f for f in attnmeta.ErrorFlag if f])
    both = attnmeta.ErrorFlag.QSL_DECREASING | attnmeta.ErrorFlag.BLOCK_OUT_OF_TABLE
    assert attnmeta.describe_error_flags(both) == "query_start_loc decreases, position past the block table"
    assert attnmeta.describe_error_flags(1 << 12) == "unknown flags 0x1000"
    assert attnmeta.describe_error_flags(1 | (1 << 31)) == "query_start_loc[0] is not 0, unknown flags 0x80000000"
    assert attnmeta.describe_error_flags(-(2**31)) == "unknown flags 0x80000000"
    assert attnmeta.describe_error_flags(2**32 - 1).endswith("unknown flags 0xfffff000")


def test_error_classes(attnmeta):
    err = attnmeta.AttnmetaError(attnmeta.Status.LAUNCH, "refused", "attnmeta_build_step")
    assert isinstance(err, RuntimeError) and not isinstance(err, ValueError)
    assert err.status is attnmeta.Status.LAUNCH and err.message == "refused"
    assert str(err) == "attnmeta_build_step: kernel launch failed (LAUNCH): refused"
    arg = attnmeta.AttnmetaArgumentError(attnmeta.Status.STRIDE, "x")
    assert isinstance(arg, ValueError) and isinstance(arg, attnmeta.AttnmetaError)
    future = attnmeta.AttnmetaError(41, "")
    assert future.status == 41 and "status 41" in str(future)
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is type(err) and again.status == err.status and str(again) == str(err)


def test_context_basics(attnmeta):
    ctx = attnmeta.Context(attnmeta.Backend.CPU, 0)
    assert ctx.backend == attnmeta.Backend.CPU and ctx.device == 0
    assert ctx.device_name
    assert ctx.last_error() == ""
    assert "cpu:0" in repr(ctx)
    assert ctx.key == (attnmeta.Backend.CPU, 0)
    ctx.synchronize()
    ctx.close()
    ctx.close()
    assert ctx.closed and "closed" in repr(ctx)
    with attnmeta.Context(attnmeta.Backend.CPU) as other:
        assert not other.closed
    assert other.closed


def test_context_cache(attnmeta):
    a = attnmeta.get_context(attnmeta.Backend.CPU, 0)
    assert attnmeta.get_context(attnmeta.Backend.CPU, 0) is a
    attnmeta.clear_context_cache()
    assert a.closed
    b = attnmeta.get_context(attnmeta.Backend.CPU, 0)
    assert b is not a and not b.closed


def test_struct_matches_c_header(attnmeta, tmp_path):
    """Offsets and size of every attnmeta_step field, as a C compiler sees them."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc or not os.path.isfile(HEADER):
        pytest.skip("no C compiler or no header")
    from attnmeta import _lib

    fields = [name for name, _ in _lib.Step._fields_]
    src = tmp_path / "layout.c"
    src.write_text(
        "#include <stdio.h>\n#include <stddef.h>\n#include \"attnmeta/attnmeta.h\"\n"
        "int main(void) {\n  printf(\"size %zu\\n\", sizeof(attnmeta_step));\n"
        + "".join('  printf("%s %%zu\\n", offsetof(attnmeta_step, %s));\n' % (f, f) for f in fields)
        + "  printf(\"config %zu\\n\", sizeof(attnmeta_launch_config));\n  return 0;\n}\n")
    exe = tmp_path / "layout"
    subprocess.run([cc, "-I", os.path.dirname(os.path.dirname(HEADER)), str(src), "-o", str(exe)],
                   check=True)
    out = dict(line.split() for line in subprocess.run([str(exe)], capture_output=True, text=True,
                                                        check=True).stdout.splitlines())
    assert int(out["size"]) == ctypes.sizeof(_lib.Step)
    assert int(out["config"]) == ctypes.sizeof(_lib.LaunchConfig)
    for name in fields:
        assert int(out[name]) == getattr(_lib.Step, name).offset, name


def test_step_init_defaults(attnmeta):
    from attnmeta import _lib

    step = _lib.Step()
    _lib.step_init(ctypes.addressof(step))
    assert step.struct_size == ctypes.sizeof(step)
    assert (step.num_mapped, step.block_size, step.dcp_world_size, step.dcp_rank,
            step.dcp_interleave) == (-1, 0, 1, 0, 1)  # block_size: no default
    assert step.query_start_loc is None and step.slot_mapping is None
