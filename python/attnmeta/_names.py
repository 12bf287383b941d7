# SPDX-License-Identifier: Apache-2.0
"""Argument errors in the engines' names: the drop-ins build on the plans
(StepPlan, TopkPlan), whose checks name the plans' own arguments; through
``call_named`` those names become the ones the caller passed."""

import re
from typing import Any, Callable, Dict, TypeVar

from . import _compile

R = TypeVar("R")


def renamed(text: str, names: Dict[str, str]) -> str:
    """``text`` with every whole-word occurrence of a key of ``names`` (a
    plan's argument) replaced by its value (the drop-in's argument)."""
    for inner in sorted(names, key=len, reverse=True):
        text = re.sub(r"(?<![\w.\[])%s(?![\w\]])" % re.escape(inner), names[inner], text)
    return text


def call_named(names: Dict[str, str], fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """``fn(*args, **kwargs)``; a TypeError or ValueError it raises comes out
    in the caller's names. The library's own exception types pass unchanged,
    and inside torch.compile the call is made plainly (no exception handling
    in the traced code)."""
    if _compile.is_compiling():
        return fn(*args, **kwargs)
    try:
        return fn(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        if type(exc) not in (TypeError, ValueError):
            raise
        text = renamed(str(exc), names)
        if text == str(exc):
            raise
        raise type(exc)(text) from None
