"""What writing each output whole costs a batch (grader/render/whole_file.py): a feedback
page written to a temporary name and renamed onto its own, against the same page written in
place (open with O_TRUNC, write, close: how pages were written before), and against the whole
write with an fsync before the rename (what a page would cost to survive a power cut too).

Usage: python bench/whole_file.py [--pages 1000] [--rounds 7] [--folder DIR]
Writes `--pages` pages of a typical size into a fresh folder (new pages) and again over them
(a rerun's rewritten pages), each way in turn, and prints the median wall time per page of
each way and each one's cost over writing in place, measured in the same run. `--folder`: a
folder on the file system the batch writes to (default: the system's temporary folder).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from grader.render import whole_file

PAGE = b"<!DOCTYPE html>" + b"x" * 3500 + b"</html>"  # the size of a demo class's page
_IN_PLACE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)


def in_place(path: Path, data: bytes) -> None:
    """The page written over its own name, as pages were before."""
    fd = os.open(path, _IN_PLACE, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def whole_synced(path: Path, data: bytes) -> None:
    """The page written whole, its data on the disk before the rename."""
    real_close = os.close

    def synced_close(fd: int) -> None:
        os.fsync(fd)
        real_close(fd)

    whole_file.os.close = synced_close  # type: ignore[assignment]
    try:
        whole_file.write_bytes(path, data)
    finally:
        whole_file.os.close = real_close


WAYS: dict[str, Callable[[Path, bytes], None]] = {
    "in place (before)": in_place,
    "whole (now)": whole_file.write_bytes,
    "whole + fsync": whole_synced,
}


def per_page(way: Callable[[Path, bytes], None], folder: Path, pages: int) -> tuple[float, float]:
    """Seconds per page, writing `pages` new pages into `folder`, then over them again."""
    names = [folder / f"student{i:05d}.html" for i in range(pages)]
    start = time.perf_counter()
    for name in names:
        way(name, PAGE)
    new = time.perf_counter() - start
    start = time.perf_counter()
    for name in names:
        way(name, PAGE)
    again = time.perf_counter() - start
    return new / pages, again / pages


def main() -> None:
    """Measure each way in turn, round after round, and print the medians and the costs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in WAYS}
    for _ in range(args.rounds):
        for name, way in WAYS.items():
            folder = Path(tempfile.mkdtemp(prefix="whole-file-", dir=args.folder))
            try:
                times[name].append(per_page(way, folder, args.pages))
            finally:
                shutil.rmtree(folder)
    base = [statistics.median(t[i] for t in times["in place (before)"]) for i in (0, 1)]
    print(f"{args.pages} pages of {len(PAGE)} bytes, median of {args.rounds} rounds, per page:")
    for name in WAYS:
        new, again = (statistics.median(t[i] for t in times[name]) for i in (0, 1))
        print(
            f"  {name:18} new {new * 1e6:7.1f} µs (+{(new - base[0]) * 1e6:6.1f}),"
            f" rewritten {again * 1e6:7.1f} µs (+{(again - base[1]) * 1e6:6.1f})"
        )


if __name__ == "__main__":
    main()
