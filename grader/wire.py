"""The number-only format between the student's process and the grader's.

A frame is `>II` (header length, payload length), a JSON header, then a payload of
little-endian float64 numbers. Values are trees of arrays, lists, tuples, None and "other"
(a type name only). Nothing is ever unpickled or imported: the parent rebuilds plain
float64 arrays from the raw bytes and checks every size and offset before it trusts them.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

_PREFIX = struct.Struct(">II")
MAX_HEADER = 1 << 20
MAX_PAYLOAD = 64 << 20
MAX_DEPTH = 8
MAX_ITEMS = 100_000
MAX_TEXT = 4000


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


Value = np.ndarray | Seq | Other | None


# ---------------------------------------------------------------- child side (encoding)


def encode_frame(header: dict[str, Any], values: dict[str, Any]) -> bytes:
    """Header fields plus named values (e.g. "value", "args") encoded as trees and numbers."""
    chunks: list[bytes] = []
    offset = [0]

    def tree(obj: Any, depth: int) -> Any:
        if obj is None:
            return {"t": "none"}
        if isinstance(obj, list | tuple) and depth < MAX_DEPTH and len(obj) <= MAX_ITEMS:
            kind = "tuple" if isinstance(obj, tuple) else "list"
            return {"t": kind, "items": [tree(item, depth + 1) for item in obj]}
        array = _as_real_array(obj)
        if array is None:
            return {"t": "other", "type": type(obj).__name__}
        data = np.ascontiguousarray(array, dtype="<f8").tobytes()  # one copy, little-endian
        chunks.append(data)
        node = {"t": "a", "shape": list(array.shape), "at": offset[0]}
        offset[0] += len(data)
        return node

    body = dict(header)
    body["values"] = {key: tree(val, 0) for key, val in values.items()}
    head = json.dumps(body).encode()
    payload = b"".join(chunks)
    return _PREFIX.pack(len(head), len(payload)) + head + payload


def digest(obj: Any) -> str:
    """A short fingerprint of a value as the wire would carry it: the same tree of lists,
    tuples and float64 arrays (shape and bits), the same digest."""
    hasher = hashlib.blake2b(digest_size=10)
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
            hasher.update(b"o" + type(obj).__name__.encode())
        else:
            hasher.update(b"a" + repr(array.shape).encode())
            hasher.update(np.ascontiguousarray(array, dtype="<f8").tobytes())


def _as_real_array(obj: Any) -> np.ndarray | None:
    if isinstance(obj, bool | int | float | np.generic | np.ndarray):
        try:
            array = np.asarray(obj)
        except Exception:
            return None
        if array.dtype.kind in "biuf":
            return array
    return None


# ---------------------------------------------------------------- parent side (decoding)


class FrameReader:
    """Accumulates bytes from the child and yields decoded frames; junk raises WireError."""

    def __init__(self, max_total: int = 256 << 20) -> None:
        self._buffer = bytearray()
        self._total = 0
        self._max_total = max_total

    def feed(self, data: bytes) -> list[tuple[dict[str, Any], dict[str, Value]]]:
        self._total += len(data)
        if self._total > self._max_total:
            raise WireError(f"the student process sent more than {self._max_total >> 20} MB")
        self._buffer.extend(data)
        frames = []
        while len(self._buffer) >= _PREFIX.size:
            head_len, payload_len = _PREFIX.unpack_from(self._buffer)
            if head_len > MAX_HEADER or payload_len > MAX_PAYLOAD:
                raise WireError("frame larger than the limits")
            end = _PREFIX.size + head_len + payload_len
            if len(self._buffer) < end:
                break
            head = bytes(self._buffer[_PREFIX.size : _PREFIX.size + head_len])
            payload = bytes(self._buffer[_PREFIX.size + head_len : end])
            del self._buffer[:end]
            frames.append(decode_frame(head, payload))
        return frames

    @property
    def pending(self) -> int:
        return len(self._buffer)


def decode_frame(head: bytes, payload: bytes) -> tuple[dict[str, Any], dict[str, Value]]:
    try:
        body = json.loads(head.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise WireError(f"header is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise WireError("header is not an object")
    raw_values = body.pop("values", {})
    if not isinstance(raw_values, dict):
        raise WireError("values is not an object")
    values = {str(k): _rebuild(v, payload, 0) for k, v in raw_values.items()}
    return body, values


def _rebuild(node: Any, payload: bytes, depth: int) -> Value:
    if depth > MAX_DEPTH or not isinstance(node, dict):
        raise WireError("malformed value tree")
    kind = node.get("t")
    if kind == "none":
        return None
    if kind == "other":
        return Other(clean_text(node.get("type"), 80))
    if kind in ("list", "tuple"):
        items = node.get("items")
        if not isinstance(items, list) or len(items) > MAX_ITEMS:
            raise WireError("malformed sequence")
        return Seq(kind, tuple(_rebuild(i, payload, depth + 1) for i in items))
    if kind == "a":
        return _array(node, payload)
    raise WireError(f"unknown node type {kind!r}")


def _array(node: dict[str, Any], payload: bytes) -> np.ndarray:
    shape, at = node.get("shape"), node.get("at")
    if not isinstance(shape, list) or len(shape) > 32 or not isinstance(at, int):
        raise WireError("malformed array header")
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise WireError("malformed array shape")
    count = math.prod(shape)
    if at < 0 or count < 0 or at + 8 * count > len(payload):
        raise WireError("array outside the payload")
    flat = np.frombuffer(payload, dtype="<f8", count=count, offset=at)
    return np.array(flat, dtype=np.float64).reshape(shape)


def clean_text(value: Any, limit: int = MAX_TEXT) -> str:
    """Text from the child, bounded and stripped of control characters other than newline."""
    text = value if isinstance(value, str) else repr(value)
    text = "".join(ch if ch == "\n" or ch >= " " else "?" for ch in text[: limit + 1])
    return text if len(text) <= limit else text[:limit] + "…"
