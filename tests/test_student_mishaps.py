"""A careless student's notebook: what it is told must be true and say what to change."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from grader.course.bundle import BUNDLE_NAME
from grader.course.config import Config
from grader.course.locate import choose_course
from grader.course.notebook import load_submission
from grader.engine import grade_path
from grader.errors import ConfigError, SubmissionError
from grader.report import TargetResult

import students
from conftest import REPO, NotebookFactory

ENDLESS_SOFTMAX = "def softmax(items_in):\n    return softmax(items_in)\n"


def _target(results: tuple[TargetResult, ...], name: str) -> TargetResult:
    return next(t for t in results if t.name == name)


def test_a_function_that_calls_itself_forever_is_not_told_to_fix_itself_first(
    config: Config, notebook: NotebookFactory
) -> None:
    path = notebook(students.cells(softmax=ENDLESS_SOFTMAX))
    report = grade_path(path, config, "self_attention")
    own = _target(report.targets, "softmax")
    assert own.status == "error"
    assert not any("fix `softmax` first" in m for m in own.messages), own.messages
    assert any("RecursionError" in m for m in own.messages), own.messages
    # its callers are still sent to it
    caller = _target(report.targets, "attention_loop")
    assert any(m.startswith("fix `softmax` first") for m in caller.messages), caller.messages


def test_a_renamed_function_is_named_where_it_is_defined(
    config: Config, notebook: NotebookFactory
) -> None:
    renamed = students.CORRECT["softmax"].replace("def softmax(", "def my_softmax(")
    path = notebook(students.cells(softmax=renamed))
    report = grade_path(path, config, "self_attention")
    result = _target(report.targets, "softmax")
    assert result.status == "missing" and result.score == 0
    # a markdown title, the setup cell, then one cell per function in CORRECT's order
    cell = 3 + list(students.CORRECT).index("softmax")
    hint = result.messages[-1]
    assert f"`my_softmax` (cell {cell}, line 1)" in hint and "name it `softmax`" in hint, hint
    assert result.location is not None and result.location.cell == cell


def test_another_targets_name_is_never_offered_for_a_missing_one(
    config: Config, notebook: NotebookFactory
) -> None:
    # softmax is left out; softmax_cols (a target of its own) is the nearest name there is
    path = notebook(students.cells(softmax=None))
    result = _target(grade_path(path, config, "self_attention").targets, "softmax")
    assert result.status == "missing"
    assert not any("softmax_cols" in m for m in result.messages), result.messages


def test_a_notebook_saved_mid_write_says_what_to_do(tmp_path: Path) -> None:
    whole = (REPO / "exercises" / "self_attention.ipynb").read_text(encoding="utf-8")
    path = tmp_path / "half.ipynb"
    path.write_text(whole[: len(whole) // 2], encoding="utf-8")
    with pytest.raises(SubmissionError) as caught:
        load_submission(path)
    message = str(caught.value)
    assert "invalid JSON" in message and "Save it again from Jupyter" in message
    assert "\n" not in message


def test_checked_from_another_folder_the_bundle_it_lies_in_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import grader.course.locate as locate

    monkeypatch.setattr(locate, "bundled_config_path", lambda: tmp_path / "none" / "config.yaml")
    bundle = tmp_path / "bundle"
    (bundle / "exercises").mkdir(parents=True)
    (bundle / BUNDLE_NAME).write_bytes(b"")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    graded = bundle / "exercises" / "mine.ipynb"
    with pytest.raises(ConfigError) as caught:
        choose_course(None, graded, "--course DIR")
    message = str(caught.value)
    assert f"{BUNDLE_NAME} in {elsewhere}" in message
    assert f"lies in the student bundle {bundle}: run there" in message
    # a notebook in no bundle is told nothing of one
    with pytest.raises(ConfigError) as plain:
        choose_course(None, elsewhere / "mine.ipynb", "--course DIR")
    assert "student bundle" not in str(plain.value)


def test_a_config_yaml_of_the_students_own_beside_the_bundle_is_no_course(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # r45: a Hydra `config.yaml` in the student's bundle folder was taken for the course:
    # every check failed ("config.yaml holds mine.ipynb", "lies beside mine.ipynb").
    from grader.course.locate import ignored_configs

    bundle = tmp_path / "bundle"
    (bundle / "sub").mkdir(parents=True)
    (bundle / BUNDLE_NAME).write_bytes(b"")
    (bundle / "config.yaml").write_text("model:\n  lr: 0.1\n")
    graded = bundle / "mine.ipynb"
    for where in (bundle, bundle / "sub"):
        monkeypatch.chdir(where)
        course = choose_course(None, graded, "--course DIR")
        assert course.config == bundle / BUNDLE_NAME, where
        assert ignored_configs(course, graded, "--course DIR") == []
    assert choose_course(bundle / BUNDLE_NAME, graded).config == bundle / BUNDLE_NAME


@pytest.mark.parametrize(
    ("metadata", "said"),
    [
        ({"kernelspec": {"name": "ir", "language": "R", "display_name": "R"}}, "R"),
        ({"language_info": {"name": "julia"}}, "julia"),
        ({"kernelspec": {"name": "python3", "language": "python"}}, None),
        ({}, None),
    ],
)
def test_a_notebook_for_another_language_is_told_its_cells_run_as_python(
    notebook: NotebookFactory, metadata: dict[str, object], said: str | None
) -> None:
    path = notebook(["x = 1"], metadata=metadata)
    notes = [n for n in load_submission(path).notes if "kernel" in n]
    if said is None:
        assert notes == []
    else:
        assert len(notes) == 1 and f"set to a {said} kernel" in notes[0], notes
        assert "Python 3 kernel" in notes[0]


def test_an_answer_that_is_no_numbers_is_not_said_to_ignore_its_inputs(
    config: Config, notebook: NotebookFactory
) -> None:
    words = "def softmax(items_in):\n    return 'the softmax of ' + str(len(items_in))\n"
    result = _target(grade_path(notebook(students.cells(softmax=words)), config).targets, "softmax")
    assert result.status == "failed"
    assert any("returned a str, not numbers" in m for m in result.messages), result.messages
    assert not any(m.startswith("ignores") for m in result.messages), result.messages


def test_a_notebook_too_large_for_its_outputs_is_told_to_clear_them(tmp_path: Path) -> None:
    path = tmp_path / "plots.ipynb"
    path.write_bytes(b"")
    os.truncate(path, 51 << 20)  # sparse: the size is what is refused, before any reading
    with pytest.raises(SubmissionError) as caught:
        load_submission(path)
    assert "larger than the 50 MB limit; clear its outputs" in str(caught.value)


@pytest.mark.parametrize(
    ("name", "advice"),
    [("script.py", "save it as UTF-8"), ("nb.ipynb", "save the notebook from Jupyter")],
)
def test_text_that_is_not_utf8_is_told_how_to_save_it(
    tmp_path: Path, name: str, advice: str
) -> None:
    path = tmp_path / name
    path.write_bytes("# %%\nx = 'café'\n".encode("latin-1"))
    with pytest.raises(SubmissionError) as caught:
        load_submission(path)
    assert "not UTF-8 text" in str(caught.value) and advice in str(caught.value)


def test_a_cell_that_asks_for_input_is_told_nobody_answers(
    config: Config, notebook: NotebookFactory
) -> None:
    path = notebook([*students.cells(), "name = input('your name? ')"])
    report = grade_path(path, config, "self_attention")
    said = [e for e in report.errors if "EOFError" in e]
    assert len(said) == 1 and "Nobody can type an answer to input()" in said[0], report.errors
    assert report.score == report.max_score  # the functions are graded all the same


def test_an_import_the_grader_does_not_have_is_told_what_there_is(
    config: Config, notebook: NotebookFactory
) -> None:
    # r50 #11: a bare "No module named 'matplotlib'" for a module the student has at home.
    inside = students.SOFTMAX.replace("def softmax(items_in):\n", "def softmax(items_in):\n"
                                      "    import seaborn_at_home\n", 1)  # fmt: skip
    assert inside != students.SOFTMAX
    path = notebook([*students.cells(softmax=inside), "import plotting_at_home as plt"])
    report = grade_path(path, config, "self_attention")
    said = [e for e in report.errors if "plotting_at_home" in e]
    assert len(said) == 1 and "ModuleNotFoundError" in said[0], report.errors
    assert "only Python's standard library, NumPy and the modules your course lists" in said[0]
    own = _target(report.targets, "softmax")
    assert own.status == "error"
    told = [m for m in own.messages if "seaborn_at_home" in m]
    assert told and "ask your instructor" in told[0], own.messages


def test_a_name_a_crashed_cell_never_set_is_told_the_crash(
    config: Config, notebook: NotebookFactory
) -> None:
    # r52 S1: `import matplotlib.pyplot as plt` failed before `import numpy as np` on the
    # next line, and every function was told only "name 'np' is not defined".
    first, *rest = students.cells()
    assert first.startswith("import numpy as np")
    path = notebook(["import plotting_at_home as plt\n" + first, *rest])
    report = grade_path(path, config, "self_attention")
    softmax = _target(report.targets, "softmax")
    said = [m for m in softmax.messages if m.startswith("`np` is not defined because cell")]
    assert len(said) == 1, softmax.messages
    assert re.match(r"`np` is not defined because cell (\d+) stopped before line 2, which sets "
                    r"it: raised ModuleNotFoundError: No module named 'plotting_at_home' "
                    r"\(cell \1, line 1\)", said[0]), said  # fmt: skip
    assert softmax.messages.index(said[0]) < next(
        i for i, m in enumerate(softmax.messages) if "NameError" in m
    )
    # the hint on modules is told once, with the notebook's problems, not beside each target
    assert sum("ask your instructor" in e for e in report.errors) == 1, report.errors
    told = [m for t in report.targets for m in t.messages if "ask your instructor" in m]
    assert not told, told
    # a name no crashed cell sets is told nothing of the sort
    path = notebook([first.replace("import numpy as np", "import numpy"), *rest])
    report = grade_path(path, config, "self_attention")
    softmax = _target(report.targets, "softmax")
    assert any("name 'np' is not defined" in m for m in softmax.messages), softmax.messages
    assert not any("is not defined because cell" in m for m in softmax.messages)


def test_a_callee_whose_cell_crashed_is_told_once_in_its_own_entry(
    config: Config, notebook: NotebookFactory
) -> None:
    """r52 M9: `softmax_cols` defined in a cell whose `import scipy` failed; each caller
    repeated the crash, hint and all, beside "fix `softmax_cols` first"."""
    cell = students.CORRECT["softmax_cols"]
    report = grade_path(
        notebook(students.cells(softmax_cols="import scipy_at_home\n" + cell)),
        config,
        "self_attention",
    )
    own = _target(report.targets, "softmax_cols")
    assert own.status == "missing"
    assert any("scipy_at_home" in m and "ask your instructor" in m for m in own.messages)
    for caller in ("self_attention", "scaled_dot_product_self_attention"):
        result = _target(report.targets, caller)
        assert any(m.startswith("fix `softmax_cols` first") for m in result.messages)
        assert not any("scipy_at_home" in m for m in result.messages), result.messages


def test_a_function_rebound_to_its_result_is_no_global_read_in_its_callers(
    config: Config, notebook: NotebookFactory
) -> None:
    # r52 S4: `softmax = softmax([1.0, 2.0, 3.0])` made attention_loop "uses_global: reads
    # the notebook's global `softmax` ... use the arguments instead"; calling it is its job.
    path = notebook([*students.cells(), "softmax = softmax(np.array([1.0, 2.0, 3.0]))"])
    report = grade_path(path, config, "self_attention")
    softmax = _target(report.targets, "softmax")
    assert any("assigns `softmax` after its `def`" in m for m in softmax.messages)
    caller = _target(report.targets, "attention_loop")
    assert caller.status == "error" and "uses_global" not in caller.mistakes, caller.mistakes
    assert any(m.startswith("fix `softmax` first") for m in caller.messages), caller.messages


def test_a_callee_that_passes_its_own_cases_is_not_told_to_be_fixed_first(
    fast_config: Config, notebook: NotebookFactory
) -> None:
    # r52 S2: softmax_cols ✓ passed, and self_attention said "fix `softmax_cols` first ...
    # `softmax_cols` never finished": it ends on its own cases, and is too slow for the caller.
    slow = students.SOFTMAX_COLS.replace(
        "def softmax_cols(data_in):\n",
        "def softmax_cols(data_in):\n"
        "    while sys._getframe(1).f_code.co_name == 'self_attention':\n"
        "        pass\n",
    )
    path = notebook(["import sys", *students.cells(softmax_cols=slow)])
    report = grade_path(path, fast_config, "self_attention")
    assert _target(report.targets, "softmax_cols").status == "passed"
    caller = _target(report.targets, "self_attention")
    assert caller.status == "timeout"
    assert not any("fix `softmax_cols` first" in m for m in caller.messages), caller.messages
    said = [m for m in caller.messages if "passes its own cases but did not finish" in m]
    assert len(said) == 1 and said[0].startswith(
        "`self_attention` calls `softmax_cols`, which passes its own cases"
    ), caller.messages
    assert "inside the `while` loop at line 2: make this loop do less" in said[0]


def test_a_cell_looping_over_a_helper_is_not_placed_on_the_helpers_def_line(
    fast_config: Config, notebook: NotebookFactory
) -> None:
    # r52 S7: "cell 20: did not finish within the time limit (cell 16, line 1)", the `def`
    # line of the helper its endless loop called, where the time limit's signal was taken.
    inner = (
        "def inner(v):\n    e = np.exp(v - v.max(axis=0, keepdims=True))\n"
        "    return e / e.sum(axis=0, keepdims=True)\n"
    )
    outer = (
        "def outer(x, w):\n    q = w @ x\n    k = w @ x\n    a = inner(k.T @ q)\n    return x @ a\n"
    )
    endless = "x, w = np.ones((4, 3)), np.ones((4, 4))\nwhile True:\n    y = outer(x, w)\n"
    path = notebook([*students.cells(), inner, outer, endless])
    for _ in range(3):  # where the signal is taken varies: each run must name no `def` line
        report = grade_path(path, fast_config, "self_attention")
        said = [e for e in report.errors if "did not finish within the time limit" in e]
        assert len(said) == 1, report.errors
        last = int(said[0].split(":")[0].removeprefix("cell "))
        assert f"(cell {last - 2}, line 1)" not in said[0], said
        assert f"(cell {last - 1}, line 1)" not in said[0], said


IMPORTS = """\
import helper
import json, os.path
import click
import cycler
from jinja2 import Template
try:
    import pandas
