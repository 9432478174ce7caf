"""Compare a student's value with the reference: structure, shape, finiteness, tolerance.

Messages lead with the summary a student needs first (shape before values; how many entries
differ; the largest differences) and never print whole arrays.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from grader.course.config import Tolerance
from grader.run.wire import Other, Seq, Value

_FLOAT64 = np.dtype(np.float64)  # what every array the wire decodes is


@dataclass(frozen=True)
class Verdict:
    """Whether an output matched; if not, what is wrong and where in a returned list or tuple."""

    ok: bool
    summary: str = ""
    path: str = ""  # e.g. "[0][2]": where inside a returned list/tuple the problem is

    @property
    def message(self) -> str:
        """The summary, prefixed by the element's path when the problem is inside a sequence."""
        return f"element {self.path}: {self.summary}" if self.path else self.summary


PASS = Verdict(True)


_UNSTACKED = object()


def stack(value: Value) -> np.ndarray | None:
    """An array for the value when it is one, or a sequence of equally shaped arrays. A
    sequence is stacked once (kept with it): the diagnosis compares one answer with a
    thousand variants, and a student's list may hold 60,000 items."""
    if isinstance(value, np.ndarray):
        return value
    if not isinstance(value, Seq):
        return None
    stacked = value.__dict__.get("_stacked", _UNSTACKED)
    if stacked is _UNSTACKED:
        stacked = _stacked(value)
        value.__dict__["_stacked"] = stacked  # frozen: kept in its dict, as cached_property does
    return cast("np.ndarray | None", stacked)


def _stacked(value: Seq) -> np.ndarray | None:
    """The items as one array, or None at the first that is none or of another shape."""
    if not value.items:
        return np.zeros((0,))
    arrays: list[np.ndarray] = []
    for item in value.items:
        part = stack(item)
        if part is None or (arrays and part.shape != arrays[0].shape):
            return None
        arrays.append(part)
    return np.stack(arrays)


def describe(value: Value) -> str:
    """What a value is, in a few words for a message: None, a number, an array's shape, a sequence's
    length or a type's name."""
    if value is None:
        return "None"
    if isinstance(value, Other):
        return f"a {value.type_name}"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}" if value.ndim else "a number"
    return f"a {value.kind} of {len(value.items)} items"


def compare(expected: Value, got: Value, mode: str, tol: Tolerance) -> Verdict:
    """Compare an output with the expected one, element by element through sequences; `mode`
    "squeeze" ignores axes of length 1."""
    if tol.atol >= 0 and tol.rtol >= 0 and _same_numbers(expected, got):
        return PASS  # bit for bit the expected value: within any tolerance, NaN for NaN
    if isinstance(expected, Seq) and _all_within(expected, got, tol):
        return PASS  # the usual case, in one step: same structure, every entry close
    if isinstance(expected, Seq) and isinstance(got, Seq):
        if len(expected.items) != len(got.items):
            return Verdict(False, f"returned {describe(got)}, expected {len(expected.items)} items")
        for i, (exp_item, got_item) in enumerate(zip(expected.items, got.items, strict=True)):
            verdict = compare(exp_item, got_item, mode, tol)
            if not verdict.ok:
                return Verdict(False, verdict.summary, f"[{i}]{verdict.path}")
        return PASS
    exp, val = stack(expected), stack(got)
    if exp is None:  # a ragged sequence is expected, and something else came back
        return Verdict(False, f"returned {describe(got)}, expected {describe(expected)}")
    if val is None:
        return Verdict(False, _not_numbers(got))
    if mode == "squeeze":
        exp, val = np.squeeze(exp), np.squeeze(val)
    return compare_arrays(exp, val, tol)


def agrees(expected: Value, got: Value, mode: str, tol: Tolerance) -> bool:
    """`compare(expected, got, mode, tol).ok`, without the words for a mismatch: what the
    diagnosis asks of every variant it tries, most of which do not match."""
    if tol.atol >= 0 and tol.rtol >= 0 and _same_numbers(expected, got):
        return True
    if isinstance(expected, Seq) and _all_within(expected, got, tol):
        return True
    if isinstance(expected, Seq) and isinstance(got, Seq):
        return len(expected.items) == len(got.items) and all(
            agrees(e, g, mode, tol) for e, g in zip(expected.items, got.items, strict=True)
        )
    exp, val = stack(expected), stack(got)
    if exp is None or val is None:
        return False
    if mode == "squeeze":
        exp, val = np.squeeze(exp), np.squeeze(val)
    if exp.shape != val.shape:
        return False
    # As compare_arrays decides, in its order: every entry within the tolerance; else none
    # NaN or infinite where a finite one is expected, and every entry close (NaN for NaN; a
    # close entry is never one that should be infinite or NaN and is not).
    with np.errstate(all="ignore"):
        within = _within(val, exp, tol)
        if within.all():
            return True
        close = within | (np.isnan(val) & np.isnan(exp))
    return bool(close.all() and not (~np.isfinite(val) & np.isfinite(exp)).any())


