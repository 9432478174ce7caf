"""The number-only format between the student's process and the grader's.

A frame is `>II` (header length, payload length), a JSON header, then a payload of
little-endian float64 numbers. Values are trees of arrays, lists, tuples, None and "other"
(a type name only). Nothing is ever unpickled or imported: the parent rebuilds plain
float64 arrays from the raw bytes and checks every size and offset before it trusts them.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.course.blake import blake2b

_PREFIX = struct.Struct(">II")
_FLOAT = 8  # bytes per number: every array crosses as little-endian float64
_F8 = np.dtype("<f8")
_DOUBLE = struct.Struct("<d")

# The limits below are the whole of what one student's process can make the parent hold:
# at most MAX_STREAM_BYTES of raw bytes in at most MAX_FRAMES frames, and decoded arrays
# that never take more room than the payload bytes they came in (each array owns its own
# span of the payload, see _Numbers).
MAX_HEADER = 1 << 20  # bytes of JSON header in one frame
MAX_PAYLOAD = 64 << 20  # bytes of numbers in one frame
MAX_FRAME_BYTES = _PREFIX.size + MAX_HEADER + MAX_PAYLOAD
MAX_STREAM_BYTES = 256 << 20  # everything one student's process may send (all its frames)
MAX_ELEMENTS = 1_000_000  # numbers in one array; also the largest single dimension
MAX_NDIM = 8  # dimensions of one array
MAX_DEPTH = 8  # nesting of lists and tuples
MAX_ITEMS = 100_000  # items of one list or tuple
MAX_TEXT = 4000
# Frames in one stream: one per cell, per case called and a few more. Each frame's decoded
# header takes some 30 times its bytes on the wire: 6 million empty frames were 2 GB.
MAX_FRAMES = 500_000


class WireError(Exception):
    """The child sent something that is not a well-formed frame."""


@dataclass(frozen=True)
class Other:
    """A value that is not numbers (a string, a dict, an object): only its type name crosses."""

    type_name: str


@dataclass(frozen=True)
class Seq:
    """A list or tuple of values, rebuilt in the parent."""

    kind: str  # "list" or "tuple"
    items: tuple[Value, ...]

    def __getstate__(self) -> dict[str, object]:
        # The judge's stacked array (compare.stack) is a cache: never pickled with it.
        return {k: v for k, v in self.__dict__.items() if k != "_stacked"}


Value = np.ndarray | Seq | Other | None


# ---------------------------------------------------------------- child side (encoding)


def encode_frame(header: dict[str, Any], values: dict[str, Any]) -> bytes:
    """Header fields plus named values (e.g. "value", "args") encoded as trees and numbers.

    What this writes, `decode_frame` accepts: an array beyond the limits (too many numbers or
    dimensions, or past the frame's room for numbers) crosses as an `Other` naming its size,
    so one huge answer does not cost the student every other one. A header past MAX_HEADER
    raises ValueError (the child reports the value as unencodable).
    """
    chunks: list[bytes] = []
    offset = 0

    # Each node is written as the JSON text json.dumps would give its dict
    # ({"t": "a", "shape": [...], "at": N} and so on), with no dict built and encoded: a
    # frame's values can hold hundreds of small arrays.
    def tree(obj: Any, depth: int) -> str:
        nonlocal offset
        # The usual value first, with no call: a non-empty float64 array within the limits
        # (what the general path below would send, in the same bytes).
        if type(obj) is np.ndarray and obj.dtype is _F8:
            size = obj.size
            room = offset + _FLOAT * size <= MAX_PAYLOAD
            if 0 < size <= MAX_ELEMENTS and obj.ndim <= MAX_NDIM and room:
                chunks.append(obj.tobytes())
                node = _array_node(obj.shape, offset)
                offset += _FLOAT * size
                return node
        if obj is None:
            return '{"t": "none"}'
        if isinstance(obj, list | tuple) and depth < MAX_DEPTH and len(obj) <= MAX_ITEMS:
            kind = "tuple" if isinstance(obj, tuple) else "list"
            items = ", ".join([tree(item, depth + 1) for item in obj])
            return f'{{"t": "{kind}", "items": [{items}]}}'
        if type(obj) is float:  # a Python float is a 0-d float64 array: its own 8 bytes
            if offset + _FLOAT > MAX_PAYLOAD:
                return _other_node("ndarray of 1 numbers (too large to send)")
            chunks.append(_DOUBLE.pack(obj))
            node = _array_node((), offset)
            offset += _FLOAT
            return node
        array = _as_real_array(obj)
        if array is None:
            return _other_node(type_name(obj))
        if not sendable(array, offset):
            return _other_node(f"ndarray of {array.size} numbers (too large to send)")
        data = _little_f8(array)
        chunks.append(data)
        node = _array_node(array.shape, offset)
        offset += len(data)
        return node

    trees = ", ".join([f"{_json_text(key)}: {tree(val, 0)}" for key, val in values.items()])
    fields = _json_text(header)
    text = (f"{fields[:-1]}, " if header else "{") + f'"values": {{{trees}}}}}'
    head = text.encode()
    if len(head) > MAX_HEADER:
        raise ValueError(f"frame header of {len(head)} bytes is over the limit")
    payload = b"".join(chunks)
    return _PREFIX.pack(len(head), len(payload)) + head + payload


_TYPE_NAME = type.__dict__["__name__"]


def type_name(obj: Any) -> str:
    """The name of the object's class as Python itself keeps it: a metaclass of the
    student's may make `__name__` return anything (a list holding itself, an object
    whose str() raises), and what crosses must be a plain string (`plain_text`: the name
    kept may be a str subclass of the notebook's)."""
    return plain_text(_TYPE_NAME.__get__(type(obj), type))


def plain_text(text: str) -> str:
    """`text` as an exact str, without running any code of a str subclass's (its own
    __str__, __getitem__ or __len__): str's own __str__ copies the characters."""
    return text if type(text) is str else str.__str__(text)


def _array_node(shape: tuple[int, ...], at: int) -> str:
    """An array's node, as json.dumps writes {"t": "a", "shape": [...], "at": at}."""
    return f'{{"t": "a", "shape": {list(shape)}, "at": {at}}}'  # a list of ints: JSON's text


def _other_node(name: str) -> str:
    """A value sent by its type name, as json.dumps writes {"t": "other", "type": ...}."""
    return f'{{"t": "other", "type": {_json_text(name)}}}'


def _one_shot_encoder() -> Any:
    """`json.dumps` with its default options, its encoder's options read once: the same
    text, with the same check for cycles each call (a header can hold what student code
    made: an exception's message, a type's `__name__` that returns a list holding itself)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator: json's own Python encoder
        return json.dumps
    encoder = json.JSONEncoder()
    options = (
        encoder.default,
        json.encoder.encode_basestring_ascii,
        None,
        encoder.key_separator,
        encoder.item_separator,
        False,
        False,
        True,
    )

    def text(body: Any) -> str:
        if isinstance(body, str):  # as json.dumps writes a string: no encoder needed
            return str(json.encoder.encode_basestring_ascii(body))
        # A fresh cycle check, as json.dumps makes: without one a cycle recurses until the
        # recursion limit, which student code may have raised past what the C stack holds.
        return "".join(make({}, *options)(body, 0))

    return text


_json_text = _one_shot_encoder()


def _little_f8(array: np.ndarray) -> bytes:
    """The array's numbers as little-endian float64, in C order: tobytes() of a float64
    array already is that (it writes C order whatever the strides), without the copy that
    converting to a contiguous array first would make."""
    if array.dtype == _F8:
        return array.tobytes()
    return np.ascontiguousarray(array, dtype=_F8).tobytes()


def sendable(array: np.ndarray, used: int) -> bool:
    """Whether the parent would take this array whole, with `used` bytes of the payload
    taken (else it crosses as an `Other` naming its size)."""
    size = array.size  # the bound itself unless a dimension is 0
    return (
        array.ndim <= MAX_NDIM
        and (size or _size_bound(array.shape)) <= MAX_ELEMENTS
        and used + _FLOAT * size <= MAX_PAYLOAD
    )


def _size_bound(shape: Sequence[int]) -> int:
    """The product of the dimensions, a zero counted as one: numpy refuses a shape such as
    (0, 2**70), whose size would overflow, even though it holds no numbers."""
    return math.prod(max(n, 1) for n in shape)


def digest(obj: Any) -> str:
    """A short fingerprint of a value as the wire would carry it: the same tree of lists,
    tuples and float64 arrays (shape and bits), the same digest."""
    hasher = blake2b(digest_size=10)
    _feed(hasher, obj, 0)
    return hasher.hexdigest()


def _feed(hasher: Any, obj: Any, depth: int) -> None:
    if obj is None:
        hasher.update(b"n")
    elif isinstance(obj, list | tuple) and depth < MAX_DEPTH and len(obj) <= MAX_ITEMS:
        hasher.update(b"l[" if isinstance(obj, list) else b"t[")
        for item in obj:
            _feed(hasher, item, depth + 1)
        hasher.update(b"]")
    else:
        array = _as_real_array(obj)
        if array is None:
            hasher.update(b"o" + type_name(obj).encode(errors="surrogatepass"))
        else:
            hasher.update(b"a" + repr(array.shape).encode())
            if array.dtype == _F8 and array.flags.c_contiguous:
                hasher.update(array)  # its own bytes, read in place
            else:
                hasher.update(_little_f8(array))


def _as_real_array(obj: Any) -> np.ndarray | None:
    if type(obj) is np.ndarray:  # the common case, without asarray's call
        return obj if obj.dtype.kind in "biuf" else None
    if isinstance(obj, bool | int | float | np.generic | np.ndarray):
        try:
            array = np.asarray(obj)
        except Exception:
            return None
        if array.dtype.kind in "biuf":
            return array
    return None


# ---------------------------------------------------------------- parent side (decoding)


Frame = tuple[dict[str, Any], dict[str, Value]]


class FrameReader:
    """Accumulates bytes from the child and yields decoded frames; junk raises WireError.

    A frame declaring more than MAX_HEADER or MAX_PAYLOAD bytes is refused as soon as its
    8-byte prefix arrives, and the stream as soon as it passes `max_total` bytes: neither is
    waited for, nor held.
    """

    def __init__(self, max_total: int = MAX_STREAM_BYTES) -> None:
        self._buffer = bytearray()
        self._total = 0
        self._max_total = max_total
        self._frames = 0

    def feed(self, data: bytes) -> list[Frame]:
        """Take the next bytes; return every frame they complete."""
        self._total += len(data)
        if self._total > self._max_total:
            raise WireError(f"the student process sent more than {self._max_total >> 20} MB")
        if self._buffer:
            self._buffer += data
        # All of a child's output usually comes in one piece: read it where it is, no copy.
        source: bytes | bytearray = self._buffer or data
        frames: list[Frame] = []
        start = 0
        view = memoryview(source)
        try:
            while (end := _frame_end(view, start)) is not None:
                head_len = _PREFIX.unpack_from(view, start)[0]
                body = start + _PREFIX.size + head_len
                # bytes(...) copies, so no slice of `view` outlives it (release would fail).
                frames.append(
                    decode_frame(bytes(view[start + _PREFIX.size : body]), bytes(view[body:end]))
                )
                start = end
                self._frames += 1
                if self._frames > MAX_FRAMES:
                    raise WireError(f"the student process sent more than {MAX_FRAMES} frames")
        finally:
            view.release()
        if start or source is data:
            self._buffer = bytearray(source[start:])
        return frames

    @property
    def pending(self) -> int:
        """How many bytes of an incomplete frame are held for the next feed."""
        return len(self._buffer)


def _frame_end(view: memoryview, start: int) -> int | None:
    """Where the frame starting at `start` ends; None while it is incomplete."""
    if len(view) - start < _PREFIX.size:
        return None
    head_len, payload_len = _PREFIX.unpack_from(view, start)
    if head_len > MAX_HEADER or payload_len > MAX_PAYLOAD:
        raise WireError("frame larger than the limits")
    end: int = start + _PREFIX.size + head_len + payload_len
    return end if end <= len(view) else None


def split_frames(data: bytes) -> list[tuple[bytes, bytes]]:
    """Whole frames, each as its header and payload bytes, not yet decoded (a file of frames
    whose parts are decoded when needed); WireError for a frame cut short or too large."""
    spans: list[tuple[bytes, bytes]] = []
    start = 0
    with memoryview(data) as view:
        while start < len(data):
            end = _frame_end(view, start)
            if end is None:
                raise WireError("frame cut short")
            body = start + _PREFIX.size + _PREFIX.unpack_from(view, start)[0]
            spans.append((data[start + _PREFIX.size : body], data[body:end]))
            start = end
    return spans


def decode_frame(head: bytes, payload: bytes) -> Frame:
    """The header and the values of one frame; anything malformed raises WireError only."""
    if len(head) > MAX_HEADER or len(payload) > MAX_PAYLOAD:
        raise WireError("frame larger than the limits")
    try:
        body = json.loads(head.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise WireError(f"header is not JSON: {clean_text(str(exc), 200)}") from None
    if not isinstance(body, dict):
        raise WireError("header is not an object")
    raw_values = body.pop("values", {})
    if not isinstance(raw_values, dict):
        raise WireError("values is not an object")
    numbers = _Numbers(payload)
    try:
        values = {str(k): _rebuild(v, numbers, 0) for k, v in raw_values.items()}
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # The checks are meant to be complete (tests feed the decoder junk): this keeps a
        # case they miss the student's fault (a WireError), not a fault of the grader's.
        raise WireError(f"malformed value ({type(exc).__name__})") from None
    numbers.check_all_used()
    return body, values


class _Numbers:
    """The payload, handed out in order: each array must start where the one before it
    ended. No two arrays share bytes, so the decoded arrays never hold more than the payload
    (a forged header could otherwise point a thousand arrays at the same 64 MB).

    The payload is read as numbers once per frame (no copy); each array is a copy of its own
    span, so that an array kept (a reference's output) keeps no other array's bytes alive."""

    def __init__(self, payload: bytes) -> None:
        self._payload = payload
        self._used = 0
        self._flat: np.ndarray | None = None

    def array(self, node: dict[str, Any]) -> np.ndarray:
        """The array an `a` node declares: its shape checked (as `_shape`), then its numbers
        taken where the one before it ended, as an array of its own (a copy of its span).
        One call per array: a child's answer is mostly many small arrays."""
        shape = node.get("shape")
        if type(shape) is not list or len(shape) > MAX_NDIM:
            raise WireError(f"malformed array shape (more than {MAX_NDIM} dimensions?)")
        count = bound = 1
        for n in shape:
            if type(n) is not int or n < 0:
                raise WireError("malformed array shape")
            count *= n
            bound *= n or 1  # as _size_bound: a zero counted as one
        if bound > MAX_ELEMENTS:
            raise WireError(f"array shape over the limit of {MAX_ELEMENTS} numbers")
        at = node.get("at")
        if type(at) is not int or at != self._used:
            raise WireError("array not where the one before it ended")
        end = at + _FLOAT * count
        if end > len(self._payload):
            raise WireError("array outside the payload")
        self._used = end
        flat = self._flat
        if flat is None:
            whole = len(self._payload) // _FLOAT
            flat = self._flat = np.frombuffer(self._payload, "<f8", whole)
        return flat[at // _FLOAT : end // _FLOAT].astype(np.float64).reshape(shape)

    def check_all_used(self) -> None:
        if self._used != len(self._payload):
            raise WireError("payload bytes that no array claims")


def _rebuild(node: Any, numbers: _Numbers, depth: int) -> Value:
    if depth > MAX_DEPTH or type(node) is not dict:
        raise WireError("malformed value tree")
    kind = node.get("t")
    if kind == "a":  # the usual node first
        return numbers.array(node)
    if kind in ("list", "tuple"):
        items = node.get("items")
        if type(items) is not list or len(items) > MAX_ITEMS:
            raise WireError("malformed sequence")
        depth += 1
        if depth > MAX_DEPTH:  # each item refused as too deep, as _rebuild would
            return Seq(kind, tuple([_rebuild(i, numbers, depth) for i in items]))
        # An array item is built here, without a call of _rebuild of its own (the checks
        # and their order are the same).
        array = numbers.array
        return Seq(
            kind,
            tuple(
                [
                    array(i)
                    if type(i) is dict and i.get("t") == "a"
                    else _rebuild(i, numbers, depth)
                    for i in items
                ]
            ),
        )
    if kind == "none":
        return None
    if kind == "other":
        type_name = node.get("type")
        if not isinstance(type_name, str):
            raise WireError("malformed type name")
        return Other(clean_text(type_name, 80))
    shown = clean_text(kind, 40) if isinstance(kind, str) else type(kind).__name__
    raise WireError(f"unknown node type {shown}")


def clean_text(value: Any, limit: int = MAX_TEXT) -> str:
    """Text from the child, bounded and stripped of control characters other than newline."""
    text = value if isinstance(value, str) else repr(value)
    text = "".join(ch if ch == "\n" or ch >= " " else "?" for ch in text[: limit + 1])
    return text if len(text) <= limit else text[:limit] + "…"
