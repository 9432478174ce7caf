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

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import diagnosis_coverage

CORPUS = sorted((REPO / "tests" / "notebooks" / "corpus").glob("*/*.ipynb"))


def test_the_corpus_covers_every_assignment(config: Config) -> None:
    assignments = {
        json.loads(p.read_text())["metadata"]["grader_corpus"]["assignment"] for p in CORPUS
    }
    assert assignments == set(config.assignments)


@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS, ids=[f"{p.parent.name}/{p.stem}" for p in CORPUS])
def test_nothing_misleading_and_only_the_listed_targets_fail(config: Config, path: Path) -> None:
    meta = json.loads(path.read_text())["metadata"]["grader_corpus"]
    report = grade_path(path, config, meta["assignment"])
    for result in report.targets:
        causes = meta["wrong"].get(result.name)
        if causes is None:
            assert result.status == "passed", (result.name, result.messages)
        else:
            assert result.status != "passed", result.name
            assert diagnosis_coverage.misleading(result, causes) == [], result.messages
