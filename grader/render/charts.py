"""The report's two charts, as geometry for inline SVG (drawn by `templates/charts.svg.j2`).

No plotting library: importing and running one cost half a second of every `grader grade`,
more than grading a class of twenty. Here a chart is a few rectangles and labels.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

WIDTH = 640
LEFT = 48  # room for the axis labels
RIGHT = 16
TOP = 28  # room for the title
BOTTOM = 40
ROW = 26  # height of one bar of the pass-rate chart


@dataclass(frozen=True)
class Bar:
    """One bar of a chart, in pixels, with its label and hover text."""

    x: float
    y: float
    width: float
    height: float
    label: str  # shown at the end of the bar
    hint: str  # shown on hover


@dataclass(frozen=True)
class Tick:
    """One labelled tick on an axis."""

    position: float  # along its axis, in pixels
    label: str


@dataclass(frozen=True)
class Chart:
    """A bar chart laid out in pixels, for the template to draw as SVG."""

    title: str
    x_label: str
    y_label: str
    width: int
    height: int
    plot: tuple[float, float, float, float]  # left, top, width, height of the drawing area
    bars: tuple[Bar, ...]
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    horizontal: bool


def bin_counts(scores: Sequence[float], max_score: float, bins: int) -> list[int]:
    """Scores per bin of equal width over [0, max_score]; the last bin includes its end."""
    top = max_score or 1.0
    counts = [0] * bins
    for score in scores:
        index = int(min(max(score, 0.0), top) / top * bins)
        counts[min(index, bins - 1)] += 1
    return counts


def _nice_step(largest: int) -> int:
    """A tick step giving at most about six ticks: 1, 2, 5, 10, 20, 50…"""
    step, factors = 1, itertools.cycle((2, 2.5, 2))
    while largest / step > 6:
        step = int(step * next(factors))
    return step


def score_histogram(scores: Sequence[float], max_score: float) -> Chart:
    """The class's scores as a histogram of up to 20 bins from 0 to `max_score`."""
    bins = max(1, min(20, int(max_score) * 2 or 1))
    counts = bin_counts(scores, max_score, bins)
    height = 260
    plot = (LEFT, TOP, WIDTH - LEFT - RIGHT, height - TOP - BOTTOM)
    left, top, inner_w, inner_h = plot
    tallest = max(counts) or 1
    step = _nice_step(tallest)
    scale = inner_h / (tallest + step / 2)
    slot = inner_w / bins
    top_score = max_score or 1.0
    bars = []
    for i, count in enumerate(counts):
        low, high = top_score * i / bins, top_score * (i + 1) / bins
        bar_h = count * scale
        bars.append(
            Bar(
                x=left + i * slot + 1,
                y=top + inner_h - bar_h,
                width=max(slot - 2, 1),
                height=bar_h,
                label=str(count) if count else "",
                hint=f"{count} student{'' if count == 1 else 's'} with {low:g} to {high:g} points",
            )
        )
    x_ticks = tuple(Tick(left + inner_w * k / 4, f"{top_score * k / 4:g}") for k in range(5))
    y_ticks = tuple(Tick(top + inner_h - n * scale, str(n)) for n in range(0, tallest + 1, step))
    return Chart(
        title=f"Scores of {len(scores)} students (out of {max_score:g})",
        x_label="points",
        y_label="students",
        width=WIDTH,
        height=height,
        plot=plot,
        bars=tuple(bars),
        x_ticks=x_ticks,
        y_ticks=y_ticks,
        horizontal=False,
    )


def pass_rates(names: Sequence[str], rates: Sequence[float]) -> Chart:
    """One horizontal bar per function: the share of students (0..1) who pass it."""
    label_room = 8 + 7 * max((len(n) for n in names), default=0)
    left = max(LEFT, min(label_room, WIDTH // 2))
    height = TOP + ROW * len(names) + BOTTOM
    plot = (left, TOP, WIDTH - left - RIGHT - 36, ROW * len(names))
    _, top, inner_w, _ = plot
    bars = tuple(
        Bar(
            x=left,
            y=top + i * ROW + 4,
            width=inner_w * rate,
            height=ROW - 8,
            label=f"{100 * rate:.0f}%",
            hint=f"{name}: {100 * rate:.0f}% pass",
        )
        for i, (name, rate) in enumerate(zip(names, rates, strict=True))
    )
    return Chart(
        title="Share of students who pass each function",
        x_label="% of students who pass",
        y_label="",
        width=WIDTH,
        height=height,
        plot=plot,
        bars=bars,
        x_ticks=tuple(Tick(left + inner_w * k / 4, f"{25 * k}") for k in range(5)),
        y_ticks=tuple(Tick(top + i * ROW + ROW / 2, name) for i, name in enumerate(names)),
        horizontal=True,
    )
