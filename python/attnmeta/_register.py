# SPDX-License-Identifier: Apache-2.0
"""Registers the torch custom operators (imports :mod:`attnmeta.ops`) when
torch is in use, at package import or when a buffer first turns out to be
a torch tensor."""

import warnings

from . import _compile


def register_torch_ops() -> None:
    """Imports attnmeta.ops when torch has torch.library.custom_op; quietly
    nothing otherwise."""
    if _compile.ops_module is not None:
        return
    try:
        from . import ops  # noqa: F401
    except ImportError:  # no torch, or torch older than 2.4: the direct calls only
        pass
    except RuntimeError as exc:  # e.g. another copy of the package registered them first
        warnings.warn("attnmeta: torch custom operators not registered: %s" % exc, RuntimeWarning)


_compile.on_torch_found = register_torch_ops
