"""Decoding is total: whatever bytes a hostile student's process sends, the parent gets
frames or a WireError, never another exception, and never more memory than the limits."""

from __future__ import annotations

import contextlib
import json
import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from grader.run.wire import (
    MAX_ELEMENTS,
    MAX_NDIM,
    MAX_PAYLOAD,
    FrameReader,
    Other,
    Seq,
    WireError,
    decode_frame,
    encode_frame,
)

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def frame(header: object, payload: bytes = b"") -> bytes:
    head = json.dumps(header).encode()
    return struct.pack(">II", len(head), len(payload)) + head + payload


def array_node(shape: object, at: object = 0) -> dict[str, object]:
    return {"values": {"v": {"t": "a", "shape": shape, "at": at}}}


def decodes_or_refuses(data: bytes) -> None:
    """The property: frames come back, or WireError is raised; nothing else escapes."""
    with contextlib.suppress(WireError):
        FrameReader().feed(data)


@pytest.mark.parametrize(
    "shape",
    [[0, 2**70], [2**70, 0], [0, 2**40, 2**40], [0, MAX_ELEMENTS + 1], [1] * (MAX_NDIM + 1)],
    ids=["zero-then-huge", "huge-then-zero", "overflowing-product", "over-cap", "too-many-dims"],
)
def test_shapes_beyond_the_limits_are_wire_errors(shape: list[int]) -> None:
    one_number = b"\0" * 8  # room for the one number of [1] * 9: only the shape is wrong
    with pytest.raises(WireError, match="shape"):
        FrameReader().feed(frame(array_node(shape), one_number))
    with pytest.raises(WireError, match="shape"):
        decode_frame(json.dumps(array_node(shape)).encode(), one_number)


def test_arrays_may_not_share_the_payload() -> None:
    """A thousand arrays pointing at the same bytes would decode to a thousand copies."""
    nodes = [{"t": "a", "shape": [1], "at": 0}] * 1000
    header = {"values": {"v": {"t": "list", "items": nodes}}}
    with pytest.raises(WireError, match="where the one before it ended"):
        FrameReader().feed(frame(header, b"\0" * 8))


def test_payload_bytes_no_array_claims_are_refused() -> None:
    with pytest.raises(WireError, match="no array claims"):
        FrameReader().feed(frame(array_node([1]), b"\0" * 16))


def test_decode_frame_alone_enforces_the_frame_limits() -> None:
    """`decode_frame` is also called without a FrameReader in front of it."""
    with pytest.raises(WireError, match="limits"):
        decode_frame(b"{}", bytes(MAX_PAYLOAD + 8))


def test_oversized_arrays_cross_as_other_so_the_frame_still_decodes() -> None:
    big = np.zeros(MAX_ELEMENTS + 1)
    deep = np.zeros((1,) * (MAX_NDIM + 1))
    data = encode_frame({"kind": "x"}, {"v": [big, deep, np.ones(3)]})
    ((_, values),) = FrameReader().feed(data)
    back = values["v"]
    assert isinstance(back, Seq)
    assert isinstance(back.items[0], Other) and "too large" in back.items[0].type_name
    assert isinstance(back.items[1], Other)
    assert np.array_equal(back.items[2], np.ones(3))  # type: ignore[arg-type]


# ------------------------------------------------------------------ property-based tests

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),  # unbounded: 2**70 and -1 as likely as 3
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.sampled_from(["a", "list", "tuple", "none", "other", "t", "shape", "at", "items"]),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.sampled_from(["t", "shape", "at", "items", "type", "x"]), inner),
    ),
    max_leaves=30,
)
shapes = st.lists(
    st.one_of(st.integers(min_value=-2, max_value=4), st.integers(), st.just(2**70)), max_size=10
)
node = st.recursive(
    st.one_of(
        st.fixed_dictionaries({"t": st.just("a"), "shape": shapes, "at": st.integers(-8, 64)}),
        st.fixed_dictionaries({"t": st.just("other"), "type": json_value}),
        st.just({"t": "none"}),
        json_value,
    ),
    lambda inner: st.fixed_dictionaries(
        {"t": st.sampled_from(["list", "tuple"]), "items": st.lists(inner, max_size=4)}
    ),
    max_leaves=20,
)


@FUZZ
@given(st.binary(max_size=512))
@example(frame(array_node([0, 2**70])))  # the red team's frame
def test_random_bytes_decode_or_raise_wire_error(data: bytes) -> None:
    decodes_or_refuses(data)


@pytest.mark.slow
@FUZZ
@given(st.dictionaries(st.text(max_size=3), node, max_size=3), st.binary(max_size=64))
@example({"v": {"t": "a", "shape": [0, 2**70], "at": 0}}, b"")
@example({"v": {"t": "a", "shape": [1] * 9, "at": 0}}, b"\0" * 8)
def test_forged_value_trees_decode_or_raise_wire_error(values: Any, payload: bytes) -> None:
    decodes_or_refuses(frame({"kind": "result", "values": values}, payload))


real_arrays = st.lists(st.integers(0, 3), max_size=4).flatmap(
    lambda shape: st.lists(
        st.floats(allow_nan=True, allow_infinity=True),
        min_size=int(np.prod(shape)),
        max_size=int(np.prod(shape)),
    ).map(lambda numbers: np.array(numbers, dtype=np.float64).reshape(shape))
)
encodable = st.recursive(
    st.one_of(
        st.none(), st.floats(), st.integers(-(2**53), 2**53), st.text(max_size=4), real_arrays
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner)),
    max_leaves=12,
)


@st.composite
def mutated_frames(draw: st.DrawFn) -> bytes:
    """A well-formed frame, then a few bytes flipped, dropped or added anywhere in it."""
    data = bytearray(encode_frame({"kind": "result"}, {"value": draw(encodable)}))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["flip", "drop", "insert", "cut"]))
        if action == "flip" and at < len(data):
            data[at] ^= draw(st.integers(1, 255))
        elif action == "drop":
            del data[at : at + draw(st.integers(1, 8))]
        elif action == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        else:
            del data[at:]
    return bytes(data)


@pytest.mark.slow
@FUZZ
@given(mutated_frames())
@example(frame(array_node([0, 2**70])))
def test_mutated_frames_decode_or_raise_wire_error(data: bytes) -> None:
    decodes_or_refuses(data)
    # The same bytes, arriving in two pieces, must behave the same way.
    reader = FrameReader()
    with contextlib.suppress(WireError):
        reader.feed(data[: len(data) // 2])
        reader.feed(data[len(data) // 2 :])


@pytest.mark.slow
@FUZZ
@given(encodable)
@example([np.zeros(MAX_ELEMENTS)] * (MAX_PAYLOAD // (8 * MAX_ELEMENTS) + 1))  # past MAX_PAYLOAD
def test_whatever_the_child_encodes_the_parent_decodes(value: Any) -> None:
    """A frame the parent refuses would cost the student every answer in it."""
    ((_, values),) = FrameReader().feed(encode_frame({"kind": "result"}, {"value": value}))
    assert "value" in values
