"""End to end through the engine: one notebook in, a verdict per target out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from grader.course.config import Config
from grader.course.notebook import load_submission
from grader.engine import grade_path
from grader.errors import SubmissionError, UsageError
from grader.report import Report, TargetResult

import students
from conftest import REPO, NotebookFactory, write_notebook

TARGETS = list(students.CORRECT)


def target(report: Report, name: str) -> TargetResult:
    return next(t for t in report.targets if t.name == name)


def grade(config: Config, path: Path) -> Report:
    return grade_path(path, config, "self_attention")


def test_reference_solution_scores_full_marks(config: Config) -> None:
    report = grade(config, REPO / "solutions" / "self_attention.ipynb")
    assert [t.status for t in report.targets] == ["passed"] * len(TARGETS)
    assert report.score == report.max_score == 10
    assert report.errors == ()


def test_untouched_exercise_scores_zero_and_says_not_implemented(config: Config) -> None:
    report = grade_path(REPO / "exercises" / "self_attention.ipynb", config)
    assert report.score == 0
    for result in report.targets:
        assert result.status == "error"
        assert result.mistakes == ("not_implemented",)
        assert result.messages[0].startswith("not implemented yet")
        assert result.location is not None


def test_student_style_correct_notebook_passes(config: Config, notebook: NotebookFactory) -> None:
    report = grade(config, notebook(students.cells()))
    assert {t.status for t in report.targets} == {"passed"}, report.to_dict()
    assert report.errors == ()


def test_equivalent_row_form_passes(config: Config, notebook: NotebookFactory) -> None:
    report = grade(config, notebook(students.cells(self_attention=students.ROWS_FORM)))
    assert target(report, "self_attention").status == "passed"


def test_seed_001_fails_both_matrix_functions_with_a_shape_message(
    config: Config, notebook: NotebookFactory
) -> None:
    path = notebook(
        students.cells(
            self_attention=students.SEED_001_SELF,
            scaled_dot_product_self_attention=students.SEED_001_SCALED,
        )
    )
    report = grade(config, path)
    for name in ("self_attention", "scaled_dot_product_self_attention"):
        result = target(report, name)
        assert result.status == "failed"
        assert result.score == 0
        # The first case has D = 4, N = 3: the answer is 4×3, the transpose is 3×4.
        assert any(
            m.startswith("case 1 (D=4, N=3): shape (3, 4), expected (4, 3) (the transposed shape)")
            for m in result.messages
        )
    assert target(report, "softmax_cols").status == "passed"


def test_literal_two_passes_only_the_d4_cases(config: Config, notebook: NotebookFactory) -> None:
    path = notebook(students.cells(scaled_dot_product_self_attention=students.SCALE_HARDCODED))
    result = target(grade(config, path), "scaled_dot_product_self_attention")
    spec = config.assignment("self_attention").target(result.name)
    d4 = [i for i, sizes in enumerate(spec.sizes) if sizes["D"] == 4]
    assert d4 and len(d4) < len(spec.sizes)
    assert result.status == "failed"
    assert result.cases_passed == len(d4)
    assert result.score == pytest.approx(spec.points * len(d4) / len(spec.sizes))
    failing = [m for m in result.messages if m.startswith("case ")]
    assert failing and all("D=4" not in m for m in failing)


def test_global_d_fails_other_shapes(config: Config, notebook: NotebookFactory) -> None:
    path = notebook(students.cells(scaled_dot_product_self_attention=students.SCALE_GLOBAL_D))
    result = target(grade(config, path), "scaled_dot_product_self_attention")
    assert result.status == "failed"
    assert 0 < result.cases_passed < result.cases_total


def test_syntax_error_in_one_cell_leaves_the_others_graded(
    config: Config, notebook: NotebookFactory
) -> None:
    broken = "def softmax_cols(data_in):\n    return np.exp(data_in) / (\n"
    report = grade(config, notebook(students.cells(softmax_cols=broken)))
    result = target(report, "softmax_cols")
    assert result.status == "missing"
    assert "cell 6" in result.messages[0] and "SyntaxError" in result.messages[0]
    assert target(report, "qkv_loop").status == "passed"
    assert target(report, "attention_loop").status == "passed"
    assert any(e.startswith("cell 6:") and "SyntaxError" in e for e in report.errors)


def test_exception_in_a_cell_does_not_hide_later_definitions(
    config: Config, notebook: NotebookFactory
) -> None:
    cells = students.cells()
    cells.insert(1, "print(undefined_name)")
    report = grade(config, notebook(cells))
    assert {t.status for t in report.targets} == {"passed"}
    assert any("NameError" in e and "cell 3" in e for e in report.errors)


def test_missing_function(config: Config, notebook: NotebookFactory) -> None:
    report = grade(config, notebook(students.cells(softmax_cols=None)))
    result = target(report, "softmax_cols")
    assert result.status == "missing"
    assert result.score == 0
    assert "not defined" in result.messages[0]
    # self_attention calls the missing function: told to write it first, NameError quoted.
    dependent = target(report, "self_attention")
    assert dependent.status == "error"
    assert dependent.messages[1].startswith("fix `softmax_cols` first")
    assert "NameError" in dependent.messages[2]


def test_name_bound_to_a_non_function_is_missing(config: Config, notebook: NotebookFactory) -> None:
    report = grade(config, notebook(students.cells(softmax="softmax = 3.0")))
    result = target(report, "softmax")
    assert result.status == "missing"
    assert "is a float, not a function" in result.messages[0]


def test_exception_in_a_function_is_an_error_with_its_line(
    config: Config, notebook: NotebookFactory
) -> None:
    bad = "def softmax_cols(data_in):\n    total = 0\n    return data_in / total.shape\n"
    report = grade(config, notebook(students.cells(softmax_cols=bad)))
    result = target(report, "softmax_cols")
    assert result.status == "error"
    assert result.location is not None and result.location.line == 3
    assert "AttributeError" in result.messages[1]


def test_wrong_values_report_how_many_entries_differ(
    config: Config, notebook: NotebookFactory
) -> None:
    report = grade(config, notebook(students.cells(self_attention=students.MISSING_BIAS)))
    result = target(report, "self_attention")
    assert result.status == "failed"
    assert any("entries differ" in m and "max abs difference" in m for m in result.messages)


def test_wrong_shape_inside_a_returned_tuple_names_the_item(
    config: Config, notebook: NotebookFactory
) -> None:
    report = grade(config, notebook(students.cells(qkv_loop=students.ELEMENTWISE)))
    result = target(report, "qkv_loop")
    assert result.status == "failed"
    assert any("element [0][0]: shape (4, 4), expected (4, 1)" in m for m in result.messages)


def test_float_of_1x1_arrays_is_converted_and_the_student_is_told(
    config: Config, notebook: NotebookFactory
) -> None:
    report = grade(config, notebook(students.cells(attention_loop=students.FLOAT_LOOP)))
    result = target(report, "attention_loop")
    assert result.status == "passed"
    assert any("1×1 array" in m and ".item()" in m for m in result.messages)
    assert any("cell 5, line 6" in n for n in report.notes)


def test_mutating_an_argument_fails_the_case_and_says_which(
    config: Config, notebook: NotebookFactory
) -> None:
    report = grade(config, notebook(students.cells(softmax_cols=students.MUTATING_SOFTMAX_COLS)))
    result = target(report, "softmax_cols")
    assert result.status == "failed"
    assert any("changed its argument `data_in` in place" in m for m in result.messages)


@pytest.mark.slow
def test_infinite_loop_in_a_function_times_out(
    fast_config: Config, notebook: NotebookFactory
) -> None:
    spin = "def softmax_cols(data_in):\n    while True:\n        pass\n"
    report = grade(fast_config, notebook(students.cells(softmax_cols=spin)))
    result = target(report, "softmax_cols")
    assert result.status == "timeout"
    assert result.score == 0
    assert target(report, "qkv_loop").status == "passed"


@pytest.mark.slow
def test_infinite_loop_at_top_level_stops_that_cell_only(
    fast_config: Config, notebook: NotebookFactory
) -> None:
    cells = students.cells()
    cells.insert(1, "while True:\n    pass")
    report = grade(fast_config, notebook(cells))
    assert {t.status for t in report.targets} == {"passed"}
    assert any("cell 3" in e and "time limit" in e for e in report.errors)


@pytest.mark.slow
def test_demo_cells_that_spend_the_notebooks_time_leave_the_functions_theirs(
    fast_config: Config, notebook: NotebookFactory
) -> None:
    """r44: five `while True:` demo cells after right functions ran each to the cell limit
    (1 s), past the submission's (4 s): the process was killed and every function lost,
    each "timed out" at its own `def`. The cells together now take at most 3/4 of it; the
    cells after are not run (said so), and the functions are called in what is left."""
    cells = students.cells()
    cells[-1:-1] = ["while True:\n    pass"] * 5
    report = grade(fast_config, notebook(cells))
    assert {t.status for t in report.targets} == {"passed"}, report.errors
    loops = [e for e in report.errors if "time limit" in e or "not run" in e]
    assert len(loops) == 6, report.errors  # the five loops, and the usage cell after them
    timed = [e for e in loops if "did not finish within the time limit" in e]
    skipped = [e for e in loops if ": not run: the notebook's cells had used the time" in e]
    assert timed and skipped and len(timed) + len(skipped) == 6
    first = int(loops[0].split()[1].rstrip(":"))  # the first loop's cell, timed out
    assert loops[0].startswith(f"cell {first}: did not finish")
    assert skipped[-1].startswith(f"cell {first + 5}: not run")  # the usage cell
    assert "the notebook's cells had used the time they may take together" in timed[-1]


@pytest.mark.slow
def test_a_function_never_called_before_the_notebooks_time_ran_out_is_not_said_stuck(
    fast_config: Config, notebook: NotebookFactory
) -> None:
    """r44: every function the notebook's deadline left uncalled was told "When its time ran
    out it was at cell 7, line 1": its own `def` line, where no code is ever stuck."""
    slow = students.QKV_LOOP.replace("    all_queries", "    time.sleep(0.45)\n    all_queries", 1)
    assert slow != students.QKV_LOOP
    cells = students.cells(qkv_loop="import time\n" + slow)
    cells[-1:-1] = ["import time\ntime.sleep(2.5)"]
    report = grade(fast_config, notebook(cells))
    uncalled = [t for t in report.targets if t.status == "timeout" and t.name != "qkv_loop"]
    assert uncalled, [(t.name, t.status) for t in report.targets]
    for result in uncalled:
        assert not any("when its time ran out it was at" in m.lower() for m in result.messages), (
            result.messages
        )


