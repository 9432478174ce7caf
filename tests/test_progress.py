"""Progress: a live bar (count, rate, time left) on a terminal, plain lines in a log."""

from __future__ import annotations

import io
import time

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


def test_a_submission_without_a_grade_is_counted_apart() -> None:
    log, screen = io.StringIO(), Terminal()
    for stream in (log, screen):
        progress = Progress(3, stream, every=3600.0, tick=None)
        for graded in (True, False, True):
            progress.step("x", graded)
        progress.close()
    assert log.getvalue().startswith("graded 3/3, 1 of them not graded (")
    assert "1 of them not graded" in screen.getvalue().split("\r")[-1]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def left_in(line: str) -> int:
    return int(line.split("about ")[1].split(" s left")[0])


def test_the_time_left_counts_a_slow_submission_while_it_runs() -> None:
    clock, log = Clock(), io.StringIO()
    progress = Progress(10, log, every=5.0, tick=None, clock=clock)
    for _ in range(9):  # nine quick ones, a tenth of a second each
        clock.now += 0.1
        progress.step()
    assert progress.seconds_left() < 1
    clock.now += 20.0  # the last one runs into its 20 s limit
    progress.tick()
    lines = log.getvalue().splitlines()
    assert lines[-1].startswith("graded 9/10")
    assert left_in(lines[-1]) == 20  # as long again as it has run: not "0 s left"
    clock.now += 1.0
    progress.step()
    assert left_in(log.getvalue().splitlines()[-1]) == 0


def test_before_any_submission_finishes_the_time_left_is_not_zero() -> None:
    clock, log = Clock(), io.StringIO()
    progress = Progress(4, log, every=1.0, tick=None, clock=clock)
    clock.now += 3.0
    progress.tick()
    assert left_in(log.getvalue().splitlines()[-1]) == 3
    # with some done, the rest at the rate so far: 2 done in 4 s, 2 left
    clock.now += 1.0
    progress.step()
    progress.step()
    assert progress.seconds_left() == 4.0


def test_the_bar_shows_the_time_left_and_the_ticker_redraws_it() -> None:
    screen = Terminal()
    progress = Progress(3, screen, tick=0.01)
    progress.step("ada")
    deadline = time.monotonic() + 5.0
    drawn = screen.getvalue().count("\r")
    while screen.getvalue().count("\r") <= drawn + 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    progress.close()
    assert screen.getvalue().count("\r") > drawn + 2  # redrawn with nothing finishing
    assert "s left" in screen.getvalue().split("\r")[-1]
