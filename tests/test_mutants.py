"""Mistakes derived from the reference (issue 17, item 1): AST mutants with generated words,
run in the sandboxed child, deduplicated, and matched after the hand-written catalogue."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import nbformat
import pytest

from grader.course.cases import build_cases
from grader.course.config import Config
from grader.engine import grade_path, require
from grader.judge.compare import compare
from grader.judge.expected import build_expected
from grader.judge.mutants import mutants_of, reference_mutants
from grader.judge.reference import load_solution
from grader.report import Report, TargetResult
from grader.run.workers import shared_workers

import students
from conftest import REPO, NotebookFactory

ASSIGNMENTS = [
    "self_attention",
    "udl_12_1",
    "masked_attention",
    "sentence_attention",
    "multihead_attention",
]

SAMPLE = """\
def attend(X, omega_q, omega_k, beta_q, beta_k):
    queries = omega_q @ X + beta_q
    keys = omega_k @ X + beta_k
    scores = keys.T @ queries / np.sqrt(queries.shape[0])
    return softmax(scores, axis=0)
"""


def target(report: Report, name: str) -> TargetResult:
    return next(t for t in report.targets if t.name == name)


def test_each_operator_makes_its_mutants_with_words_that_say_where() -> None:
    node = ast.parse(SAMPLE).body[0]
    assert isinstance(node, ast.FunctionDef)
    found = mutants_of(node, "attend", {"D": 4})
    ids = Counter(m.id for m in found)
    for expected in (
        "operands_swapped",
        "operand_transposed",
        "elementwise_product",
        "softmax_wrong_axis",
        "missing_bias",
        "wrong_argument",
        "wrong_variable",
        "uses_global",
        "size_hardcoded",
        "wrong_dimension",
        "scale_missing",
        "scale_duplicated",
        "scale_by_d",
        "scale_misplaced",
        "output_transposed",
    ):
        assert ids[expected] >= 1, expected
    words = {m.message for m in found}
    assert "uses `beta_k` where `beta_q` is meant (computing `queries`)" in words
    assert "leaves out `+ beta_k` (computing `keys`)" in words
    assert "reads the notebook's global `D` where `queries.shape[0]` is meant" in " ".join(words)
    assert "works along axis 1 in `softmax(scores, axis=0)`, the wrong axis" in " ".join(words)
    misplaced = next(m.message for m in found if m.id == "scale_misplaced")
    assert misplaced.startswith(
        "divides what it returns by `np.sqrt(queries.shape[0])` at the end instead of dividing "
        "`keys.T @ queries` by it"
    )
    for mistake in found:  # each one a function that parses, under its own name
        tree = ast.parse(mistake.source)
        assert isinstance(tree.body[0], ast.FunctionDef)
        assert tree.body[0].name == mistake.function
    assert len({m.source.split("\n", 1)[1] for m in found}) == len(found)  # no two alike


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_assignment_gets_distinct_mutants(config: Config, assignment: str) -> None:
    spec = config.assignment(assignment)
    functions = [t.name for t in spec.targets if not t.variable]
    assert reference_mutants(load_solution(spec), functions)
    case_set = build_cases(spec)
    expected = build_expected(spec, case_set, shared_workers(require("auto"), spec.files))
    kept = [f for t in functions for f in expected.fingerprints[t] if f.origin == "mutant"]
    assert kept  # some survive deduplication against the reference and the catalogue
    for name in functions:
        prints = [f for f in expected.fingerprints[name] if f.origin == "mutant"]
        spec_t = spec.target(name)
        reference = expected.references[name].outputs
        for fingerprint in prints:
            assert not any(isinstance(o, Exception) for o in fingerprint.outputs)
            verdicts = [
                compare(want, got, spec_t.compare, spec_t.tolerance).ok  # type: ignore[arg-type]
                for want, got in zip(reference, fingerprint.outputs, strict=True)
            ]
            assert not all(verdicts), fingerprint.mistake.message


STUDENTS = [
    (
        "qkv_loop",
        students.QKV_LOOP.replace("key = omega_k @ x + beta_k", "key = omega_k @ x + beta_v"),
        "wrong_argument",
        "uses `beta_v` where `beta_k` is meant (computing `all_keys`)",
    ),
    (
        "attention_loop",
        students.ATTENTION_LOOP.replace(
            "all_values[m] * attention[m]", "all_keys[m] * attention[m]"
        ),
        "wrong_argument",
        "uses `all_keys` where `all_values` is meant",
    ),
    (
        "self_attention",
        students.SELF_ATTENTION.replace(
            "X_prime = values @ attention", "X_prime = queries @ attention"
        ),
        "wrong_variable",
        "uses `queries` where `values` is meant (in what is returned)",
    ),
]


@pytest.mark.parametrize(
    ("name", "source", "mistake", "words"), STUDENTS, ids=[s[0] for s in STUDENTS]
)
def test_a_student_mistake_outside_the_catalogue_is_named_by_its_mutant(
    config: Config, notebook: NotebookFactory, name: str, source: str, mistake: str, words: str
) -> None:
    result = target(grade_path(notebook(students.cells(**{name: source})), config), name)
    assert result.status == "failed"
    assert result.mistakes == (mistake,)
    assert words in result.messages[1]
    assert "no known mistake matches" not in "\n".join(result.messages)


def test_the_catalogue_wins_over_a_mutant_with_the_same_outputs(config: Config) -> None:
    """A mutant that scales by D equals the catalogue's scale_by_d: the catalogue's words."""
    result = target(
        grade_path(REPO / "tests/notebooks/self_attention/scale_by_d.ipynb", config),
        "scaled_dot_product_self_attention",
    )
    assert result.mistakes == ("scale_by_d",)
    assert "Fix:" in result.messages[1]  # only the catalogue's entries carry a fix


def test_a_loop_index_from_the_wrong_loop(config: Config, tmp_path: Path) -> None:
    notebook = nbformat.read(
        str(REPO / "tests/notebooks/sentence_attention/correct.ipynb"), as_version=4
    )
    cell = next(c for c in notebook.cells if "def word_attention" in c.source)
    assert "Q[i] @ K[j]" in cell.source
    cell.source = cell.source.replace("Q[i] @ K[j]", "Q[j] @ K[j]")
    path = tmp_path / "loop.ipynb"
    nbformat.write(notebook, str(path))
    result = target(grade_path(path, config, "sentence_attention"), "word_attention")
    assert result.mistakes == ("wrong_loop_variable",)
    assert "uses the loop variable `j` where `i` is meant" in result.messages[1]


def test_a_variable_built_with_the_wrong_bias_is_named_from_a_mutant_of_its_cell(
    config: Config, tmp_path: Path
) -> None:
    notebook = nbformat.read(str(REPO / "tests/notebooks/udl_12_1/correct.ipynb"), as_version=4)
    cell = next(c for c in notebook.cells if "key = omega_k @ x + beta_k" in c.source)
    cell.source = cell.source.replace("key = omega_k @ x + beta_k", "key = omega_k @ x + beta_v")
    path = tmp_path / "keys.ipynb"
    nbformat.write(notebook, str(path))
    result = target(grade_path(path, config, "udl_12_1"), "all_keys")
    assert result.mistakes == ("wrong_argument",)
    assert "uses `beta_v` where `beta_k` is meant (filling `all_keys`)" in result.messages[1]


def test_a_call_of_the_notebooks_own_function_left_out() -> None:
    node = ast.parse("def attend(s):\n    w = softmax(s)\n    return np.sum(w)\n").body[0]
    assert isinstance(node, ast.FunctionDef)
    found = mutants_of(node, "attend", {}, functions=frozenset({"softmax"}))
    (dropped,) = [m for m in found if m.id == "call_dropped"]
    assert dropped.message.startswith("skips `softmax`: uses `s` itself where `softmax(s)`")
    assert "w = s" in dropped.source
    # a library call (np.sum) is never dropped, nor one the notebook does not define
    assert [m.id for m in mutants_of(node, "attend", {})].count("call_dropped") == 0


def test_a_division_by_a_product_loses_its_parentheses_in_a_mutant() -> None:
    source = "def cos(a, b):\n    return a @ b / (np.linalg.norm(a) * np.linalg.norm(b))\n"
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    found = [m for m in mutants_of(node, "cos", {}) if m.id == "operator_precedence"]
    assert len(found) == 1
    assert "a @ b / np.linalg.norm(a) * np.linalg.norm(b)" in found[0].source
    assert found[0].message.startswith(
        "divides by `np.linalg.norm(a)` and then multiplies by `np.linalg.norm(b)`"
    )
    plain = ast.parse("def f(a, b):\n    return a / b * 2\n").body[0]
    assert isinstance(plain, ast.FunctionDef)
    assert not [m for m in mutants_of(plain, "f", {}) if m.id == "operator_precedence"]


def test_the_corpus_cosine_without_parentheses_is_named(config: Config) -> None:
    path = (
        REPO / "tests" / "notebooks" / "corpus" / "sentence_attention" / "cosine_precedence.ipynb"
    )
    result = target(grade_path(path, config), "cosine_similarity")
    assert result.status == "failed"
    assert result.mistakes == ("operator_precedence",)
    assert result.location is not None and result.location.line == 2


def test_arrays_a_call_joins_are_swapped_in_a_mutant() -> None:
    source = "def both(a, b):\n    return np.vstack([a @ b, b])\n"
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    found = [m for m in mutants_of(node, "both", {}) if m.id == "order_swapped"]
    assert len(found) == 1 and "np.vstack([b, a @ b])" in found[0].source
    assert found[0].message.startswith("puts `b` before `a @ b` in `np.vstack([b, a @ b])`")
    alike = ast.parse("def f(a):\n    return np.vstack([a, a])\n").body[0]
    assert isinstance(alike, ast.FunctionDef)
    assert not [m for m in mutants_of(alike, "f", {}) if m.id == "order_swapped"]


def test_a_call_of_another_of_the_notebooks_functions_comes_after_every_other_mutant() -> None:
    node = ast.parse("def attend(s):\n    w = softmax_cols(s)\n    return w @ s\n").body[0]
    assert isinstance(node, ast.FunctionDef)
    names = frozenset({"softmax", "softmax_cols", "attend", "mask_of"})
    found = mutants_of(node, "attend", {}, functions=names)
    swapped = [m for m in found if m.id == "wrong_function"]
    # every other function of the notebook, never the target itself
    assert [m.message.split(" (")[0] for m in swapped] == [
        "calls `mask_of` where `softmax_cols` is meant",
        "calls `softmax` where `softmax_cols` is meant",
    ]
    assert found[-len(swapped) :] == swapped  # last: the singles taken into pairs stay
    assert "w = softmax(s)" in swapped[1].source
    two = ast.parse("def attend(s, m):\n    return softmax_cols(s, m)\n").body[0]
    assert isinstance(two, ast.FunctionDef)  # a call of another shape would only raise
    made = mutants_of(two, "attend", {}, functions=names)
    assert not [m for m in made if m.id == "wrong_function"]
