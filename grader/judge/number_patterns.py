"""What wrong numbers show by themselves about how they were computed.

A list whose items are the running totals of the expected items was summed into one
accumulator that no pass of the loop resets; values that are all whole numbers where the
expected ones are not went through a floor division (`//`) or an `int(…)`; ones where an
additive mask's infinities belong are a 0/1 or True/False mask returned as it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from grader.course.config import Tolerance
from grader.judge.compare import stack
from grader.run.wire import Seq, Value


def running_totals(
    got: Sequence[np.ndarray], expected: Sequence[np.ndarray], tol: Tolerance
) -> str | None:
    """Each item (after the first) is the sum of the expected items up to it: the sum that
    makes each item is carried over from one pass of the loop to the next."""
    if len(got) != len(expected) or len(got) < 2:
        return None
    if any(want.shape != expected[0].shape for want in expected):
        return None  # items of several shapes (a tuple of results) add up to no total
    total = np.zeros_like(expected[0], dtype=float)
    for item, want in zip(got, expected, strict=True):
        if item.shape != want.shape:
            return None
        total = total + want
        if not np.allclose(item, total, rtol=tol.rtol * 10, atol=tol.atol * 10):
            return None
    if np.allclose(got[1], expected[1], rtol=tol.rtol, atol=tol.atol):
        return None  # the items after the first add nothing: no running total to speak of
    return (
        "each item is the running total of the expected items up to it: the sum that makes "
        "one item is carried into the next; start it again (at zero) inside the loop, for "
        "each item"
    )


def first_running_totals(failing: Sequence[tuple[Value, Value]], tol: Tolerance) -> str | None:
    """`running_totals` for the first failing case that returned a list of arrays."""
    for answer, expected in failing:
        if not (isinstance(answer, Seq) and isinstance(expected, Seq)):
            continue
        got = [a for a in map(stack, answer.items) if a is not None]
        want = [w for w in map(stack, expected.items) if w is not None]
        if len(got) == len(answer.items) and len(want) == len(expected.items):
            return running_totals(got, want, tol)
    return None


def whole_numbers(got: np.ndarray, expected: np.ndarray) -> str | None:
    """Every value a whole number, where the expected values are not."""
    if got.size == 0 or got.shape != expected.shape or not np.all(np.isfinite(got)):
        return None
    if not np.all(got == np.round(got)) or np.all(expected == np.round(expected)):
        return None
    return (
        "every value is a whole number where the expected ones are not: a floor division "
        "`//` (use `/`), an `int(…)` or an `.astype(int)` rounds the result"
    )


def _exactly(got: np.ndarray, want: np.ndarray) -> bool:
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=1e-12, atol=1e-12))


def _usable(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> bool:
    return bool(pairs) and all(
        g.size and g.shape == w.shape and np.all(np.isfinite(w)) for g, w in pairs
    )


def whole_parts(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> bool:
    """Every value is the expected one made a whole number (towards zero, down or to the
    nearest), where the expected ones are not whole: zeros from values between -1 and 1
    are such a rounding, not values that never reached the result."""
    if not _usable(pairs) or all(_exactly(w, np.round(w)) for _, w in pairs):
        return False
    return any(all(_exactly(g, whole(w)) for g, w in pairs) for whole in _WHOLE)


_WHOLE = (np.trunc, np.floor, np.round)


def decimal_places(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> str | None:
    """Every value the expected one rounded to a few (1 to 4) decimal places, where the
    expected ones have more: a `round(…, 2)` kept for printing."""
    if not _usable(pairs):
        return None
    for places in range(1, 5):
        if all(_exactly(g, np.round(w, places)) for g, w in pairs):
            if all(_exactly(w, np.round(w, places)) for _, w in pairs):
                return None  # the expected values have no more places than that
            return (
                f"every value is the expected one rounded to {places} decimal "
                f"place{'s' if places > 1 else ''}: the grader compares all the digits; "
                "return the values as computed, and round only what you print"
            )
    return None


_ROUNDS = re.compile(
    r"\bround\s*\(|\.astype\s*\(\s*(?:np\.)?[\"']?u?int|\bint\s*\(|\b(?:floor|trunc|fix|rint)\s*\("
)


def rounds(line: str) -> bool:
    """A line that rounds numbers (`round(`, `.round(`, `int(`, `.astype(int)`, `np.floor`,
    `np.trunc`, `np.fix`, `np.rint`), outside its comment."""
    return bool(_ROUNDS.search(line.split("#", 1)[0]))


# A line that makes numbers of a narrower float type (outside its comment): `np.float32`,
# `dtype="float16"`, `.astype("f4")`, `np.half`, `np.single`.
_NARROW = re.compile(r"float(16|32)|\bhalf\b|\bsingle\b|[\"'][<>=]?f[24][\"']")


def narrows(line: str) -> bool:
    """A line that converts to, or makes, a float type narrower than float64."""
    return bool(_NARROW.search(line.split("#", 1)[0]))


# The narrower float types, the tighter first, with their significant digits and how many of
# their epsilons, relative to the values' magnitude, a computation in one stays within (from
# float64 attention with L up to 32 and d up to 128: float32 up to 9, float16 up to 1.4;
# float16's bound is kept tight, 0.4%, so that a factor of 1.01 is never taken for it).
_NARROWER = (("float32", 7, 16), ("float16", 3, 4))


def float_precision(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[str, int] | None:
    """The narrowest float type to whose precision every value agrees with the expected
    one (within a few of its epsilons of the largest expected magnitude), and its
    significant digits, if any: the numbers of a computation made in float16 or float32.
    Said with the code's evidence (`narrows`), never from the numbers alone."""
    if not _usable(pairs) or not all(np.all(np.isfinite(g)) for g, _ in pairs):
        return None
    for name, digits, epsilons in _NARROWER:
        bound = epsilons * float(np.finfo(name).eps)
        if all(
            float(np.max(np.abs(g - w))) <= bound * max(float(np.max(np.abs(w))), 1e-30)
            for g, w in pairs
        ):
            return name, digits
    return None


