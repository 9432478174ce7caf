"""The child's frames as the trusted parent reads them: one frozen dataclass per kind, parsed
once from the decoded (header, values) pairs, so that the judge reads fields, never a dict
keyed by strings the child chose. The bytes on the wire are unchanged (wire.py); the child
does not import this module.

Everything here came from the student's process: numbers that are not ints become -1, text
is cleaned and bounded, and an error is kept as the child sent it (a dict when well-formed)
for the judge to read with care.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from grader.run.wire import Frame, Value, clean_text

Fix = tuple[int, int]  # (cell, line) where a 1×1 array was turned into a number
CallStatus = Literal["ok", "timeout", "error"]


@dataclass(frozen=True)
class CellFrame:
    """A code cell ran; `error` is what it raised as the child reported it (None: it ran)."""

    cell: int
    error: object = None
    scalar_fixes: frozenset[Fix] = frozenset()


@dataclass(frozen=True)
class MissingFrame:
    """A target the notebook does not define, and what was found under its name instead."""

    target: str
    found: str
    scalar_fixes: frozenset[Fix] = frozenset()


@dataclass(frozen=True)
class ResultFrame:
    """One call of a target on one case: how it ended, the error or the digest, the values."""

    target: str
    case: int
    status: CallStatus = "error"  # anything but "ok" or "timeout" from the child is an error
    error: object = None
    digest: str | None = None
    values: Mapping[str, Value] = field(default_factory=dict)
    scalar_fixes: frozenset[Fix] = frozenset()


@dataclass(frozen=True)
class CellsDoneFrame:
    """Every cell has run: the output the notebook printed, bounded."""

    output: str
    scalar_fixes: frozenset[Fix] = frozenset()


@dataclass(frozen=True)
class OtherFrame:
    """Any other kind (`done`, or one the judge does not read), kept for its scalar fixes."""

    kind: str
    scalar_fixes: frozenset[Fix] = frozenset()


ChildFrame = CellFrame | MissingFrame | ResultFrame | CellsDoneFrame | OtherFrame


# The largest number a cell, a line or a count the child sends may be: past it the number is
# no place in any notebook (a cell named `<cell 9223372036854775808>` by the student's own
# compile() was written to the gradebook as is: SQLite refused it, and the class with it).
MOST_INT = 2**31 - 1
# Scalar fixes (`float()` of a 1×1 array) one frame may name, each a line of a real notebook:
# a forged list of millions was a note each, in every output.
MOST_FIXES = 64


def as_int(value: Any) -> int:
    """An int the child sent, else -1 (a bool is not one, nor a number past MOST_INT)."""
    if isinstance(value, int) and not isinstance(value, bool) and -MOST_INT <= value <= MOST_INT:
        return value
    return -1


def _fix(value: Any) -> Fix | None:
    if isinstance(value, list) and len(value) == 2:
        return (as_int(value[0]), as_int(value[1]))
    return None


_NO_FIXES: frozenset[Fix] = frozenset()


def _fixes(raw: Any) -> frozenset[Fix]:
    if not raw or not isinstance(raw, list):  # the usual frame: none
        return _NO_FIXES
    return frozenset(f for f in map(_fix, raw[:MOST_FIXES]) if f)


def parse_frame(frame: Frame) -> ChildFrame:
    """One decoded frame as its dataclass."""
    header, values = frame
    kind = header.get("kind")
    fixes = _fixes(header.get("scalar_fixes"))
    if kind == "cell":
        return CellFrame(as_int(header.get("cell")), header.get("error"), fixes)
    if kind == "missing":
        return MissingFrame(str(header.get("target")), clean_text(header.get("found"), 40), fixes)
    if kind == "result":
        raw = header.get("status")
        status: CallStatus = "ok" if raw == "ok" else "timeout" if raw == "timeout" else "error"
        digest = header.get("digest")
        return ResultFrame(
            str(header.get("target")),
            as_int(header.get("case")),
            status,
            header.get("error"),
            digest if isinstance(digest, str) else None,
            values,
            fixes,
        )
    if kind == "cells_done":
        return CellsDoneFrame(clean_text(header.get("output", "")), fixes)
    return OtherFrame(kind if isinstance(kind, str) else "", fixes)


def parse_frames(frames: Iterable[Frame]) -> list[ChildFrame]:
    """Every frame of a run, in order, as dataclasses."""
    return [parse_frame(frame) for frame in frames]