def test_process_exit_inside_a_function_errors_the_unanswered_targets(
    config: Config, notebook: NotebookFactory
) -> None:
    leave = "import os\ndef softmax_cols(data_in):\n    os._exit(0)\n"
    # Without the last cell, which would call it (and end the process) at top level.
    report = grade(config, notebook(students.cells(softmax_cols=leave)[:-1]))
    assert target(report, "qkv_loop").status == "passed"
    for name in ("softmax_cols", "self_attention", "scaled_dot_product_self_attention"):
        result = target(report, name)
        assert result.status == "error"
        assert "exited early" in " ".join(result.messages)
    assert any("exited early" in e for e in report.errors)


def test_sys_exit_at_top_level_is_a_cell_error(config: Config, notebook: NotebookFactory) -> None:
    cells = students.cells()
    cells.insert(1, "import sys\nsys.exit(0)")
    report = grade(config, notebook(cells))
    assert {t.status for t in report.targets} == {"passed"}
    assert any("SystemExit" in e for e in report.errors)


def test_ipython_lines_are_neutralised_with_a_note(
    config: Config, notebook: NotebookFactory
) -> None:
    cells = students.cells()
    cells[0] = "!pip install numpy\n%matplotlib inline\n" + cells[0]
    report = grade(config, notebook(cells))
    assert {t.status for t in report.targets} == {"passed"}
    assert any("cell 2, line 1" in n and "shell command" in n for n in report.notes)