def _same_numbers(expected: Value, got: Value) -> bool:
    """Whether both are the same float64 arrays, or sequences of them (the same kind, length
    and shapes), bit for bit: what `compare` passes at once, whatever the mode."""
    if isinstance(expected, np.ndarray):
        return (
            isinstance(got, np.ndarray)
            and expected.dtype == np.float64
            and got.dtype == np.float64
            and expected.shape == got.shape
            and expected.tobytes() == got.tobytes()
        )
    if isinstance(expected, Seq):
        return (
            isinstance(got, Seq)
            and expected.kind == got.kind
            and len(expected.items) == len(got.items)
            and all(map(_same_numbers, expected.items, got.items))
        )
    return False


def _leaves(
    value: Value, arrays: list[np.ndarray], shape: list[int], float64_only: bool = False
) -> bool:
    """Collect a tree's arrays, and its outline in order (each sequence's length, -1 for each
    array); False when the tree holds anything else (or, `float64_only`, an array of another
    type than the wire's float64)."""
    if isinstance(value, np.ndarray):
        arrays.append(value)
        shape.append(-1)
        return not float64_only or value.dtype is _FLOAT64
    if isinstance(value, Seq):
        shape.append(len(value.items))
        for item in value.items:
            # the usual item, without a call
            if isinstance(item, np.ndarray) and (not float64_only or item.dtype is _FLOAT64):
                arrays.append(item)
                shape.append(-1)
            elif not _leaves(item, arrays, shape, float64_only):
                return False
        return True
    return False


def _all_within(expected: Seq, got: Value, tol: Tolerance) -> bool:
    """True only when `compare` would find every element equal within tolerance: both trees
    have the same sequences and shapes, and all their entries are close (checked at once)."""
    exp: list[np.ndarray] = []
    val: list[np.ndarray] = []
    exp_outline: list[int] = []
    val_outline: list[int] = []
    if not (_leaves(expected, exp, exp_outline) and _leaves(got, val, val_outline)):
        return False
    if exp_outline != val_outline or [a.shape for a in exp] != [a.shape for a in val] or not exp:
        return False
    flat_exp = np.concatenate([a.ravel() for a in exp])
    flat_val = np.concatenate([a.ravel() for a in val])
    with np.errstate(all="ignore"):
        return bool(_within(flat_val, flat_exp, tol).all())


@dataclass(frozen=True)
class Flat:
    """Values (a target's outputs on its cases) as one array: each value's outline (see
    `_leaves`), the shape of each of their arrays, and every entry, in order."""

    outlines: tuple[tuple[int, ...], ...]
    shapes: tuple[tuple[int, ...], ...]
    entries: np.ndarray


def flatten(values: Sequence[Value]) -> Flat | None:
    """The values as one Flat, or None when they hold anything but float64 arrays (in
    sequences), or no array at all."""
    arrays: list[np.ndarray] = []
    outlines = []
    for value in values:
        outline: list[int] = []
        if not _leaves(value, arrays, outline, float64_only=True):
            return None
        outlines.append(tuple(outline))
    if not arrays:
        return None
    return Flat(tuple(outlines), tuple(a.shape for a in arrays), np.concatenate(arrays, axis=None))


def all_pass(expected: Flat, got: Sequence[Value], tol: Tolerance) -> bool:
    """True only when `compare` passes each of `got` against its expected value, whatever the
    mode: the same outlines of sequences, float64 arrays of the same shapes, and every entry
    within the tolerance, checked at once for all of them. False says nothing: `compare`
    each one to know which fail and why."""
    answers = flatten(got)
    if answers is None or answers.outlines != expected.outlines:
        return False
    if answers.shapes != expected.shapes:
        return False
    with np.errstate(all="ignore"):
        return bool(_within(answers.entries, expected.entries, tol).all())


# How the child's encoder names an array larger than the parent takes (wire.py).
_TOO_LARGE = re.compile(r"ndarray of (\d+) numbers \(too large to send\)")


