"""The worker's pipe protocol, both ends: a message is a 4-byte length, a JSON header, then
whatever raw bytes the header's `size` announces (the grader's side reads them with a
deadline, workers.py; the worker's side and the child block, as nothing else is theirs to do).
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable
from typing import Any

MAX_HEADER = 1 << 16
_LENGTH = struct.Struct(">I")


def read_exact(fd: int, size: int, wait: Callable[[], None] | None = None) -> bytes:
    """Exactly `size` bytes from `fd`, or EOFError; `wait` runs before each read (the
    grader's side waits there with its deadline)."""
    parts, left = [], size
    while left:
        if wait is not None:
            wait()
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the pipe")
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def write_all(fd: int, data: bytes | memoryview) -> None:
    """All of `data` to `fd` (a pipe may take it in parts)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_message(fd: int) -> dict[str, Any]:
    """One length-prefixed JSON header (bounded; a bad one is a ValueError)."""
    (size,) = _LENGTH.unpack(read_exact(fd, _LENGTH.size))
    if size > MAX_HEADER:
        raise ValueError(f"header of {size} bytes")
    header = json.loads(read_exact(fd, size))
    if not isinstance(header, dict):
        raise ValueError("header is not an object")
    return header


def encode_message(header: dict[str, Any], payload: bytes = b"") -> bytes:
    """One message: the header's length, the header as JSON, then the payload."""
    head = json.dumps(header).encode()
    return _LENGTH.pack(len(head)) + head + payload
