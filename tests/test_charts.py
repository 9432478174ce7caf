"""The report's charts: counts per bin, bar sizes in proportion, ticks that fit."""

from __future__ import annotations

import pytest

from grader.render.charts import bin_counts, pass_rates, score_histogram


def test_bins_hold_every_score_once() -> None:
    scores = [0, 0.25, 0.5, 4.9, 5, 9.75, 10, 10]
    assert bin_counts(scores, 10, 20) == [2, 1] + [0] * 7 + [1, 1] + [0] * 8 + [3]
    assert bin_counts([-1, 12], 10, 4) == [1, 0, 0, 1]  # out of range: clamped, not lost
    assert bin_counts([0, 0], 0, 1) == [2]  # an assignment worth nothing


def test_histogram_bars_are_in_proportion_to_their_counts() -> None:
    scores = [10] * 12 + [7.5] * 3 + [0]
    chart = score_histogram(scores, 10)
    assert chart.title == "Scores of 16 students (out of 10)"
    heights = {bar.label: bar.height for bar in chart.bars if bar.label}
    assert set(heights) == {"12", "3", "1"}
    assert heights["12"] == pytest.approx(4 * heights["3"]) == pytest.approx(12 * heights["1"])
    _, top, _, height = chart.plot
    bottom = pytest.approx(top + height)
    assert all(top <= bar.y and bar.y + bar.height == bottom for bar in chart.bars)
    assert max(bar.height for bar in chart.bars) <= height
    labels = [tick.label for tick in chart.y_ticks]
    assert labels[0] == "0" and int(labels[-1]) <= 12 and len(labels) <= 7


def test_pass_rate_bars_span_the_share_of_the_width() -> None:
    chart = pass_rates(["softmax", "self_attention"], [1.0, 0.25])
    full, quarter = chart.bars
    assert quarter.width == pytest.approx(full.width / 4)
    assert (full.label, quarter.label) == ("100%", "25%")
    assert [tick.label for tick in chart.y_ticks] == ["softmax", "self_attention"]
    assert pass_rates([], []).bars == ()
