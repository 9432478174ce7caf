"""Progress of a batch: a live bar on a terminal, a plain line every few seconds in CI logs.

The time left counts slow submissions: it is never less than the time the submission that has
been running longest still needs if it takes as long again as it has so far (the time since
the last one finished), and it is recomputed while nothing finishes (a ticker redraws it every
`tick` seconds), so a notebook that runs into its time limit shows the estimate grow instead of
"0 s left".
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from grader.render.escape import one_line

if TYPE_CHECKING:
    from tqdm import tqdm

# tqdm's own bar, without its time left (which only moves when a submission finishes).
BAR_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, {rate_fmt}{postfix}]"


class Progress:
    """Progress of a batch on `stream`: a tqdm bar on a terminal, else a plain line at most every
    `every` seconds and at the end. `tick`: seconds between redraws while nothing finishes
    (None: none); `clock`: the time source (tests give their own)."""

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        every: float = 5.0,
        tick: float | None = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.every = every
        self.clock = clock
        self.done = 0
        self.ungraded = 0  # done, but no grade: an unreadable notebook, a failed run
        self.label = ""
        self.started = self.last = self.finished_last = clock()
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.bar: tqdm[Any] | None = None
        if self.stream.isatty() and total:
            from tqdm import tqdm  # only on a terminal: CI logs get plain lines without it

            self.bar = tqdm(
                total=total, unit="nb", file=self.stream, dynamic_ncols=True, bar_format=BAR_FORMAT
            )
        if tick is not None and total:
            threading.Thread(target=self._ticker, args=(tick,), daemon=True).start()

    def step(self, label: str = "", graded: bool = True) -> None:
        """Count one more submission done (`graded`: with a grade, else counted apart as not
        graded); `label` (cut to 30 characters) shows on the bar."""
        with self.lock:
            self.done += 1
            self.ungraded += not graded
            self.finished_last = self.clock()
            self.label = one_line(label[:30])
            if self.bar is not None:
                self.bar.set_postfix_str(self._postfix(), refresh=False)
                self.bar.update(1)
                return
            if self.finished_last - self.last >= self.every or self.done == self.total:
                self._write_line()

    def tick(self) -> None:
        """Redraw with the time left as of now, while nothing has finished: the bar at once, the
        plain line when `every` seconds have passed since the last one."""
        with self.lock:
            if self.done >= self.total:
                return
            if self.bar is not None:
                self.bar.set_postfix_str(self._postfix(), refresh=True)
            elif self.clock() - self.last >= self.every:
                self._write_line()

    def seconds_left(self) -> float:
        """The time left: the remaining submissions at the rate so far, but never less than
        the submission running longest may need (as long again as it has run so far)."""
        if self.done >= self.total:
            return 0.0
        now = self.clock()
        elapsed = max(now - self.started, 1e-9)
        at_rate = (self.total - self.done) * elapsed / self.done if self.done else 0.0
        return max(at_rate, now - self.finished_last)

    def line(self) -> str:
        """The plain progress line: done of total, rate, time elapsed and time left (estimated)."""
        elapsed = max(self.clock() - self.started, 1e-9)
        rate = self.done / elapsed
        return (
            f"graded {self.done}/{self.total}{self._not_graded()} ({rate:.1f}/s, "
            f"{elapsed:.1f} s elapsed, "
            f"about {self.seconds_left():.0f} s left)"
        )

    def close(self) -> None:
        """Stop the ticker and close the bar, if there is one."""
        self.stopped.set()
        with self.lock:
            if self.bar is not None:
                self.bar.close()

    def _not_graded(self) -> str:
        return f", {self.ungraded} of them not graded" if self.ungraded else ""

    def _postfix(self) -> str:
        left = f"about {self.seconds_left():.0f} s left{self._not_graded()}"
        return f"{self.label}, {left}" if self.label else left

    def _write_line(self) -> None:
        self.last = self.clock()
        self.stream.write(self.line() + "\n")
        self.stream.flush()

    def _ticker(self, seconds: float) -> None:
        while not self.stopped.wait(seconds) and self.done < self.total:
            self.tick()
