"""Whether a value is exactly the one sent: what tells the arguments a call changed in place."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from grader.run.wire import Seq, Value


def identical(kept: Value, given: Value) -> bool:
    """Exactly the same value as it crossed the wire (shape and every bit; a list is not a
    tuple): what an input is after a call that did not change it."""
    if isinstance(kept, np.ndarray):
        return (
            isinstance(given, np.ndarray)
            and kept.shape == given.shape
            and kept.tobytes() == given.tobytes()
        )
    if isinstance(kept, Seq):
        if not (
            isinstance(given, Seq)
            and kept.kind == given.kind
            and len(kept.items) == len(given.items)
        ):
            return False
        for item, other in zip(kept.items, given.items, strict=True):
            if isinstance(item, np.ndarray):  # the usual item, without a call
                if not (
                    isinstance(other, np.ndarray)
                    and item.shape == other.shape
                    and item.tobytes() == other.tobytes()
                ):
                    return False
            elif not identical(item, other):
                return False
        return True
    # None or an Other: the same only as the same (a forged array in its place is not, and
    # `None == array` would be an array, not an answer).
    return type(kept) is type(given) and kept == given


def tokens(values: Sequence[Value]) -> list[object]:
    """The values as `identical` sees them, in one flat list: each array as its shape and
    its bytes, each sequence as its kind and length (its items follow), anything else as
    itself. Two lists are equal only when the values are identical, one by one."""
    found: list[object] = []
    for value in values:
        _tokens(value, found)
    return found


def _tokens(value: Value, found: list[object]) -> None:
    if isinstance(value, np.ndarray):
        found += (value.shape, value.tobytes())
    elif isinstance(value, Seq):
        found.append((value.kind, len(value.items)))
        for item in value.items:
            if isinstance(item, np.ndarray):  # the usual item, without a call
                found += (item.shape, item.tobytes())
            else:
                _tokens(item, found)
    else:
        found.append(value)
