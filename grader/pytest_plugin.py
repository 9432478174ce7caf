"""pytest plugin: `pytest --notebook homework.ipynb` makes one test item per graded target.

The failure text is the grader's diagnosis, and each item's points go to the JUnit XML as
properties, so `pytest --junitxml` and every pytest-aware CI work unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from grader.course.config import load_course
from grader.course.locate import choose_course, ignored_configs
from grader.engine import grade_path
from grader.errors import GraderError
from grader.render.escape import one_line, safe_lines
from grader.report import TargetResult, cases_line


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the grader's options: --notebook (repeatable), --grader-assignment, --grader-config."""
    group = parser.getgroup("grader", "grading notebooks")
    group.addoption(
        "--notebook",
        action="append",
        default=[],
        metavar="PATH",
        help="grade this notebook: one test per graded function (repeatable)",
    )
    group.addoption("--grader-assignment", default=None, help="assignment id (default: detect)")
    group.addoption(
        "--grader-config",
        default=None,
        help="config.yaml to use (default: $GRADER_COURSE's or $GRADER_CONFIG, else the one "
        "found in the working folder or above it, unless the notebook lies inside its folder)",
    )


# How a course is named, in the grader's notes and errors.
COURSE_HINT = "--grader-config FILE or $GRADER_COURSE"


# Per notebook: "public cases: k of n passed; m hidden cases are graded when you submit".
CASES_LINES = pytest.StashKey[list[str]]()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Say, after the tests, how many cases were public and how many wait for submission."""
    for line in config.stash.get(CASES_LINES, []):
        terminalreporter.write_line(f"grader: {one_line(line)}")


def _notebooks(config: pytest.Config) -> list[Path]:
    return [Path(p).resolve() for p in config.getoption("notebook") or []]


def pytest_configure(config: pytest.Config) -> None:
    """Add the notebooks given with --notebook to what pytest collects; a usage error for a path
    pytest cannot show safely."""
    notebooks = _notebooks(config)
    if not notebooks:
        return
    for path in notebooks:
        _check_showable(path)
    given = config.args_source == pytest.Config.ArgsSource.ARGS
    config.args = [*(config.args if given else []), *(str(p) for p in notebooks)]


def _check_showable(path: Path) -> None:
    """pytest prints a notebook's path as it is, in test ids and in its own errors: a path
    it cannot show on one printable line (a control or bidi character, a line break), or
    cannot take as a path at all (`::` and `[` are its test-id syntax), is refused before
    pytest sees it, with the name made safe (it may be a forged CI workflow command)."""
    text = str(path)
    if one_line(text) != text or "::" in text or "[" in text:
        raise pytest.UsageError(
            f"--notebook {one_line(text)}: pytest cannot show this path safely (it holds a "
            "control character, a line break, `::` or `[`); rename it, or use `grader check`"
        )


def _given_config(config: pytest.Config) -> Path | None:
    given = config.getoption("grader_config")
    return Path(given) if given else None


def pytest_report_header(config: pytest.Config) -> list[str]:
    """A line for each config.yaml beside a notebook or here that is not the course used."""
    notes: list[str] = []
    for path in _notebooks(config):
        try:  # no course: the notebook's collection error says so
            course = choose_course(_given_config(config), path, COURSE_HINT)
        except GraderError:
            continue
        notes += ignored_configs(course, path, COURSE_HINT)
    unique = dict.fromkeys(notes)
    return [f"grader: note: {one_line(note)}" for note in unique]  # notes name folders


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect a file as a NotebookFile when it is one of the --notebook notebooks."""
    if file_path.resolve() in _notebooks(parent.config):
        return NotebookFile.from_parent(parent, path=file_path)
    return None


class TargetFailed(Exception):
    """Raised by a TargetItem whose target did not pass; carries its result."""

    def __init__(self, result: TargetResult) -> None:
        super().__init__(result.name)
        self.result = result


class NotebookFile(pytest.File):
    """A notebook given with --notebook, graded once when collected."""

    def collect(self) -> Iterator[pytest.Item]:
        """Grade the notebook and yield one item per target; a collection error, with a safe
        message, when it cannot be graded."""
        try:
            config, _ = load_course(_given_config(self.config), self.path, COURSE_HINT)
            report = grade_path(self.path, config, self.config.getoption("grader_assignment"))
        except GraderError as exc:
            # the message names the student's file, and may quote it; once is enough
            said = str(exc).removeprefix(f"{self.path}: ")
            message = safe_lines(f"the grader cannot read {self.path}: {said}")
            raise self.CollectError(message) from None
        if (line := cases_line(report.targets)) is not None:
            self.config.stash.setdefault(CASES_LINES, []).append(f"{self.path.name}: {line}")
        for result in report.targets:
            yield TargetItem.from_parent(self, name=result.name, result=result)


class TargetItem(pytest.Item):
    """One graded target as a pytest test, its score and max_score in the user properties."""

    def __init__(self, *, result: TargetResult, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.result = result
        self.user_properties += [("score", result.score), ("max_score", result.max_score)]

    def runtest(self) -> None:
        """Fail with TargetFailed unless the target passed."""
        if self.result.status != "passed":
            raise TargetFailed(self.result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """A failed target as printable lines: status, points, place, mistakes and messages."""
        if not isinstance(excinfo.value, TargetFailed):
            return str(super().repr_failure(excinfo))
        r = excinfo.value.result
        lines = [f"{r.name}: {r.status}, {r.score:g} / {r.max_score:g} points"]
        if r.location:
            lines.append(f"at {r.location.describe()}")
        if r.mistakes:
            lines.append(f"mistakes: {', '.join(r.mistakes)}")
        # The messages quote the student's exceptions: each stays one printable line.
        return "\n".join(one_line(line) for line in [*lines, *r.messages])

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """The notebook, the 0-based line of the target's location (if any) and a label with its
        points."""
        line = self.result.location.line - 1 if self.result.location else None
        return self.path, line, f"{self.name} ({self.result.score:g}/{self.result.max_score:g})"