except ImportError:
    pandas = None
"""


@pytest.mark.parametrize(("assignment", "noted"), [
    ("self_attention", ["click", "cycler", "jinja2"]),
    ("udl_12_1", ["click", "jinja2"]),  # matplotlib is preloaded, and cycler with it
])  # fmt: skip
def test_an_import_only_an_unsandboxed_run_finds_is_noted(
    config: Config, notebook: NotebookFactory, assignment: str, noted: list[str]
) -> None:
    # A student's laptop without the sandbox found click; the instructor's sandbox did not,
    # and the same notebook failed there with no warning beforehand.
    cells = [*students.cells(), "%%writefile helper.py\nX = 1\n", IMPORTS]
    path = notebook(cells)
    bare = grade_path(path, config, assignment, sandbox="none")
    said = [n for n in bare.notes if "a notebook graded in the sandbox finds only" in n]
    assert [n.split("`")[1] for n in said] == noted, bare.notes
    assert re.match(r"cell \d+, line 3: `click` is imported", said[0]), said
    assert ("(matplotlib)" in said[0]) == (assignment == "udl_12_1"), said
    assert not any("ModuleNotFoundError" in e for e in bare.errors), bare.errors
    boxed = grade_path(path, config, assignment)
    assert not any("a notebook graded in the sandbox" in n for n in boxed.notes), boxed.notes
    failed = [e for e in boxed.errors if "ModuleNotFoundError" in e]
    assert len(failed) == 1 and "No module named 'click'" in failed[0], boxed.errors


def test_a_returned_array_too_large_to_send_is_said_as_its_size(
    config: Config, notebook: NotebookFactory
) -> None:
    # The child used to turn it into a string first: "returned a str, not numbers".
    huge = students.SOFTMAX_COLS.replace("return exp_values / denom", "return np.zeros(2_000_000)")
    report = grade_path(notebook(students.cells(softmax_cols=huge)), config)
    result = _target(report.targets, "softmax_cols")
    assert result.status == "failed"
    assert any(
        "returned an array of 2000000 numbers, too many to compare" in m for m in result.messages
    ), result.messages
