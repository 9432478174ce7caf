"""The report's two pictures, drawn with matplotlib off screen and embedded as PNG data URIs."""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import matplotlib
from matplotlib.figure import Figure

from .aggregate import TargetRow

matplotlib.use("Agg")  # never a window: the grader runs on servers and in CI

import matplotlib.pyplot as plt


def _data_uri(figure: Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def score_histogram(scores: Sequence[float], max_score: float) -> str:
    figure, axes = plt.subplots(figsize=(7, 3.2))
    bins = max(1, min(20, int(max_score) * 2 or 1))
    axes.hist(scores, bins=bins, range=(0, max_score or 1), color="#4c72b0", edgecolor="white")
    axes.set_xlabel("points")
    axes.set_ylabel("students")
    axes.set_title(f"Scores of {len(scores)} students (out of {max_score:g})")
    return _data_uri(figure)


def pass_rates(targets: Sequence[TargetRow]) -> str:
    figure, axes = plt.subplots(figsize=(7, 0.45 * len(targets) + 1.2))
    names = [t.name for t in targets][::-1]
    rates = [100 * t.pass_rate for t in targets][::-1]
    axes.barh(names, rates, color="#55a868")
    axes.set_xlim(0, 100)
    axes.set_xlabel("% of students who pass")
    for y, rate in enumerate(rates):
        axes.text(min(rate + 1, 92), y, f"{rate:.0f}%", va="center", fontsize=8)
    return _data_uri(figure)
