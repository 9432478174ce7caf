"""`grader selftest` counts the derived mistakes and fails when one is named wrongly."""

from __future__ import annotations

import pytest

from grader.author import selftest_derived
from grader.author.selftest import render_selftest, run_selftest
from grader.course.config import Config
from grader.judge.diagnose import Diagnosis


def test_counts_and_every_distinct_one_named_as_itself(config: Config) -> None:
    counts = selftest_derived.derived_counts(config.assignment("self_attention"))
    assert counts.generated["mutant"] >= counts.distinct["mutant"] > 0
    assert counts.generated["inherited"] >= counts.distinct["inherited"] > 0
    assert counts.named == sum(counts.distinct.values())
    assert counts.misnamed == ()
    assert f"{counts.named} of {counts.named} named as themselves" in counts.line()
    assert counts.pairs > 0 and f"{counts.pairs} distinct pairs of mutations" in counts.line()


def test_a_derived_mistake_named_wrongly_fails_the_selftest(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(selftest_derived, "diagnose", lambda evidence: Diagnosis(("other",)))
    result = run_selftest(config.assignment("masked_attention"))
    assert not result.ok
    text = render_selftest(result)
    assert "derived mistakes: " in text
    assert "is named as other" in text
