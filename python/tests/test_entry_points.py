# SPDX-License-Identifier: Apache-2.0
"""What a new user meets first: backend names, stream= on the drop-in
function, `python -m attnmeta`, the type-hint marker, the console script's
message without a bundled tool, and attnmeta.ops without torch."""

import os
import subprocess
import sys

import numpy as np
import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("name", ["cpu", "CPU", " Cpu "])
def test_context_by_name(attnmeta, name):
    with attnmeta.Context(name) as ctx:
        assert ctx.backend == attnmeta.Backend.CPU and ctx.device == 0
    assert attnmeta.get_context(name) is attnmeta.get_context(attnmeta.Backend.CPU, 0)


def test_context_auto_by_name(attnmeta, monkeypatch):
    monkeypatch.setenv("ATTNMETA_BACKEND", "cpu")
    with attnmeta.Context("auto") as ctx:
        assert ctx.backend == attnmeta.Backend.CPU


def test_context_gpu_name_without_device(attnmeta):
    """A GPU backend by name reaches the library, which says why it cannot open."""
    for name, kind in (("cuda", attnmeta.Backend.CUDA), ("hip", attnmeta.Backend.HIP)):
        if attnmeta.backend_device_count(kind):
            continue
        with pytest.raises(attnmeta.AttnmetaError) as info:
            attnmeta.Context(name)
        assert info.value.status in (attnmeta.Status.NO_DEVICE, attnmeta.Status.BACKEND_UNAVAILABLE)


def test_compute_token_to_req_indices_stream_and_context(attnmeta):
    qsl = np.array([0, 2, 3, 6], np.int32)
    out = np.full(8, -7, np.int32)
    with attnmeta.Context("cpu") as ctx:
        got = attnmeta.compute_token_to_req_indices(qsl, out, -1, 6, stream=None, context=ctx)
        assert got.tolist() == [0, 0, 1, 2, 2, 2] and out[6:].tolist() == [-7, -7]
        got = attnmeta.compute_token_to_req_indices(qsl, out, 4, 8, stream=0, context=ctx)
        assert got is out and out.tolist() == [0, 0, 1, 2, 0, 0, 0, 0]
    with pytest.raises(TypeError, match="stream must be None, an int handle or a torch.cuda.Stream"):
        attnmeta.compute_token_to_req_indices(qsl, out, -1, 8, stream="default")


def _cli():
    lib = os.environ.get("ATTNMETA_LIBRARY", "")
    cli = os.path.join(os.path.dirname(os.path.dirname(lib)), "bin", "attnmeta") if lib else ""
    return cli if cli and os.access(cli, os.X_OK) else None


def test_python_m_attnmeta_is_attnmeta_info():
    cli = _cli()
    if cli is None:
        pytest.skip("no attnmeta CLI beside $ATTNMETA_LIBRARY")
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    mine = subprocess.run([sys.executable, "-m", "attnmeta"], env=env, capture_output=True,
                          text=True, timeout=120)
    theirs = subprocess.run([cli, "info"], env=env, capture_output=True, text=True, timeout=120)
    assert mine.returncode == 0, mine.stderr
    assert theirs.returncode == 0, theirs.stderr
    lines = mine.stdout.splitlines()
    assert lines[:-1] == theirs.stdout.splitlines()
    assert lines[-1].startswith("python package: attnmeta %s in " % attnmeta_version())
    assert mine.stdout.startswith("attnmeta ") and "\nbackend cpu " in mine.stdout


def attnmeta_version():
    import attnmeta

    return attnmeta.__version__


def test_info_names_the_files_and_the_commit(attnmeta):
    """The library's file (the one this process loaded), the commit, and a
    module line for every GPU backend whose module loaded."""
    from attnmeta import __main__ as info
    from attnmeta import _lib

    lines = info.info_lines()
    assert lines[0].startswith("attnmeta %s, commit %s (header "
                               % (attnmeta.version_string(), _lib.build_commit()))
    assert _lib.build_commit() and " " not in _lib.build_commit()
    assert lines[1] == "library: %s" % os.path.realpath(_lib.library_path)
    for kind in (attnmeta.Backend.CUDA, attnmeta.Backend.HIP):
        name = attnmeta.backend_name(kind)
        built = [i for i, line in enumerate(lines) if line.startswith("backend %-5s built for" % name)]
        if built:
            path = lines[built[0] + 1].split("module: ", 1)[1]
            assert os.path.isfile(path) and os.path.basename(path).startswith("libattnmeta_" + name)


def test_module_path_of_each_backend(attnmeta):
    from attnmeta import _devices, _lib

    assert os.path.realpath(attnmeta.backend_module_path("cpu")) == os.path.realpath(_lib.library_path)
    for name in ("cuda", "hip"):
        try:
            path = _devices.backend_module_path(name)
        except attnmeta.AttnmetaError as exc:
            assert exc.status in (attnmeta.Status.BACKEND_UNAVAILABLE, attnmeta.Status.ABI_MISMATCH)
        else:
            assert os.path.isfile(path)


