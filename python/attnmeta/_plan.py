# SPDX-License-Identifier: Apache-2.0
"""What the prepared plans (:class:`StepPlan`, :class:`TopkPlan`) share:
set-up deferred while torch.compile traces the constructor, replace(), and
the context and buffers they hold."""

from typing import TYPE_CHECKING, Any, Dict

from . import _compile

if TYPE_CHECKING:
    from ._context import Context


class Plan:
    """A launch over persistent, caller-owned buffers, checked once by
    ``_setup(args)`` (the constructor's arguments by name)."""

    __slots__ = ("_args", "_keep", "_ctx")
    _args: Dict[str, Any]
    _keep: Dict[str, Any]
    _ctx: "Context"

    def _start(self, args: Dict[str, Any]) -> None:
        if _compile.is_compiling():
            # Traced by torch.compile: no pointers exist yet; the custom
            # operator (attnmeta.ops) checks and launches when it runs.
            self._args = args
            return
        self._setup(args)

    def _setup(self, args: Dict[str, Any]) -> None:
        raise NotImplementedError

    def replace(self, **changes: Any) -> None:
        """Points the plan at other buffers or settings (any constructor
        argument), checking them as the constructor does. A graph captured
        earlier keeps the old pointers: capture again after this."""
        unknown = set(changes) - set(self._args)
        if unknown:
            raise TypeError("replace() got unknown arguments: %s" % ", ".join(sorted(unknown)))
        args = dict(self._args)
        args.update(changes)
        self._setup(args)

    @property
    def context(self) -> "Context":
        return self._ctx

    @property
    def buffers(self) -> Dict[str, Any]:
        """The plan's buffers by argument name (a new dict)."""
        return dict(self._keep)
