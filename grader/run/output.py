"""A child's frames as its worker holds them: in a mapping of their own, never in the heap.

The next student's child is forked from the worker and gets a copy of all its memory, freed
memory included: a classmate's frames read into a `bytearray` (and copied into `bytes` for
the reply) stayed there after they were freed, and a notebook that searched its own memory
found every answer of the student before it, with the arguments of each call. Here the
frames are read straight into an anonymous mapping (`os.readv`), written to the grader
from it, and the mapping is unmapped before the worker forks again: its pages go back to
the kernel, which hands no process a page without clearing it.
"""

from __future__ import annotations

import mmap
import os

CHUNK = 1 << 16  # bytes read at a time


class Output:
    """Up to `limit` bytes read from a pipe (one chunk more may arrive before the caller
    sees that the limit is passed), kept in a mapping that `close` unmaps."""

    def __init__(self, limit: int) -> None:
        """An empty buffer of `limit` bytes (the mapping's pages are taken as they fill)."""
        self._map = mmap.mmap(-1, limit + CHUNK)
        self._view = memoryview(self._map)
        self.size = 0

    def __len__(self) -> int:
        """How many bytes it holds."""
        return self.size

    def read(self, fd: int) -> int:
        """One read from `fd` into the buffer's end; how many bytes came (0: end of file)."""
        got = os.readv(fd, [self._view[self.size : self.size + CHUNK]])
        self.size += got
        return got

    def startswith(self, prefix: bytes) -> bool:
        """Whether the bytes held start with `prefix`."""
        return self.size >= len(prefix) and self._view[: len(prefix)] == prefix

    def endswith(self, suffix: bytes) -> bool:
        """Whether the bytes held end with `suffix`."""
        start = self.size - len(suffix)
        return start >= 0 and self._view[start : self.size] == suffix

    def drop_end(self, count: int) -> None:
        """Forget the last `count` bytes (or all of them, when fewer are held)."""
        self.size = max(self.size - count, 0)

    def clear(self) -> None:
        """Forget every byte held."""
        self.size = 0

    def view(self, start: int = 0) -> memoryview:
        """The bytes held from `start` on, in place (release it before `close`)."""
        return self._view[start : self.size]

    def close(self) -> None:
        """Unmap the buffer: what it held is gone from this process."""
        self._view.release()
        self._map.close()
