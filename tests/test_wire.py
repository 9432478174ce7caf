"""The number-only wire format: faithful for numbers, closed to everything else."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from grader.run.wire import (
    FrameReader,
    Other,
    Seq,
    WireError,
    decode_frame,
    digest,
    encode_frame,
)


def roundtrip(value: object) -> object:
    frames = FrameReader().feed(encode_frame({"kind": "x"}, {"v": value}))
    assert len(frames) == 1
    return frames[0][1]["v"]


def test_arrays_come_back_as_plain_float64() -> None:
    original = np.arange(6, dtype=np.int32).reshape(2, 3)
    back = roundtrip(original)
    assert isinstance(back, np.ndarray) and type(back) is np.ndarray
    assert back.dtype == np.float64 and back.shape == (2, 3)
    assert np.array_equal(back, original)


def test_structures_scalars_and_non_numbers() -> None:
    back = roundtrip(([np.ones((2, 1)), 3.5], None, "text", True, 1 + 2j))
    assert isinstance(back, Seq) and back.kind == "tuple"
    inner = back.items[0]
    assert isinstance(inner, Seq) and inner.kind == "list"
    assert inner.items[1].shape == ()  # type: ignore[union-attr]
    assert back.items[1] is None
    assert back.items[2] == Other("str")
    assert float(back.items[3]) == 1.0  # type: ignore[arg-type]
    assert back.items[4] == Other("complex")


def test_ndarray_subclass_is_reduced_to_plain_numbers() -> None:
    class Liar(np.ndarray):
        def __eq__(self, other: object) -> bool:  # type: ignore[override]
            return True

    back = roundtrip(np.zeros(3).view(Liar))
    assert type(back) is np.ndarray


def test_frames_may_arrive_in_pieces() -> None:
    data = encode_frame({"kind": "a"}, {"v": np.ones(4)}) + encode_frame({"kind": "b"}, {})
    reader = FrameReader()
    kinds = []
    for i in range(0, len(data), 7):
        kinds += [h["kind"] for h, _ in reader.feed(data[i : i + 7])]
    assert kinds == ["a", "b"]
    assert reader.pending == 0


def frame(header: object, payload: bytes = b"") -> bytes:
    head = json.dumps(header).encode()
    return struct.pack(">II", len(head), len(payload)) + head + payload


@pytest.mark.parametrize(
    "data",
    [
        struct.pack(">II", 1 << 30, 0),
        struct.pack(">II", 3, 0) + b"\xff\xfe{",
        frame([1, 2]),
        frame({"values": {"v": {"t": "a", "shape": [4], "at": 0}}}, b"\0" * 8),
        frame({"values": {"v": {"t": "a", "shape": [-1], "at": 0}}}),
        frame({"values": {"v": {"t": "pickle", "data": "gASV"}}}),
        frame({"values": {"v": {"t": "list", "items": "nope"}}}),
    ],
    ids=["huge", "not-utf8", "not-object", "outside", "negative", "unknown", "bad-seq"],
)
def test_junk_is_refused(data: bytes) -> None:
    with pytest.raises(WireError):
        FrameReader().feed(data)


def test_total_size_is_capped() -> None:
    reader = FrameReader(max_total=100)
    with pytest.raises(WireError, match="more than"):
        reader.feed(b"\0" * 101)


def test_decode_rejects_deep_nesting() -> None:
    node: dict[str, object] = {"t": "none"}
    for _ in range(20):
        node = {"t": "list", "items": [node]}
    with pytest.raises(WireError):
        decode_frame(json.dumps({"values": {"v": node}}).encode(), b"")


def test_digest_is_exact_and_sees_structure() -> None:
    value = [np.ones((3, 1)), 2.0]
    assert digest(value) == digest([np.ones((3, 1)), np.float64(2)])  # same numbers, same bits
    assert digest(value) != digest([np.ones((3, 1)) + 1e-12, 2.0])
    assert digest(value) != digest([np.ones((1, 3)), 2.0])  # same numbers, another shape
    assert digest(value) != digest((np.ones((3, 1)), 2.0))  # a tuple is not a list
    assert digest(value) != digest([np.ones((3, 1)), "2.0"])
