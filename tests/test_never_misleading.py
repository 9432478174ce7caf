"""Never misleading (issue 17, item 6): "unfinished stub" only of a stub, a crash as a crash.

A body is a stub when it is, by AST, the exercise's stub, or when it computes nothing at all
(`return data_in`, `return np.zeros(…)`); a loop that does work and still returns zeros is told
that, not that it is unfinished. A variable whose cell crashed is told the crash and its line,
with the NumPy version when that is the cause.
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat

from grader.course.config import Config
from grader.course.notebook import load_submission
from grader.engine import grade_path
from grader.judge.static import FunctionSource, find_function
from grader.judge.stubs import exercise_stubs, is_exercise_stub
from grader.report import Report, TargetResult

import students
from conftest import REPO, NotebookFactory

UDL = REPO / "tests" / "notebooks" / "udl_12_1" / "correct.ipynb"

# Appends the exponentials, then fills the output before the total is known: the output stays
# the zeros it started as. Real work in the body, so no "stub".
APPENDS_BEFORE_SUMMING = """\
def softmax_cols(data_in):
    out = np.zeros(data_in.shape)
    exps = []
    for j in range(data_in.shape[1]):
        exps.append(np.exp(data_in[:, j]))
    total = np.sum(exps, axis=1)
    for j in range(len(exps)):
        out[:, j] * exps[j] / total[j]
    return out"""

ZEROS_STUB = """\
def softmax_cols(data_in):
    # TODO: write this
    out = np.zeros_like(data_in)
    return out"""


def target(report: Report, name: str) -> TargetResult:
    return next(t for t in report.targets if t.name == name)


def test_a_loop_that_returns_zeros_is_not_called_a_stub(
    config: Config, notebook: NotebookFactory
) -> None:
    path = notebook(students.cells(softmax_cols=APPENDS_BEFORE_SUMMING))
    result = target(grade_path(path, config), "softmax_cols")
    text = "\n".join(result.messages)
    assert result.status == "failed"
    assert "not_implemented" not in result.mistakes
    assert "stub" not in text
    assert "returns only zeros on every case, though the body computes something" in text


def test_a_body_that_computes_nothing_is_still_the_stub(
    config: Config, notebook: NotebookFactory
) -> None:
    path = notebook(students.cells(softmax_cols=ZEROS_STUB))
    result = target(grade_path(path, config), "softmax_cols")
    assert result.mistakes == ("not_implemented",)
    assert "the body is still the unfinished stub" in result.messages[1]


def test_the_exercise_stub_is_recognised_by_its_ast(config: Config, tmp_path: Path) -> None:
    exercise = config.assignment("self_attention").exercise
    assert exercise is not None
    stubs = exercise_stubs(exercise)
    handed_out = find_function(load_submission(exercise), "self_attention")
    assert is_exercise_stub(handed_out, stubs)
    # The same statements with other comments and spacing are still the stub; a changed
    # statement is not.
    source = (
        "def self_attention(X, omega_v, omega_q, omega_k, beta_v, beta_q, beta_k):\n"
        "    # my notes here\n\n"
        '    raise NotImplementedError("queries, keys, values, scores, column softmax, '
        'weighted values")\n'
    )
    for code, expected in ((source, True), (source.replace("keys, values", "k"), False)):
        path = tmp_path / f"copy{expected}.ipynb"
        path.write_text(
            nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]))
        )
        assert is_exercise_stub(find_function(load_submission(path), "self_attention"), stubs) is (
            expected
        )
    assert exercise_stubs(None) == {}


def test_a_body_that_does_work_is_not_a_stub_even_without_an_exercise() -> None:
    node = ast.parse(APPENDS_BEFORE_SUMMING).body[0]
    assert isinstance(node, ast.FunctionDef)
    cell = load_submission(UDL).cells[0]
    assert not is_exercise_stub(FunctionSource(node, cell), {})
    stub = ast.parse(ZEROS_STUB).body[0]
    assert isinstance(stub, ast.FunctionDef)
    assert is_exercise_stub(FunctionSource(stub, cell), {})


def udl_with(tmp_path: Path, old: str, new: str) -> Path:
    """The correct UDL copy with one piece of a cell replaced."""
    notebook = nbformat.read(str(UDL), as_version=4)
    hits = [c for c in notebook.cells if old in c.source]
    assert len(hits) == 1
    hits[0].source = hits[0].source.replace(old, new)
    out = tmp_path / "copy.ipynb"
    nbformat.write(notebook, str(out))
    return out


def test_a_variable_whose_loop_crashed_on_new_numpy_is_told_the_crash(
    config: Config, tmp_path: Path
) -> None:
    """The loop prefills its outputs with zeros and then crashes at `math.exp` of a 1×1
    array (fine before NumPy 2.4): the crash is the message, not "unfinished stub"."""
    path = udl_with(
        tmp_path,
        "all_x_prime = []\nfor n in range(N):\n",
        "import math\nall_x_prime = [np.zeros((D, 1)) for n in range(N)]\nfor n in range(N):\n"
        "  weights = [math.exp(all_queries[n].T @ k) for k in all_keys]\n",
    )
    result = target(grade_path(path, config, "udl_12_1"), "all_x_prime")
    text = "\n".join(result.messages)
    assert result.status == "failed"
    assert "not_implemented" not in result.mistakes and "stub" not in text
    crash = next(f for f in result.findings if f.kind == "crash")
    assert "`all_x_prime` is set in cell 7, which stopped with an error" in crash.message
    assert "raised TypeError" in crash.message and "(cell 7, line 4)" in crash.message
    assert "NumPy 2.4 and later refuse to turn a 1×1 array into a number" in crash.message


def test_a_variable_computed_from_a_wrong_variable_is_told_to_fix_that_first(
    config: Config, tmp_path: Path
) -> None:
    path = udl_with(tmp_path, "  query = omega_q @ x + beta_q", "  query = omega_q @ x + beta_k")
    report = grade_path(path, config, "udl_12_1")
    assert target(report, "all_queries").status == "failed"
    result = target(report, "all_x_prime")
    assert result.status == "failed"
    assert result.messages[1].startswith(
        "fix `all_queries` first: `all_x_prime` is computed from it and it fails its own checks"
    )
    assert "no known mistake" not in "\n".join(result.messages)