def _not_numbers(got: Value) -> str:
    if got is None:
        return "returned None: is the `return` statement missing?"
    if isinstance(got, Other):
        if match := _TOO_LARGE.fullmatch(got.type_name):
            return f"returned an array of {match[1]} numbers, too many to compare (or to send)"
        return f"returned {describe(got)}, not numbers"
    if isinstance(got, Seq):
        # in the order returned (each shape once): sorted, (7, 2), (2,), (2, 5) read backwards
        shapes = list(dict.fromkeys(str(s.shape) for s in map(stack, got.items) if s is not None))
        return f"returned {describe(got)} that do not stack into one array ({', '.join(shapes)})"
    return f"returned {describe(got)}"


def compare_arrays(exp: np.ndarray, val: np.ndarray, tol: Tolerance) -> Verdict:
    """Compare two arrays within the tolerance: a failing verdict names a wrong shape, NaN or
    infinite entries, or how many entries differ, by how much, and the first."""
    if exp.shape != val.shape:
        hint = ""
        if val.ndim == 2 and val.shape == exp.shape[::-1]:
            hint = " (the transposed shape)"
        elif val.size == exp.size:
            hint = " (same number of entries, arranged differently)"
        return Verdict(False, f"shape {val.shape}, expected {exp.shape}{hint}")
    with np.errstate(all="ignore"):  # the usual case, quickly: every entry within tolerance
        within = _within(val, exp, tol)
        if within.all():
            return PASS
    bad = ~np.isfinite(val) & np.isfinite(exp)
    if bad.any():
        return Verdict(
            False,
            f"{int(bad.sum())} of {val.size} entries are NaN or infinite "
            "where the expected values are finite",
        )
    unlike = _non_finite_mismatch(val, exp)
    if unlike.any():
        return Verdict(False, _non_finite_words(val, exp, unlike))
    # NaN where NaN is expected is close (the NaN policy, stated in docs/student.md).
    close = within | (np.isnan(val) & np.isnan(exp))
    if close.all():
        return PASS
    with np.errstate(all="ignore"):
        diff = np.where(close, 0.0, np.abs(val - exp))
        # Relative to an expected 0 is no number ("max rel difference 2.9e+300"): those
        # entries are left out of it, and a difference only where 0 is expected says so.
        measured = ~close & (exp != 0)
        rel = np.where(measured, diff / np.where(measured, np.abs(exp), 1.0), 0.0)
    diff, rel = _finite_or_inf(diff), _finite_or_inf(rel)
    first = tuple(int(i) for i in np.argwhere(~close)[0])
    where = f" at index {first}" if first else ""
    relative = f"max rel difference {rel.max():.3g}" if measured.any() else "where 0 is expected"
    return Verdict(
        False,
        f"{int((~close).sum())} of {val.size} entries differ "
        f"(max abs difference {diff.max():.3g}, {relative}); "
        f"first{where}: got {val[first]:.6g}, expected {exp[first]:.6g}",
    )


def _finite_or_inf(values: np.ndarray) -> np.ndarray:
    """`np.nan_to_num(values, posinf=np.inf)`, called only when some entry is not finite."""
    if np.isfinite(values).all():
        return values
    result: np.ndarray = np.nan_to_num(values, posinf=np.inf)
    return result


def _within(val: np.ndarray, exp: np.ndarray, tol: Tolerance) -> np.ndarray:
    """Entry by entry: |val - exp| <= atol + rtol * |exp| where the expected value is finite;
    an expected ±inf is matched only by the same infinity (the tolerance there would be
    infinite and accept any finite number); an expected NaN by nothing (`compare_arrays`
    adds NaN for NaN). The caller silences NaN warnings."""
    result: np.ndarray = (np.abs(val - exp) <= tol.atol + tol.rtol * np.abs(exp)) & np.isfinite(exp)
    result |= val == exp  # equal infinities, sign included
    return result


def _non_finite_mismatch(val: np.ndarray, exp: np.ndarray) -> np.ndarray:
    """Where an entry expected to be ±inf or NaN is not exactly that (inf: same sign)."""
    with np.errstate(all="ignore"):
        wrong: np.ndarray = ~np.isfinite(exp) & ~((val == exp) | (np.isnan(val) & np.isnan(exp)))
    return wrong


def _non_finite_words(val: np.ndarray, exp: np.ndarray, wrong: np.ndarray) -> str:
    """How many entries should be non-finite and are not, and the first of them."""
    first = tuple(int(i) for i in np.argwhere(wrong)[0])
    where = f" at index {first}" if first else ""
    return (
        f"{int(wrong.sum())} of {val.size} entries differ where the expected value is "
        "infinite or NaN (these must match exactly, sign included); "
        f"first{where}: got {val[first]:.6g}, expected {exp[first]:.6g}"
    )