@pytest.mark.parametrize("name", ["cpu", "CPU", " cpu "])
def test_backend_queries_take_names(attnmeta, name):
    assert attnmeta.backend_device_count(name) == attnmeta.backend_device_count(attnmeta.Backend.CPU)
    assert attnmeta.backend_targets(name) == attnmeta.backend_targets(attnmeta.Backend.CPU)


def test_backend_queries_refuse_bad_names_and_bools(attnmeta):
    with pytest.raises(ValueError, match="'tpu' is not a backend name"):
        attnmeta.backend_device_count("tpu")
    with pytest.raises(ValueError, match="'tpu' is not a backend name"):
        attnmeta.backend_targets("tpu")
    with pytest.raises(TypeError, match="got bool"):
        attnmeta.backend_targets(True)
    with pytest.raises(TypeError, match="got bool"):
        attnmeta.Context(True)


def test_forced_backend_error_names_the_variable():
    """ATTNMETA_BACKEND forcing a backend that cannot open: the message
    names the variable (not "backend auto")."""
    code = ("import attnmeta\n"
            "try:\n"
            "    attnmeta.Context('auto')\n"
            "except attnmeta.AttnmetaError as e:\n"
            "    print('ERROR', e)\n"
            "else:\n"
            "    print('opened')\n")
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, ATTNMETA_BACKEND="hip")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    if run.stdout.startswith("opened"):
        pytest.skip("this machine has a HIP device")
    assert "ATTNMETA_BACKEND=hip forces backend hip" in run.stdout, run.stdout


def test_info_names_loaded_gpu_runtime_libraries(tmp_path):
    """A GPU runtime library in the process (a stand-in, preloaded) is
    named by both, links resolved, as the driver's version is in its name."""
    import shutil

    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler to build the stand-in library")
    source = tmp_path / "stand_in.c"
    source.write_text("int attnmeta_test_stand_in(void) { return 1; }\n")
    real = tmp_path / "libcudart.so.99.1"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(real), str(source)], check=True)
    (tmp_path / "libcudart.so.99").symlink_to(real.name)
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, LD_PRELOAD=str(tmp_path / "libcudart.so.99"))
    mine = subprocess.run([sys.executable, "-m", "attnmeta"], env=env, capture_output=True,
                          text=True, timeout=120)
    want = "GPU runtime library: %s" % os.path.realpath(str(real))
    assert mine.returncode == 0, mine.stderr
    assert want in mine.stdout.splitlines(), mine.stdout
    cli = _cli()
    if cli is not None:
        theirs = subprocess.run([cli, "info"], env=env, capture_output=True, text=True,
                                timeout=120)
        assert theirs.stdout.splitlines() == mine.stdout.splitlines()[:-1]


def test_python_m_attnmeta_usage():
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    bad = subprocess.run([sys.executable, "-m", "attnmeta", "--bogus"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "usage: python -m attnmeta" in bad.stderr
    ok = subprocess.run([sys.executable, "-m", "attnmeta", "--help"], env=env,
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and "attnmeta info" in ok.stdout


def test_typed_package(attnmeta):
    assert os.path.isfile(os.path.join(os.path.dirname(attnmeta.__file__), "py.typed"))
    hints = attnmeta.compute_token_to_req_indices.__annotations__
    assert "stream" in hints and "num_tokens" in hints


def test_console_script_without_bundled_tool(attnmeta, capsys):
    from attnmeta import _cli

    if _cli.cli_path():
        pytest.skip("this package bundles the tool (an installed wheel)")
    assert _cli.main() == 2
    assert "no bundled command-line tool" in capsys.readouterr().err


def test_ops_without_torch():
    """Without torch, attnmeta.ops says what it needs; the package works."""
    code = ("import sys, attnmeta\n"
            "assert 'torch' not in sys.modules\n"
            "try:\n"
            "    import attnmeta.ops\n"
            "except ImportError as e:\n"
            "    print('ImportError', e)\n"
            "else:\n"
            "    print('imported')\n")
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    try:
        import torch  # noqa: F401
        has_torch = True
    except ImportError:
        has_torch = False
    if has_torch:
        assert run.stdout.strip() in ("imported",) or "torch >= 2.4" in run.stdout
    else:
        assert run.stdout.startswith("ImportError") and "torch" in run.stdout


def test_package_passes_mypy_strict():
    """mypy --strict (Debian's python3-mypy) over the whole package, with
    python/mypy.ini: strict everywhere, torch and numpy may be missing, and
    the modules still awaiting their authors' hints named there."""
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("mypy is not installed (python3-mypy)")
    config = os.path.join(PYTHON_DIR, "mypy.ini")
    assert os.path.isfile(config)
    with open(config) as f:
        assert "strict = True" in f.read()
    run = subprocess.run([sys.executable, "-m", "mypy", "--config-file", config, "--strict",
                          "--no-incremental", "--cache-dir", os.devnull, "-p", "attnmeta"],
                         cwd=PYTHON_DIR, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
