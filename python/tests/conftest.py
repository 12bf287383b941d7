# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures. The binding is imported from PYTHONPATH (run_tests.sh
points it at python/ and ATTNMETA_LIBRARY at the build's library)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# (block, grid, stage, vector, lanes) of the CPU backend's launch shapes the
# cases also run with: the kernel body must be right for any grid.
CPU_CONFIGS = {
    "auto": None,
    "grid1": dict(grid=1),
    "grid3_staged": dict(grid=3, stage=1),
    "grid5_scalar_rows": dict(grid=5, vector=0),
    "grid2_vector_staged": dict(grid=2, stage=1, vector=1),
}


@pytest.fixture(scope="session")
def attnmeta():
    import attnmeta as module

    return module


def open_contexts(attnmeta, kind, index, configs):
    """Yields a context per launch configuration of `configs` (None: the
    cached one) on device `index` of `kind`, and closes them after."""
    made = {}
    for name, config in configs.items():
        if config is None:
            made[name] = None
        else:
            ctx = attnmeta.Context(kind, index)
            ctx.set_launch_config(**config)
            made[name] = ctx
    yield made
    for ctx in made.values():
        if ctx is not None:
            ctx.close()


@pytest.fixture
def vllm_mod():
    """The vLLM integration module; a patch a test left in force is undone."""
    from attnmeta.integrations import vllm as integration

    yield integration
    patch = integration.active_patch()
    if patch is not None:
        patch.restore()


@pytest.fixture(scope="session")
def cpu_contexts(attnmeta):
    """A context per launch configuration (None: the cached one)."""
    yield from open_contexts(attnmeta, attnmeta.Backend.CPU, 0, CPU_CONFIGS)
