"""The structural explanations the diagnosis tries first: an answer transposed, one item of a
tuple, a pair swapped. Each chain of normalisers is itself a named mistake; `NO_ANSWER`
stands for a call that raised or never answered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from grader.judge.compare import stack
from grader.run.wire import Seq, Value


class NoAnswer:
    """The call raised or never answered: nothing to compare."""


NO_ANSWER = NoAnswer()
Answer = Value | NoAnswer
Normaliser = Callable[[Value], Value | NoAnswer]


def _transpose(value: Value) -> Value | NoAnswer:
    array = stack(value)
    return array.T if array is not None and array.ndim == 2 else NO_ANSWER


def _item(k: int) -> Normaliser:
    def pick(value: Value) -> Value | NoAnswer:
        return value.items[k] if isinstance(value, Seq) and len(value.items) > k else NO_ANSWER

    return pick


def _swap(value: Value) -> Value | NoAnswer:
    if isinstance(value, Seq) and len(value.items) == 2:
        return Seq(value.kind, value.items[::-1])
    return NO_ANSWER


TRANSPOSED = (_transpose,)  # one item of a tuple returned transposed (diagnose._itemwise)

# Structural explanations, cheapest first; each needed step is itself a named mistake.
CHAINS: list[tuple[tuple[str, ...], tuple[Normaliser, ...]]] = [
    ((), ()),
    (("output_transposed",), (_transpose,)),
    (("returns_tuple",), (_item(0),)),
    (("returns_tuple",), (_item(1),)),
    (("returns_tuple",), (_swap,)),
    (("returns_tuple", "output_transposed"), (_item(0), _transpose)),
]


def apply_chain(chain: tuple[Normaliser, ...], answers: Sequence[Answer]) -> list[Answer]:
    """Each answer after the chain's steps in turn (no answer stays none)."""
    out = []
    for answer in answers:
        for step in chain:
            if isinstance(answer, NoAnswer):
                break
            answer = step(answer)
        out.append(answer)
    return out
