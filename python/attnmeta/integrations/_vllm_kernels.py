# SPDX-License-Identifier: Apache-2.0
"""Objects that stand in for vLLM's Triton kernel objects: ``kernel[grid]``
returns a launcher taking the kernel's own arguments, which makes one
attnmeta launch into the same buffers when the arguments are ones it
covers, and otherwise launches vLLM's kernel unchanged."""

from typing import Any, Callable, Dict, Optional, Sequence, Tuple

from ._vllm_handle import VllmPatch

# (arguments by name, grid) -> True when attnmeta made the launch
Route = Callable[[Dict[str, Any], Tuple[Any, ...]], bool]


class RoutedKernel:
    """``kernel[grid](*args, **kwargs)`` through `route`, falling back to the
    original kernel; every other attribute is the original's (warm-up,
    caches), so vLLM's code around the launch keeps working."""

    def __init__(self, original: Any, arg_names: Sequence[str], route: Route, patch: VllmPatch,
                 label: str) -> None:
        self._original = original
        self._arg_names = tuple(arg_names)
        self._route = route
        self._patch = patch
        self._label = label

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        grid_t = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)

        def launch(*args: Any, **kwargs: Any) -> Any:
            named = dict(zip(self._arg_names, args))
            named.update(kwargs)
            reason = "arguments outside the routed layout"
            try:
                if len(args) <= len(self._arg_names) and self._route(named, grid_t):
                    self._patch.count(self._label)
                    return None
            except (TypeError, ValueError) as exc:
                # attnmeta refused a buffer (it writes nothing then): vLLM's kernel runs
                reason = "%s: %s" % (type(exc).__name__, exc)
            self._patch.fell_back(self._label, reason)
            return self._original[grid](*args, **kwargs)

        return launch

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)

    def __repr__(self) -> str:
        return "<attnmeta route for %r>" % (self._original,)


def row_stride(x: Any) -> Optional[int]:
    """Elements between rows of a 2-D (or [N, 1, W]) array, torch or NumPy."""
    stride = getattr(x, "stride", None)
    if callable(stride):
        return int(stride(0))
    strides = getattr(x, "strides", None)
    if strides:
        return int(strides[0]) // int(x.itemsize)
    return None
