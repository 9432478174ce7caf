"""A global never masks another mistake (issue 17, item 4): a function that reads the
notebook's `D` is judged again at the notebook's own sizes, and what is wrong there is named."""

from __future__ import annotations

from grader.course.config import Config
from grader.engine import grade_path
from grader.report import TargetResult

import students
from conftest import REPO, NotebookFactory

SCALED = "scaled_dot_product_self_attention"


def graded(config: Config, notebook: NotebookFactory, source: str) -> TargetResult:
    report = grade_path(notebook(students.cells(**{SCALED: source})), config)
    return next(t for t in report.targets if t.name == SCALED)


def test_a_global_and_a_catalogued_mistake_are_both_named(
    config: Config, notebook: NotebookFactory
) -> None:
    source = students.SCALE_GLOBAL_D.replace(
        "np.transpose(keys) @ queries", "np.transpose(queries) @ keys"
    )
    result = graded(config, notebook, source)
    assert result.case_outcomes[0] == "failed"  # wrong at D = 4, N = 3 as well
    assert set(result.mistakes) == {"uses_global", "attention_transposed"}
    text = "\n".join(result.messages)
    assert "reads the notebook's global `D`" in text
    assert "it is wrong at the notebook's own sizes too (D=4, N=3)" in text
    assert "attention_transposed: computes the scores as Qᵀ K" in text


def test_an_unlisted_mistake_behind_a_global_is_still_said(
    config: Config, notebook: NotebookFactory
) -> None:
    source = students.SCALE_GLOBAL_D.replace("return X_prime", "return X_prime * 0.5")
    result = graded(config, notebook, source)
    text = "\n".join(result.messages)
    assert "it is wrong at the notebook's own sizes too (D=4, N=3)" in text
    assert "every entry is 0.5 × the expected value" in text


def test_a_global_alone_is_told_as_before(config: Config, notebook: NotebookFactory) -> None:
    result = graded(config, notebook, students.SCALE_GLOBAL_D)
    assert result.case_outcomes[0] == "passed"
    assert result.mistakes == ("uses_global",)
    assert "own sizes too" not in "\n".join(result.messages)


def test_the_udl_copy_with_a_global_is_unchanged(config: Config) -> None:
    report = grade_path(REPO / "tests/notebooks/udl_12_1/global_d.ipynb", config)
    result = next(t for t in report.targets if t.name == "self_attention")
    assert result.mistakes == ("uses_global",)