def test_assignment_is_recognised_from_the_names_defined(
    config: Config, notebook: NotebookFactory
) -> None:
    report = grade_path(notebook(students.cells()), config)
    assert report.assignment == "self_attention"
    assert "from the names it defines" in report.notes[0]


def test_unrecognisable_notebook_is_a_usage_error(
    config: Config, notebook: NotebookFactory
) -> None:
    with pytest.raises(UsageError, match="cannot tell which assignment") as caught:
        grade_path(notebook(["x = 1"]), config)
    assert "(no metadata, and the names it defines" in str(caught.value)


def test_names_that_several_assignments_have_alike_single_none_out(
    config: Config, notebook: NotebookFactory
) -> None:
    """A notebook defining only `softmax` was graded as masked_attention, the assignment
    with the fewest targets of the three that grade a `softmax`; it is not told now, and the
    error names them. A name of one assignment alone still singles it out."""
    lone = students.SETUP + "\n" + students.SOFTMAX
    having = sorted(
        a.id for a in config.assignments.values() if any(t.name == "softmax" for t in a.targets)
    )
    assert len(having) == 3
    with pytest.raises(UsageError, match="cannot tell which assignment") as caught:
        grade_path(notebook([lone]), config)
    where = f"{having[0]}, {having[1]} and {having[2]} alike"
    assert f"the one name it defines that an assignment grades, `softmax`, is in {where}" in str(
        caught.value
    )
    mask = "import numpy as np\ndef causal_mask(L):\n    return np.tril(np.ones((L, L), bool))"
    report = grade_path(notebook([lone, mask]), config)
    assert report.assignment == "masked_attention"
    # The complete set of an assignment's targets singles it out among those that have more.
    report = grade_path(notebook(students.cells()), config)
    assert report.assignment == "self_attention"


