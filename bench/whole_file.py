"""What writing each output whole costs a batch (grader/render/whole_file.py): a feedback
page written to a temporary name and renamed onto its own, against the same page written in
place (open with O_TRUNC, write, close: how pages were written before), against the whole
write with an fsync before the rename (what a page would cost to survive a power cut too), and
against the whole write that removes the old page before the rename (see `whole_unlinked`).

Usage: python bench/whole_file.py [--pages 1000] [--rounds 7] [--folder DIR]
Writes `--pages` pages of a typical size into a fresh folder (new pages), then other bytes
over them (a rerun's changed pages), then the same bytes again (a rerun's kept pages, which
a whole write leaves alone), each way in turn, and prints the median wall time per page of
each way and, in brackets, its cost over writing in place, measured in the same run. `--folder`: a
folder on the file system the batch writes to (default: the system's temporary folder).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from grader.render import whole_file

PAGE = b"<!DOCTYPE html>" + b"x" * 3500 + b"</html>"  # the size of a demo class's page
OTHER = PAGE.replace(b"x", b"y", 1)  # another page of the same size
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
        if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY:  # the page, not a read
            os.fsync(fd)
        real_close(fd)

    whole_file.os.close = synced_close  # type: ignore[assignment]
    try:
        whole_file.write_bytes(path, data)
    finally:
        whole_file.os.close = real_close


def whole_unlinked(path: Path, data: bytes) -> None:
    """The page written whole, the old one removed before the rename: ext4 pushes a file
    renamed over another to the disk at once (auto_da_alloc), not one renamed onto no file;
    the price is a moment in which the page is absent (and none, if killed then)."""
    real_replace = os.replace

    def unlinked_replace(source: Path, target: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target)
        real_replace(source, target)

    whole_file.os.replace = unlinked_replace  # type: ignore[assignment]
    try:
        whole_file.write_bytes(path, data)
    finally:
        whole_file.os.replace = real_replace


WAYS: dict[str, Callable[[Path, bytes], None]] = {
    "in place (before)": in_place,
    "whole (now)": whole_file.write_bytes,
    "whole + fsync": whole_synced,
    "whole, unlink first": whole_unlinked,
}


def per_page(way: Callable[[Path, bytes], None], folder: Path, pages: int) -> list[float]:
    """Seconds per page, writing `pages` new pages into `folder`, then other bytes over them,
    then the same bytes again (a rerun's kept pages)."""
    names = [folder / f"student{i:05d}.html" for i in range(pages)]
    times = []
    for page in (PAGE, OTHER, OTHER):
        start = time.perf_counter()
        for name in names:
            way(name, page)
        times.append((time.perf_counter() - start) / pages)
    return times


def main() -> None:
    """Measure each way in turn, round after round, and print the medians and the costs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()
    times: dict[str, list[list[float]]] = {name: [] for name in WAYS}
    for _ in range(args.rounds):
        for name, way in WAYS.items():
            folder = Path(tempfile.mkdtemp(prefix="whole-file-", dir=args.folder))
            try:
                times[name].append(per_page(way, folder, args.pages))
            finally:
                shutil.rmtree(folder)
    medians = {
        name: [statistics.median(t[i] for t in runs) for i in range(3)]
        for name, runs in times.items()
    }
    base = medians["in place (before)"]
    print(f"{args.pages} pages of {len(PAGE)} bytes, median of {args.rounds} rounds, µs per page")
    print(f"  {'':19}  {'new':>15}  {'other bytes':>15}  {'same bytes':>15}")
    for name, values in medians.items():
        cells = [
            f"{v * 1e6:6.1f} ({(v - b) * 1e6:+6.1f})" for v, b in zip(values, base, strict=True)
        ]
        print(f"  {name:19}  " + "  ".join(f"{c:>15}" for c in cells))


if __name__ == "__main__":
    main()
