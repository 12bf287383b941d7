# SPDX-License-Identifier: Apache-2.0
"""The switch to the torch custom operators inside ``torch.compile``.

Inside a compiled region the operations go through the operators of
:mod:`attnmeta.ops`; elsewhere :func:`is_compiling` is False and they stay
the direct ctypes call. This module imports nothing of the package: ops.py
installs itself here once its operators are registered, and _register.py
sets :data:`on_torch_found`, which the buffer code calls when it first
meets torch (torch imported after attnmeta).
"""

from typing import Any, Callable, Optional


def _never() -> bool:
    return False


is_compiling: Callable[[], bool] = _never
ops_module: Any = None  # attnmeta.ops, once its operators are registered
on_torch_found: Optional[Callable[[], None]] = None


def install(torch: Any, module: Any) -> None:
    """Called by attnmeta.ops once its operators are registered."""
    global is_compiling, ops_module
    fn = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    if fn is None:
        fn = getattr(getattr(torch, "_dynamo", None), "is_compiling", None)
    if fn is not None:
        ops_module = module
        is_compiling = fn


def torch_found() -> None:
    """torch is in use: register the operators if that is wired up."""
    if ops_module is None and on_torch_found is not None:
        on_torch_found()
