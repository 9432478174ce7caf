"""Progress: a live bar (count, rate, time left) on a terminal, plain lines in a log."""

from __future__ import annotations

import io

from grader.batch.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_live_bar() -> None:
    screen = Terminal()
    progress = Progress(3, screen)
    for name in ("ada", "bo", "cy"):
        progress.step(name)
    progress.close()
    shown = screen.getvalue()
    assert "\r" in shown  # redrawn in place
    last = shown.rstrip().split("\r")[-1]
    assert "3/3" in last and "100%" in last and "nb/s" in last and "cy" in last


def test_a_log_gets_plain_lines_and_always_the_last_one() -> None:
    log = io.StringIO()
    progress = Progress(4, log, every=3600.0)
    for _ in range(4):
        progress.step()
    lines = log.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("graded 4/4 (")
    assert "\r" not in log.getvalue()
    log = io.StringIO()
    progress = Progress(2, log, every=0.0)
    progress.step()
    progress.step()
    assert [line.split(" (")[0] for line in log.getvalue().splitlines()] == [
        "graded 1/2",
        "graded 2/2",
    ]