MEAN = re.compile(r"\bmean\s*\(")  # a line that takes a mean
_FLOOR = re.compile(r"(?<![/])//(?![/=])")
_REAL = re.compile(r"@|\bsqrt\b|\bnorm\b|\bexp\b|\.dot\b|\bdot\(")


def floor_division(line: str) -> bool:
    """A line that floor-divides real-valued work (a product, a root, a norm): `//` rounds
    it down to whole numbers; an integer index such as `D // 2` is left alone."""
    code = line.split("#", 1)[0]
    return bool(_FLOOR.search(code)) and bool(_REAL.search(code))


def booleans_for_infinities(got: np.ndarray, expected: np.ndarray) -> str | None:
    """Only 0 and 1 where the expected values are 0 and ±inf, the 1s exactly where the
    infinities are: a True/False mask where an additive one (0 and -inf) is expected."""
    if got.shape != expected.shape or not np.isin(got, (0, 1)).all():
        return None
    infinite = np.isinf(expected)
    if not infinite.any() or not (expected[~infinite] == 0).all():
        return None
    if not np.array_equal(got == 1, infinite):
        return None
    sign = "-" if (expected[infinite] < 0).all() else ""
    return (
        f"1 (or True) exactly where {sign}inf is expected, 0 elsewhere: the mask marks the "
        f"right places, but it is added to the scores, so those places must hold {sign}inf "
        f"themselves: `np.where(mask == 1, {sign}np.inf, 0.0)`"
    )


def swapped_infinities(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> str | None:
    """In every pair, ±inf exactly where 0 is expected and 0 exactly where ±inf is: an
    additive mask the wrong way round (said so rather than as a transpose and a shifted
    diagonal, which give the same numbers)."""
    signs: set[str] = set()
    for got, expected in pairs:
        if got.shape != expected.shape or got.size == 0:
            return None
        hidden = np.isinf(expected)
        if not (expected[~hidden] == 0).all() or np.isnan(got).any():
            return None
        if not np.array_equal(np.isinf(got), ~hidden) or not (got[hidden] == 0).all():
            return None
        signs |= {"-" if v < 0 else "+" for v in (*got[~hidden].ravel(), *expected[hidden].ravel())}
    if len(signs) != 1 or not any(np.isinf(expected).any() for _, expected in pairs):
        return None  # infinities of both signs: not the same mask turned round
    sign = signs.pop().replace("+", "")
    return (
        f"{sign}inf exactly where 0 is expected and 0 exactly where {sign}inf is expected: the "
        "mask is the wrong way round, hiding what should be seen and showing what should be "
        "hidden; swap its two values"
    )
