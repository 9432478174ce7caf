"""What keeping a child's frames out of the worker's heap costs, measured in one run.

Usage: python bench/frame_buffer.py [--runs 2000]

  mapped  what the worker does now (grader/run/output.py): the frames read from the child's
          pipe into an anonymous mapping of their own, a view of them taken (the worker
          writes the reply from it) and the mapping unmapped
  heap    what it did before: a bytearray grown by each read, copied into bytes

For a small answer (4 KB) and a large one (60 KB, under the pipe's 64 KB), prints the median
microseconds per child of each and their ratio; a sandboxed child costs some milliseconds
from fork to reap (bench/child_cost.py), so either is a small part of it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

from grader.run.output import Output
from grader.run.sandbox import MAX_OUTPUT


def _filled_pipe(data: bytes) -> int:
    read_fd, write_fd = os.pipe()
    os.write(write_fd, data)
    os.close(write_fd)
    return read_fd


def mapped(data: bytes) -> int:
    """The frames into a mapping, viewed, unmapped; how many bytes."""
    read_fd = _filled_pipe(data)
    output = Output(MAX_OUTPUT)
    while output.read(read_fd):
        pass
    view = output.view()
    size = len(view)
    view.release()
    output.close()
    os.close(read_fd)
    return size


def heap(data: bytes) -> int:
    """The frames into a growing bytearray, copied into bytes; how many bytes."""
    read_fd = _filled_pipe(data)
    buffer = bytearray()
    while chunk := os.read(read_fd, 1 << 16):
        buffer += chunk
    raw = bytes(buffer)
    os.close(read_fd)
    return len(raw)


def median_us(how: Callable[[bytes], int], data: bytes, runs: int) -> float:
    """The median microseconds of `how` on `data` over `runs` runs."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        how(data)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main() -> None:
    """Measure both ways on a small and a large answer and print the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    runs = parser.parse_args().runs
    for size in (4096, 60_000):
        data = os.urandom(size)
        now, before = median_us(mapped, data, runs), median_us(heap, data, runs)
        print(
            f"{size:>6} bytes: mapped {now:6.1f} us, heap {before:6.1f} us, "
            f"ratio {now / before:4.2f} (+{now - before:.1f} us per child)"
        )


if __name__ == "__main__":
    main()
