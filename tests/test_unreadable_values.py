"""A value the notebook hands the grader may run the notebook's own code when it is read (a
list subclass's __iter__, a __del__, a str subclass written to stdout, an exception class
with a metaclass): what loops or raises there costs the function that returned it, never
the process and with it every other function of the notebook (exit code 70). So does an
exception whose message loops or fails, or the time limit ending while an error is read.
And a function that catches the exception that stops it at its time limit, and goes on, is
told so."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader.course.config import Config
from grader.engine import grade_path
from grader.report import Report

import students
from conftest import write_notebook

RETURN = "    return all_queries, all_keys, all_values"

LOOPING_STR = """\
class Stuck(Exception):
    def __str__(self):
        while True:
            pass"""

FAILING_STR = """\
class Broken(Exception):
    def __str__(self):
        raise ValueError("not today")"""

# The class redefines __traceback__: where the error is comes from the exception itself.
FALSE_TRACEBACK = """\
class Liar(Exception):
    __traceback__ = property(lambda self: 1 / 0)"""


def returning(value: str, defined: str) -> str:
    """qkv_loop, right but for what it returns, after the class it needs."""
    assert RETURN in students.QKV_LOOP
    return defined + "\n" + students.QKV_LOOP.replace(RETURN, f"    return {value}")


def graded(
    config: Config, tmp_path: Path, *extra: str, use: bool = False, **functions: str
) -> Report:
    """Graded; without the cell that uses the functions unless `use` (its own run of them
    is another matter)."""
    cells = students.cells(**functions)[: None if use else -1]
    path = write_notebook(tmp_path / "s.ipynb", [*cells, *extra])
    return grade_path(path, config, "self_attention", sandbox="none")


def only_lost(report: Report, name: str) -> str:
    """The messages of `name`, the one function without its points (the others have all)."""
    lost = [t for t in report.targets if t.score < t.max_score]
    assert [t.name for t in lost] == [name], [(t.name, t.messages) for t in lost]
    assert not any("exited early" in e or "time limit" in e for e in report.errors), report.errors
    return " ".join(lost[0].messages)


ITER_RAISES = """\
class Listed(list):
    def __iter__(self):
        raise KeyError("boom")"""

ITER_LOOPS = """\
class Listed(list):
    def __iter__(self):
        while True:
            pass"""

DEL_LOOPS = """\
class Held:
    def __del__(self):
        while True:
            pass"""


@pytest.mark.parametrize(
    ("defined", "value", "said"),
    [
        (ITER_RAISES, "Listed(all_queries)", "(reading it raised KeyError)"),
        (ITER_LOOPS, "Listed(all_queries)", "(reading it took longer than 1 s)"),
        (DEL_LOOPS, "Held()", "(reading it took longer than 1 s)"),
    ],
)
def test_a_value_that_cannot_be_read_costs_its_function_alone(
    fast_config: Config, tmp_path: Path, defined: str, value: str, said: str
) -> None:
    report = graded(fast_config, tmp_path, qkv_loop=returning(value, defined))
    text = only_lost(report, "qkv_loop")
    assert f"gave a value the grader cannot read {said}" in text or said in text, text


def test_a_str_subclass_written_to_stdout_is_kept_as_plain_text(
    fast_config: Config, tmp_path: Path
) -> None:
    written = """\
import sys
class Odd(str):
    def __getitem__(self, index):
        return 5
    def __len__(self):
        raise KeyError("boom")
