# SPDX-License-Identifier: Apache-2.0
"""The handle of a vLLM patch: what was replaced (and how to put it back),
what was left alone and why, and how many launches went through attnmeta."""

import inspect
import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

MARK = "__attnmeta_original__"

lock = threading.Lock()
# The patch in force (patch_vllm sets it, restore clears it); under `lock`.
in_force = None  # type: Optional[VllmPatch]


class VllmPatch:
    """What :func:`patch_vllm` did.

    ``applied``: the routed targets. ``skipped``: target -> why it was left
    to vLLM. ``launches``: target -> attnmeta launches made for it since the
    patch (or :meth:`reset_counts`); ``fallbacks``: target -> calls handed
    back to vLLM's own code because their arguments were outside what the
    routed path takes (vLLM's code moved, or an unusual layout), and
    ``fallback_reasons`` the last reason of each.
    ``bindings``: target -> the ``module.name`` places replaced.
    ``restore()`` (or the end of a ``with`` block) puts vLLM's code back."""

    def __init__(self, vllm_version: str) -> None:
        self.vllm_version = vllm_version
        self.applied = []  # type: List[str]
        self.skipped = {}  # type: Dict[str, str]
        self.launches = {}  # type: Dict[str, int]
        self.fallbacks = {}  # type: Dict[str, int]
        self.fallback_reasons = {}  # type: Dict[str, str]
        self.bindings = {}  # type: Dict[str, List[str]]
        self._undo = []  # type: List[Tuple[Any, str, Any]]
        self._made = {}  # type: Dict[int, Tuple[Any, Any]]

    @property
    def active(self) -> bool:
        return bool(self._undo)

    def count(self, label: str, n: int = 1) -> None:
        self.launches[label] = self.launches.get(label, 0) + n

    def fell_back(self, label: str, reason: str = "arguments outside the routed path") -> None:
        self.fallbacks[label] = self.fallbacks.get(label, 0) + 1
        self.fallback_reasons[label] = reason

    def reset_counts(self) -> None:
        for key in self.launches:
            self.launches[key] = 0
        self.fallbacks.clear()
        self.fallback_reasons.clear()

    def counts(self) -> Dict[str, int]:
        """A copy of ``launches``."""
        return dict(self.launches)

    def replace(self, owner: Any, name: str, new: Any, label: str) -> None:
        original = owner.__dict__[name]
        try:
            setattr(new, MARK, original)
        except (AttributeError, TypeError):
            pass
        self._undo.append((owner, name, original))
        self._made[id(new)] = (new, original)
        setattr(owner, name, new)
        where = getattr(owner, "__module__", None) if isinstance(owner, type) else None
        place = ("%s.%s" % (where, owner.__qualname__) if where else owner.__name__) + "." + name
        self.bindings.setdefault(label, []).append(place)

    def apply(self, label: str) -> None:
        if label not in self.applied:
            self.applied.append(label)
            self.launches.setdefault(label, 0)

    def restore(self) -> None:
        """vLLM's own code back; safe to call twice."""
        global in_force
        with lock:
            while self._undo:
                owner, name, original = self._undo.pop()
                setattr(owner, name, original)
            # modules imported while the patch was in force took the routed
            # objects by name: give them vLLM's back too
            for module in _vllm_modules():
                for attr, value in list(module.__dict__.items()):
                    made = self._made.get(id(value))
                    if made is not None and made[0] is value:
                        setattr(module, attr, made[1])
            self._made.clear()
            if in_force is self:
                in_force = None

    def __enter__(self) -> "VllmPatch":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.restore()

    def __repr__(self) -> str:
        parts = ["vLLM %s" % self.vllm_version,
                 "routed through attnmeta: %s" % (", ".join(self.applied) or "nothing")]
        parts += ["%s not routed: %s" % item for item in sorted(self.skipped.items())]
        return "<attnmeta.integrations.vllm.VllmPatch %s>" % "; ".join(parts)


def params(fn: Any) -> Optional[Tuple[str, ...]]:
    """The parameter names of a function, or None when it has none to read."""
    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None


def _vllm_modules(prefix: str = "vllm") -> List[Any]:
    """The loaded modules of the package `prefix`, by name."""
    found = []
    for name, module in sorted(sys.modules.items()):
        if module is None or not (name == prefix or name.startswith(prefix + ".")):
            continue
        if isinstance(getattr(module, "__dict__", None), dict):
            found.append(module)
    return found


def rebind_everywhere(patch: VllmPatch, original: Any, new: Any, label: str,
                      prefix: str = "vllm") -> int:
    """Replaces every module-level binding of `original` in the loaded
    modules of the vllm package (the defining module and every module that
    imported the name); returns how many."""
    found = 0
    for module in _vllm_modules(prefix):
        for attr, value in list(module.__dict__.items()):
            if value is original:
                patch.replace(module, attr, new, label)
                found += 1
    return found


def wraps(original: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    import functools

    return functools.wraps(original)


def expect(have: Optional[Sequence[str]], want: Sequence[str]) -> Optional[str]:
    """None when `have` starts with `want`, else why not."""
    if have is None:
        return "its parameters cannot be read"
    if tuple(have[: len(want)]) != tuple(want):
        return "takes (%s), not (%s)" % (", ".join(have), ", ".join(want))
    return None
