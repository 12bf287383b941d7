# SPDX-License-Identifier: Apache-2.0
"""`python -m attnmeta` gives each backend's GPU driver and runtime versions
(attnmeta_backend_runtime_versions), written as `attnmeta info` writes them."""

import os
import re
import subprocess
import sys

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_VERSIONS = re.compile(r"^ {14}(driver: \S+ \(\d+\), runtime: \S+ \(\d+\)"
                       r"|driver/runtime: (none|unknown) \(.+\))$")


def _python_m_attnmeta():
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    run = subprocess.run([sys.executable, "-m", "attnmeta"], env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


def test_python_m_attnmeta_prints_the_versions_line():
    """Each backend that loaded ends its lines with its versions; the CPU
    backend's says it has no GPU runtime."""
    lines = _python_m_attnmeta()
    starts = [i for i, line in enumerate(lines) if re.match(r"^backend \S+ +built for: ", line)]
    assert starts and lines[starts[0]].startswith("backend cpu ")
    for start in starts:
        end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith(" "))
        assert _VERSIONS.match(lines[end - 1]), lines[start:end]
        assert sum(bool(_VERSIONS.match(line)) for line in lines[start:end]) == 1
    cpu_end = next(i for i in range(starts[0] + 1, len(lines)) if not lines[i].startswith(" "))
    assert lines[cpu_end - 1] == (
        "              driver/runtime: none (the CPU backend uses no GPU runtime)")


def test_versions_of_each_backend(attnmeta):
    from attnmeta import _diagnostics

    assert _diagnostics.backend_runtime_versions(attnmeta.Backend.CPU) == (
        attnmeta.Status.NOT_SUPPORTED, 0, 0)
    assert _diagnostics.backend_runtime_versions(77)[0] == attnmeta.Status.UNKNOWN_BACKEND
    for kind in (attnmeta.Backend.CUDA, attnmeta.Backend.HIP):
        status, driver, runtime = _diagnostics.backend_runtime_versions(kind)
        if status == attnmeta.Status.OK:
            assert runtime > 0 and driver >= 0
        else:
            assert (driver, runtime) == (0, 0)


@pytest.mark.parametrize("kind, number, text", [
    ("CUDA", 13000, "13.0"),
    ("CUDA", 12080, "12.8"),
    ("CUDA", 0, "none"),
    ("HIP", 60241134, "6.2.41134"),
    ("HIP", 50600000, "5.6.0"),
    ("HIP", 0, "none"),
])
def test_version_text(attnmeta, kind, number, text):
    from attnmeta import _diagnostics

    assert _diagnostics._version_text(attnmeta.Backend[kind], number) == text