sys.stdout.write(Odd("hello"))"""
    report = graded(fast_config, tmp_path, written)
    assert report.score == report.max_score and not report.errors, report.errors


@pytest.mark.parametrize(
    "defined",
    [
        # A metaclass whose __hash__ raises: the grader's note of unreadable classes.
        "class M(type):\n    def __hash__(cls):\n        raise KeyError('boom')\n"
        "class Err(Exception, metaclass=M):\n    pass",
        # A class name that is a str subclass whose str() raises.
        "class Name(str):\n    def __str__(self):\n        raise KeyError('boom')\n"
        "class Err(Exception):\n    pass\nErr.__name__ = Name('Err')",
    ],
)
def test_an_exception_of_an_odd_class_is_its_cells_error(
    fast_config: Config, tmp_path: Path, defined: str
) -> None:
    report = graded(fast_config, tmp_path, defined, "raise Err('stop')")
    assert len(report.errors) == 1 and "raised Err" in report.errors[0], report.errors
    assert report.score == report.max_score


def test_a_function_that_catches_its_time_limit_and_goes_on_is_told_so(
    fast_config: Config, tmp_path: Path
) -> None:
    swallowing = students.SOFTMAX.replace(
        "    items_out =",
        "    try:\n        while True:\n            pass\n    except BaseException:\n"
        "        pass\n    items_out =",
    )
    report = graded(fast_config, tmp_path, softmax=swallowing)
    softmax = next(t for t in report.targets if t.name == "softmax")
    assert softmax.status == "timeout" and softmax.score == 0, softmax
    text = " ".join(softmax.messages)
    assert "caught the exception that stops it at the time limit" in text, text


def test_a_function_that_catches_its_time_limit_and_raises_its_own_error_is_told_both(
    fast_config: Config, tmp_path: Path
) -> None:
    # Said before: "caught the exception … and went on", which it had not, its own error
    # dropped; and the cases not called after it: "no answer from the notebook".
    giving_up = students.SOFTMAX.replace(
        "    items_out =",
        "    try:\n        while True:\n            pass\n    except BaseException:\n"
        "        raise ValueError('gave up waiting')\n    items_out =",
    )
    report = graded(fast_config, tmp_path, softmax=giving_up)
    softmax = next(t for t in report.targets if t.name == "softmax")
    assert softmax.status == "timeout" and softmax.score == 0, softmax
    text = "\n".join(softmax.messages)
    assert "caught the exception that stops it at the time limit (a bare" in text, text
    assert "and raised ValueError: gave up waiting instead" in text, text
    assert "went on" not in text and "no answer" not in text, text
    later = "cases 2, 3, 4, 5, 6: not called: case 1 ran out of the per-call time limit"
    assert later in text, text


def test_a_retry_loop_that_catches_its_time_limit_costs_its_function_alone(
    fast_config: Config, tmp_path: Path
) -> None:
    # r41, r45: the child ended the whole process at such a loop (every later function and,
    # from a demo cell, every function lost); its next line now raises the exception again,
    # out of the `except:` that swallowed it.
    retrying = students.SOFTMAX.replace(
        "    items_out =",
        "    while True:\n        try:\n            time.sleep(0.01)\n"
        "        except:\n            pass\n    items_out =",
    )
    demo = "for i in range(10_000):\n    try:\n        time.sleep(0.01)\n    except:\n        pass"
    report = graded(fast_config, tmp_path, "import time", demo, softmax=retrying)
    assert not any("went on catching" in e for e in report.errors), report.errors
    (cell,) = [e for e in report.errors if "caught the exception that stops it" in e]
    assert "was stopped at its next line" in cell, cell
    lost = {t.name for t in report.targets if t.score < t.max_score}
    assert lost == {"softmax", "attention_loop"}, [(t.name, t.messages) for t in report.targets]
    softmax = next(t for t in report.targets if t.name == "softmax")
    assert softmax.status == "timeout", softmax
    assert "was stopped at its next line" in " ".join(softmax.messages), softmax.messages


@pytest.mark.parametrize(
    "entered",
    ["mock.patch.object(np, 'exp', np.expm1)", "open('/dev/null')", "np.errstate(all='raise')"],
)
def test_a_retry_loop_around_a_with_is_stopped_after_its_exit_runs(
    fast_config: Config, tmp_path: Path, entered: str
) -> None:
    # r47: the stop at the next line fired on the `with`'s own exit, before `__exit__`: a
    # mock.patch stayed applied and the correct functions graded after it failed; a `with`
    # inside the retried `try` also ended the whole process.
    retrying = (
        "from unittest import mock\n"
        "def softmax(items_in):\n"
        "    for attempt in range(4):\n"
        "        try:\n"
        f"            with {entered}:\n"
        "                while True:\n"
        "                    pass\n"
        "        except:\n"
        "            pass\n"
        "    return np.exp(items_in) / np.sum(np.exp(items_in))\n"
    )
    report = graded(fast_config, tmp_path, softmax=retrying)
    lost = {t.name for t in report.targets if t.score < t.max_score}
    assert lost == {"softmax", "attention_loop"}, [(t.name, t.messages) for t in report.targets]
    assert not any("went on catching" in e for e in report.errors), report.errors


def test_a_function_compiled_under_a_cell_like_name_fails_alone(
    fast_config: Config, tmp_path: Path
) -> None:
    # r47: `<cell x>` was read as a cell's number where the error's place is found: the
    # child died (exit 70) and every function of the notebook was lost.
    odd = "exec(compile('def softmax(items_in):\\n    raise ValueError(1)\\n', '<cell x>', 'exec'))"
    report = graded(fast_config, tmp_path, softmax=odd)
    lost = {t.name: " ".join(t.messages) for t in report.targets if t.score < t.max_score}
    assert sorted(lost) == ["attention_loop", "softmax"], lost  # attention_loop calls it
    assert "raised ValueError: 1" in lost["softmax"]
    assert not any("exited early" in e for e in report.errors), report.errors


def test_code_that_hides_from_the_stop_is_ended_and_told_why(
    fast_config: Config, tmp_path: Path
) -> None:
    # The same loop compiled under a file name of the grader's own, where the next line is
    # never stopped: the child ends the process, and says why.
    hidden = (
        "import os, grader\n"
        "where = os.path.join(os.path.dirname(grader.__file__), 'hidden.py')\n"
        "exec(compile('def spin():\\n    while True:\\n        try:\\n"
        "            time.sleep(0.01)\\n        except:\\n            pass\\n', where, 'exec'))"
    )
    retrying = students.SOFTMAX.replace("    items_out =", "    spin()\n    items_out =")
    report = graded(fast_config, tmp_path, "import time", hidden, softmax=retrying)
    said = "went on catching the exception that stops it at the time limit"
    assert any(said in e for e in report.errors), report.errors
    softmax = next(t for t in report.targets if t.name == "softmax")
    assert softmax.status == "timeout" and softmax.score == 0, softmax
    assert next(t for t in report.targets if t.name == "qkv_loop").score > 0  # graded before


def test_a_notebooks_own_exit_71_is_its_exit_code_not_a_caught_limit(
    fast_config: Config, tmp_path: Path
) -> None:
    # r42: the child's own code for "went on catching its limit" is 71; a notebook's
    # os._exit(71) was told as that, of code that caught nothing.
    report = graded(fast_config, tmp_path, "import os\nos._exit(71)")
    assert any("exited early (exit code 71)" in e for e in report.errors), report.errors
    assert not any("catching" in e for e in report.errors), report.errors


@pytest.mark.parametrize(
    ("defined", "raised", "said"),
    [
        (LOOPING_STR, "Stuck", "its message could not be read: str() ran past 0.2 s"),
        (FAILING_STR, "Broken", "its message could not be read: str() raised ValueError"),
        (FALSE_TRACEBACK, "Liar", "raised Liar (cell"),
    ],
)
def test_a_cell_whose_exception_cannot_be_read_is_that_cells_error(
    fast_config: Config, tmp_path: Path, defined: str, raised: str, said: str
) -> None:
    report = graded(fast_config, tmp_path, defined, f"x = 1\nraise {raised}()", use=True)
    assert len(report.errors) == 1, report.errors
    # The last cell's error, placed on its line 2 (the `raise`).
    assert re.fullmatch(rf"cell (\d+): raised {raised}.*\(cell \1, line 2\)", report.errors[0])
    assert said in report.errors[0]
    assert report.score == report.max_score  # every function is graded as ever


def test_a_function_whose_exception_cannot_be_read_fails_alone(
    fast_config: Config, tmp_path: Path
) -> None:
    softmax = students.SOFTMAX.replace(
        "def softmax(items_in):", "def softmax(items_in):\n    raise Stuck()"
    )
    report = graded(fast_config, tmp_path, use=True, softmax=LOOPING_STR + "\n" + softmax)
    by_name = {t.name: t for t in report.targets}
    assert by_name["softmax"].status == "error", by_name["softmax"]
    assert by_name["softmax"].score == 0
    text = " ".join(by_name["softmax"].messages)
    assert "Stuck" in text and "str() ran past" in text, text
    others = [t for t in report.targets if t.name not in ("softmax", "attention_loop")]
    assert others and all(t.score == t.max_score for t in others), others
    assert not any("exited early" in e for e in report.errors), report.errors


def test_a_function_from_outside_the_cells_is_stopped_at_its_limit(
    fast_config: Config, tmp_path: Path
) -> None:
    # Defined by exec (as one imported from a %%writefile module is): none of its frames is
    # a cell's, and the limit must still stop it, costing it alone.
    endless = "exec('def qkv_loop(*args):\\n    while True:\\n        pass\\n')"
    report = graded(fast_config, tmp_path, qkv_loop=endless)
    qkv = next(t for t in report.targets if t.name == "qkv_loop")
    assert qkv.status == "timeout", qkv
    assert report.score == report.max_score - qkv.max_score, report.targets


def test_a_finite_loop_that_catches_the_limit_costs_its_cell_alone(
    fast_config: Config, tmp_path: Path
) -> None:
    retries = (
        "import time\nfor i in range(30):\n    try:\n        time.sleep(0.05)\n"
        "    except:\n        pass"
    )
    report = graded(fast_config, tmp_path, retries)
    assert report.score == report.max_score
    assert len(report.errors) == 1 and "caught the exception that stops it" in report.errors[0]


def test_the_notebooks_own_alarm_between_cells_still_ends_it(
    fast_config: Config, tmp_path: Path
) -> None:
    # Its one-shot timer comes due while the grader compiles the next (large) cell, with
    # the limit's timer stopped: a SIGALRM at its default action, as in Jupyter.
    large = "x = [" + ", ".join(["1"] * 200_000) + "]"
    alarm = "import signal\nsignal.setitimer(signal.ITIMER_REAL, 0.05)"
    report = graded(fast_config, tmp_path, alarm, large)
    assert any("crashed (SIGALRM)" in e for e in report.errors), report.errors
