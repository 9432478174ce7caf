"""A mutant that answers every case as the reference does (a softmax without its max shift:
the same on ordinary scores) is dropped as a single, yet a student who left out the shift and
made another mistake gives the numbers of the pair only: such silent singles are paired
(issue 19's leftovers, item 2), and a division by the count where the sum is meant is a
mutant of its own (`size_for_sum`)."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import numpy as np
import pytest

from grader.course.config import Config
from grader.course.mistakes import Mistake
from grader.engine import grade_path
from grader.judge import derived, mutant_operators
from grader.judge.fingerprints import Fingerprint, Origin
from grader.judge.mutant_operators import Context

from conftest import REPO

CORPUS = REPO / "tests" / "notebooks" / "corpus"


# A softmax that sums the raw scores, where the catalogue does not hold that mistake (the
# self_attention catalogue does: `sum_of_raw_scores`, tests/test_diagnose.py).
RAW_SUM = "def softmax(x):\n    e = np.exp(x)\n    return e / np.sum(x, axis=-1, keepdims=True)\n"


@pytest.mark.parametrize(
    ("assignment", "name", "named"),
    [
        ("masked_attention", RAW_SUM, {"term_dropped", "wrong_variable"}),
        ("udl_12_1", "softmax_divides_by_count", {"size_for_sum", "term_dropped"}),
    ],
)
def test_a_softmax_without_its_shift_and_another_mistake_is_named(
    config: Config, assignment: str, name: str, named: set[str], tmp_path: Path
) -> None:
    path = CORPUS / assignment / f"{name}.ipynb"
    if name == RAW_SUM:  # the assignment's correct notebook with this softmax
        notebook = nbformat.read(REPO / "tests/notebooks" / assignment / "correct.ipynb", 4)
        next(c for c in notebook.cells if "def softmax(" in c.source).source = RAW_SUM
        path = tmp_path / "student.ipynb"
        nbformat.write(notebook, path)
    report = grade_path(path, config, assignment)
    result = next(t for t in report.targets if t.name == "softmax")
    assert result.status == "failed"
    assert named <= set(result.mistakes), result.messages
    said = next(f for f in result.findings if f.mistake == "term_dropped")
    assert "subtraction of the maximum" in said.message  # what was left out, in words


def test_silent_singles_are_those_that_answer_as_the_reference(config: Config) -> None:
    spec = config.assignment("self_attention").target("softmax")
    same, other = [np.array([0.25, 0.75])], [np.array([0.5, 0.5])]

    def made(outputs: list[np.ndarray], origin: Origin = "mutant") -> Fingerprint:
        mistake = Mistake("term_dropped", "softmax", "words", "", "_grader_mutant_softmax_0", "")
        return Fingerprint(mistake, tuple(outputs), None, origin)

    found = [made(same), made(other), made(same, "inherited")]
    assert derived.silent(found, same, spec.compare, spec.tolerance) == [found[0]]


def test_a_division_by_a_sum_becomes_one_by_the_count() -> None:
    node = ast.parse("weights / np.sum(weights)", mode="eval").body
    context = Context("softmax", ("x",), {}, (), {})
    changes = list(mutant_operators._count_for_sum(node, context))
    assert [c.mistake_id for c in changes] == ["size_for_sum"]
    assert ast.unparse(changes[0].node) == "weights / len(weights)"