def test_metadata_naming_no_assignment_of_the_course_is_said_so(
    config: Config, tmp_path: Path
) -> None:
    """It was told it had "no metadata", though its metadata named an assignment (a typo,
    another course's)."""
    path = write_notebook(tmp_path / "typo.ipynb", ["x = 1"])
    raw = json.loads(path.read_text())
    raw["metadata"]["grader"] = {"assignment": "self_atention"}
    path.write_text(json.dumps(raw))
    with pytest.raises(UsageError) as caught:
        grade_path(path, config)
    said = str(caught.value)
    assert "(its metadata names 'self_atention', which this course does not have, and" in said
    assert "no metadata" not in said


def test_python_script_submission(config: Config, tmp_path: Path) -> None:
    script = tmp_path / "student.py"
    script.write_text("\n\n# %%\n".join(students.cells()))
    report = grade(config, script)
    assert {t.status for t in report.targets} == {"passed"}


def test_unreadable_submission_is_a_submission_error(config: Config, tmp_path: Path) -> None:
    with pytest.raises(SubmissionError, match="no such file"):
        grade(config, tmp_path / "absent.ipynb")


def test_every_solution_is_recognised_by_the_names_it_defines(config: Config) -> None:
    for assignment in config.assignments.values():
        report = grade_path(assignment.solution, config)  # no metadata in solutions
        assert report.assignment == assignment.id
        assert (
            report.notes[0] == f"graded as assignment '{assignment.id}' (from the names it defines)"
        )
        assert report.score == report.max_score


def test_every_exercise_is_recognised_by_its_metadata(config: Config) -> None:
    for assignment in config.assignments.values():
        if assignment.exercise is None:
            continue
        report = grade_path(assignment.exercise, config)
        assert report.assignment == assignment.id
        assert "from the notebook's metadata" in report.notes[0]
        assert report.score == 0


def test_grade_path_takes_a_string_too(config: Config) -> None:
    report = grade_path(str(REPO / "solutions" / "self_attention.ipynb"), config)
    assert report.score == report.max_score


def test_partial_credit_can_be_switched_off(tmp_path: Path, notebook: NotebookFactory) -> None:
    import json

    from grader.course.config import load_config

    from conftest import repo_config_raw

    raw = repo_config_raw()
    raw["assignments"]["self_attention"]["targets"]["scaled_dot_product_self_attention"][
        "partial_credit"
    ] = False
    path = tmp_path / "all_or_nothing.yaml"
    path.write_text(json.dumps(raw))
    strict = load_config(path)
    source = students.cells(scaled_dot_product_self_attention=students.SCALE_HARDCODED)
    result = target(grade(strict, notebook(source)), "scaled_dot_product_self_attention")
    assert result.cases_passed == 1 and result.score == 0


def test_what_is_expected_is_read_while_the_students_child_runs(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    import grader.engine as engine_module
    from grader.run.workers import Workers

    read = threading.Event()
    real_expected, real_run = engine_module.build_expected, Workers.run
    overlapped: list[bool] = []

    def expected_then_say_so(*args: Any, **kw: Any) -> Any:
        try:
            return real_expected(*args, **kw)
        finally:
            read.set()

    def run_once_expected_is_read(self: Workers, cells: Any, *args: Any, **kw: Any) -> Any:
        if [c.source for c in cells] == ada:  # the student's run, not the course's own
            overlapped.append(read.wait(10))
        return real_run(self, cells, *args, **kw)

    monkeypatch.setattr(engine_module, "build_expected", expected_then_say_so)
    monkeypatch.setattr(Workers, "run", run_once_expected_is_read)
    path = REPO / "demo" / "submissions" / "ada.ipynb"
    ada = [c.source for c in load_submission(path).cells]
    report = grade_path(path, config, "self_attention")
    assert overlapped == [True] and report.targets


def test_an_interrupt_while_the_students_child_runs_does_not_wait_for_the_run(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ctrl-C while what is expected is read (the student's run going on beside it) ends the
    # grade at once: it was held until the run ended (up to the submission's time limit)
    import threading

    import grader.engine as engine_module

    ended = threading.Event()

    def a_long_run(*args: Any, **kw: Any) -> Any:
        ended.wait(10)  # the student's run, still going
        ended.set()
        raise RuntimeError("stands in for a run")

    def interrupted(*args: Any, **kw: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(engine_module, "_run", a_long_run)
    monkeypatch.setattr(engine_module, "build_expected", interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            grade_path(REPO / "demo" / "submissions" / "ada.ipynb", config, "self_attention")
        assert not ended.is_set()  # the interrupt came through while the run went on
    finally:
        ended.set()
