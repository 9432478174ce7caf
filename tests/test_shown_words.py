"""A derived mistake's words are made from the reference's source; a student is never shown a
piece of the solution that is neither in their own code nor in the exercise they were given
(issue 19's leftovers, item 1): such a mistake is told in words of its kind, at their line."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from grader.course.config import Config
from grader.engine import grade_path
from grader.judge import mutant_pairs, mutants
from grader.judge.shown import DERIVED_PREFIXES

from conftest import REPO

CORPUS = REPO / "tests" / "notebooks" / "corpus"
QUOTED = re.compile(r"`([^`]*)`")


def _code(path: Path) -> list[str]:
    """The code cells of a notebook, as text."""
    cells = json.loads(path.read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def _identifiers(source: str) -> set[str]:
    """Every name the code uses or defines (variables, attributes, functions, arguments)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.FunctionDef):
            found.add(node.name)
        elif isinstance(node, ast.keyword) and node.arg:
            found.add(node.arg)
    return found


def _solution_only(assignment: str, student: Path) -> set[str]:
    """The names of the solution notebook that the student's code and the exercise lack."""
    solution = set().union(*map(_identifiers, _code(REPO / "solutions" / f"{assignment}.ipynb")))
    seen = set(re.findall(r"\w+", "\n".join(_code(student))))
    exercise = REPO / "exercises" / f"{assignment}.ipynb"
    if exercise.is_file():
        seen |= set(re.findall(r"\w+", "\n".join(_code(exercise))))  # the stubs
    return solution - seen


@pytest.mark.parametrize(
    ("assignment", "name", "target"),
    [
        ("masked_attention", "mask_includes_diagonal", "causal_mask"),  # loops, no triu_indices
        ("masked_attention", "mask_range_short", "causal_mask"),
    ],
)
def test_feedback_quotes_no_solution_only_code(
    config: Config, assignment: str, name: str, target: str
) -> None:
    path = CORPUS / assignment / f"{name}.ipynb"
    hidden = _solution_only(assignment, path)
    assert hidden  # the solution has names this student never wrote
    result = next(t for t in grade_path(path, config, assignment).targets if t.name == target)
    assert "off_by_one" in result.mistakes, result.messages  # a derived mistake is named
    quoted = {w for m in result.messages for q in QUOTED.findall(m) for w in re.findall(r"\w+", q)}
    assert not quoted & hidden, (sorted(quoted & hidden), result.messages)


@pytest.mark.parametrize("name", ["mask_range_short", "mask_includes_diagonal"])
def test_the_student_s_own_line_is_quoted_instead(config: Config, name: str) -> None:
    path = CORPUS / "masked_attention" / f"{name}.ipynb"
    result = next(
        t for t in grade_path(path, config, "masked_attention").targets if t.name == "causal_mask"
    )
    said = next(f for f in result.findings if f.mistake == "off_by_one")
    assert said.location is not None and said.location.line > 1  # in the body, not the `def`
    cells = json.loads(path.read_text())["cells"]
    line = "".join(cells[said.location.cell - 1]["source"]).split("\n")[said.location.line - 1]
    assert f"`{' '.join(line.split())}`" in said.message, said.message


def test_a_quote_the_student_has_seen_is_kept(config: Config) -> None:
    # the reference's names are the student's own here: the precise words stay
    path = CORPUS / "masked_attention" / "returns_raw_scores.ipynb"
    result = next(
        t
        for t in grade_path(path, config, "masked_attention").targets
        if t.name == "scaled_dot_product_attention"
    )
    assert any("returns `scores` where `attention` is meant" in m for m in result.messages)


def test_the_derived_prefixes_are_the_makers() -> None:
    assert set(DERIVED_PREFIXES) == {mutants.PREFIX, mutant_pairs.PAIR_PREFIX}
