"""The child's encoding takes short cuts (a float64 array's own bytes, a Python float packed
directly, a digest read in place); each must give the very bytes of the general path: an
array converted to a contiguous little-endian float64 copy."""

from __future__ import annotations

import json
import struct
import subprocess
import sys

import numpy as np
import pytest

from grader.run.wire import MAX_PAYLOAD, Other, decode_frame, digest, encode_frame

LAYOUTS = {
    "transposed": np.arange(12.0).reshape(3, 4).T,
    "strided": np.arange(24.0).reshape(2, 3, 4)[:, ::2, 1:],
    "reversed": np.arange(5.0)[::-1],
    "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
    "big-endian": np.arange(4.0).astype(">f8"),
    "float32": np.linspace(0, 1, 5, dtype=np.float32),
    "ints": np.arange(6).reshape(2, 3),
    "bools": np.array([[True, False]]),
    "0-d": np.array(2.5),
    "empty": np.zeros((0, 3)),
}


def _general(value: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(value, dtype="<f8").reshape(value.shape)


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_any_layout_crosses_as_its_contiguous_float64_copy(name: str) -> None:
    value = LAYOUTS[name]
    header = {"kind": "result"}
    assert encode_frame(header, {"value": value}) == encode_frame(
        header, {"value": _general(value)}
    )
    assert digest(value) == digest(_general(value))


def test_a_python_float_crosses_as_a_0d_array() -> None:
    for number in (1.5, -0.0, float("inf"), float("nan"), 1e-310):
        header = {"kind": "result"}
        frame = encode_frame(header, {"value": [number, (number,)]})
        assert frame == encode_frame(header, {"value": [np.array(number), (np.array(number),)]})
        assert digest(number) == digest(np.array(number))
        head_len = int.from_bytes(frame[:4], "big")
        _, values = decode_frame(frame[8 : 8 + head_len], frame[8 + head_len :])
        assert np.array_equal(values["value"].items[0], np.array(number), equal_nan=True)


def test_a_float_past_the_frames_room_is_named_not_sent() -> None:
    numbers = MAX_PAYLOAD // 8
    full = [np.zeros(1_000_000)] * (numbers // 1_000_000) + [np.zeros(numbers % 1_000_000)]
    frame = encode_frame({"kind": "result"}, {"value": [*full, 1.5]})
    assert b'"ndarray of 1 numbers (too large to send)"' in frame


def _node(value: object, payload: list[bytes], depth: int = 0) -> dict[str, object]:
    """The value tree the wire's docstring describes, built as dicts: the reference the
    encoder's hand-written JSON text must equal (json.dumps of these dicts)."""
    if value is None:
        return {"t": "none"}
    if isinstance(value, list | tuple) and depth < 8:
        kind = "tuple" if isinstance(value, tuple) else "list"
        return {"t": kind, "items": [_node(item, payload, depth + 1) for item in value]}
    if not isinstance(value, np.ndarray | float | int | np.generic) or isinstance(value, str):
        return {"t": "other", "type": type(value).__name__}
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        return {"t": "other", "type": type(value).__name__}
    at = sum(len(chunk) for chunk in payload)
    payload.append(np.ascontiguousarray(array, dtype="<f8").tobytes())
    return {"t": "a", "shape": list(array.shape), "at": at}


MIXED = [
    np.arange(6.0).reshape(2, 3),
    [np.ones((4, 1)), (1.5, None, [np.float32(2.0)])],
    (),
    'text with a \u2603 and a "quote"',
    {"a": 1},
    np.zeros((2, 0)),
    3,
    np.array([1 + 2j]),
    [[[[[[[[[[1.0]]]]]]]]]],
]


@pytest.mark.parametrize("index", range(len(MIXED)))
def test_the_header_is_the_json_of_the_value_trees(index: int) -> None:
    value = MIXED[index]
    header = {"kind": "result", "case": 2, "error": {"message": "line\nbreak \u00e9"}}
    frame = encode_frame(header, {"value": value, "args": [value, value]})
    payload: list[bytes] = []
    values = {"value": _node(value, payload), "args": _node([value, value], payload)}
    head = json.dumps({**header, "values": values}).encode()
    assert frame == struct.pack(">II", len(head), len(b"".join(payload))) + head + b"".join(payload)
    assert encode_frame({}, {}) == struct.pack(">II", 14, 0) + b'{"values": {}}'


class _NamedByACycle(type):
    """A metaclass whose classes' `__name__` is a list holding itself: what a student's
    return value (its type's name) or exception can put in a frame's header."""

    @property
    def __name__(cls) -> list[object]:  # type: ignore[override]
        cycle: list[object] = []
        cycle.append(cycle)
        return cycle


class _Odd(metaclass=_NamedByACycle):
    pass


def test_a_cycle_student_code_made_is_refused_as_json_dumps_refuses_it() -> None:
    # json.dumps's check for cycles, not recursion to the limit (which student code may have
    # raised past what the C stack holds: the child would crash, every later answer lost).
    # An exception's message is `str(exc)[:MAX_TEXT]`: a str subclass can make that a list
    # holding itself.
    cycle: list[object] = []
    cycle.append(cycle)
    header: dict[str, object] = {"kind": "result", "error": {"message": cycle}}
    with pytest.raises(ValueError) as raised:
        json.dumps({**header, "values": {}})
    with pytest.raises(ValueError) as got:
        encode_frame(header, {})
    assert type(got.value) is type(raised.value) and str(got.value) == str(raised.value)


CYCLE_WITH_A_RAISED_LIMIT = """
import sys
from grader.run.wire import encode_frame
cycle = []
cycle.append(cycle)
sys.setrecursionlimit(10**7)
try:
    encode_frame({"kind": "result", "error": {"message": cycle}}, {})
except ValueError as exc:
    print("refused:", exc)
"""


def test_a_cycle_does_not_crash_a_child_that_raised_its_recursion_limit() -> None:
    # Student code may raise the limit past what the C stack holds: a cycle found by
    # recursing to the limit would end the process (SIGSEGV), every later answer lost.
    run = [sys.executable, "-c", CYCLE_WITH_A_RAISED_LIMIT]
    done = subprocess.run(run, capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, "refused: Circular reference detected\n")


def test_a_class_that_lies_about_its_name_crosses_by_its_real_one() -> None:
    """A metaclass may make `__name__` anything (a list holding itself); what crosses, and
    what a probe's digest holds, is the name Python keeps for the class."""
    frame = encode_frame({"kind": "result"}, {"value": _Odd()})
    _, values = decode_frame(*_parts(frame))
    assert values["value"] == Other("_Odd")
    assert digest(_Odd()) == digest(Plain())


class Plain:
    """The same name, told plainly."""


Plain.__name__ = "_Odd"


def _parts(frame: bytes) -> tuple[bytes, bytes]:
    head, size = struct.unpack(">II", frame[:8])
    return frame[8 : 8 + head], frame[8 + head : 8 + head + size]
