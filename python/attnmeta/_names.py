# SPDX-License-Identifier: Apache-2.0
"""Argument errors in the engines' names: the drop-ins build on the plans
(StepPlan, TopkPlan), whose checks name the plans' own arguments; inside
``caller_names`` those names become the ones the caller passed."""

import contextlib
import re
from typing import Dict, Iterator


@contextlib.contextmanager
def caller_names(names: Dict[str, str]) -> Iterator[None]:
    """A TypeError or ValueError raised inside has every whole-word
    occurrence of a key of ``names`` (a plan's argument) replaced by its
    value (the drop-in's argument). The library's own exception types pass
    unchanged."""
    try:
        yield
    except (TypeError, ValueError) as exc:
        if type(exc) not in (TypeError, ValueError):
            raise
        text = original = str(exc)
        for inner in sorted(names, key=len, reverse=True):
            text = re.sub(r"(?<![\w.\[])%s(?![\w\]])" % re.escape(inner), names[inner], text)
        if text == original:
            raise
        raise type(exc)(text) from None
