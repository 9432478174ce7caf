"""The student-style corpus (tests/notebooks/corpus/, issue 17): every notebook says what it
gets wrong, and the grader never says something misleading about it (bench/diagnosis_coverage.py
prints the share of root causes named)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from grader.course.config import Config
from grader.engine import grade_path
from grader.report import Report

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import diagnosis_coverage

CORPUS = sorted((REPO / "tests" / "notebooks" / "corpus").glob("*/*.ipynb"))
_GRADED: dict[Path, Report] = {}  # each notebook graded once for both tests


def _graded(config: Config, path: Path) -> tuple[dict[str, list[str]], Report]:
    meta = json.loads(path.read_text())["metadata"]["grader_corpus"]
    if path not in _GRADED:
        _GRADED[path] = grade_path(path, config, meta["assignment"])
    return meta["wrong"], _GRADED[path]


def test_the_corpus_is_large_enough_and_each_assignment_has_wrong_functions(
    config: Config,
) -> None:
    assert len(CORPUS) >= 60
    wrong: dict[str, set[str]] = {}
    for path in CORPUS:
        meta = json.loads(path.read_text())["metadata"]["grader_corpus"]
        wrong.setdefault(meta["assignment"], set()).update(meta["wrong"])
    for assignment, names in wrong.items():
        # several targets of each assignment are got wrong somewhere in the corpus
        assert len(names) >= min(3, len(config.assignments[assignment].targets)), assignment


@pytest.mark.slow
def test_the_root_cause_is_named_in_nine_of_ten_wrong_targets(config: Config) -> None:
    wrong = named = 0
    misleading: list[str] = []
    for path in CORPUS:
        causes_of, report = _graded(config, path)
        for result in report.targets:
            causes = causes_of.get(result.name)
            if causes is None:
                continue
            wrong += 1
            named += result.status != "passed" and diagnosis_coverage.named(result, causes)
            misleading += diagnosis_coverage.misleading(result, causes)
    share = named / wrong
    print(f"root cause named in {named} of {wrong} wrong targets ({share:.1%})")
    assert share >= 0.9, f"root cause named in only {named} of {wrong}"
    assert misleading == []


def test_the_corpus_covers_every_assignment(config: Config) -> None:
    assignments = {
        json.loads(p.read_text())["metadata"]["grader_corpus"]["assignment"] for p in CORPUS
    }
    assert assignments == set(config.assignments)


@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS, ids=[f"{p.parent.name}/{p.stem}" for p in CORPUS])
def test_nothing_misleading_and_only_the_listed_targets_fail(config: Config, path: Path) -> None:
    causes_of, report = _graded(config, path)
    for result in report.targets:
        causes = causes_of.get(result.name)
        if causes is None:
            assert result.status == "passed", (result.name, result.messages)
        else:
            assert result.status != "passed", result.name
            assert diagnosis_coverage.misleading(result, causes) == [], result.messages
