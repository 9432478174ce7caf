"""Progress of a batch: a live bar on a terminal, a plain line every few seconds in CI logs."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from grader.render.escape import one_line

if TYPE_CHECKING:
    from tqdm import tqdm


class Progress:
    """Progress of a batch on `stream`: a tqdm bar on a terminal, else a plain line at most every
    `every` seconds and at the end."""

    def __init__(self, total: int, stream: TextIO | None = None, every: float = 5.0) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.every = every
        self.done = 0
        self.started = self.last = time.monotonic()
        self.bar: tqdm[Any] | None = None
        if self.stream.isatty() and total:
            from tqdm import tqdm  # only on a terminal: CI logs get plain lines without it

            self.bar = tqdm(total=total, unit="nb", file=self.stream, dynamic_ncols=True)

    def step(self, label: str = "") -> None:
        """Count one more submission done; `label` (cut to 30 characters) shows on the bar."""
        self.done += 1
        if self.bar is not None:
            self.bar.set_postfix_str(one_line(label[:30]), refresh=False)
            self.bar.update(1)
            return
        now = time.monotonic()
        if now - self.last >= self.every or self.done == self.total:
            self.last = now
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def line(self) -> str:
        """The plain progress line: done of total, rate, time elapsed and time left (estimated)."""
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate else 0.0
        return (
            f"graded {self.done}/{self.total} ({rate:.1f}/s, {elapsed:.1f} s elapsed, "
            f"about {left:.0f} s left)"
        )

    def close(self) -> None:
        """Close the bar, if there is one."""
        if self.bar is not None:
            self.bar.close()
