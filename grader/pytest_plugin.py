"""pytest plugin: `pytest --notebook homework.ipynb` makes one test item per graded target.

The failure text is the grader's diagnosis, and each item's points go to the JUnit XML as
properties, so `pytest --junitxml` and every pytest-aware CI work unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .config import load_config
from .engine import grade_path
from .errors import GraderError
from .report import TargetResult


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("grader", "grading notebooks")
    group.addoption(
        "--notebook",
        action="append",
        default=[],
        metavar="PATH",
        help="grade this notebook: one test per graded function (repeatable)",
    )
    group.addoption("--grader-assignment", default=None, help="assignment id (default: detect)")
    group.addoption("--grader-config", default=None, help="config.yaml to use")


def _notebooks(config: pytest.Config) -> list[Path]:
    return [Path(p).resolve() for p in config.getoption("notebook") or []]


def pytest_configure(config: pytest.Config) -> None:
    notebooks = _notebooks(config)
    if not notebooks:
        return
    given = config.args_source == pytest.Config.ArgsSource.ARGS
    config.args = [*(config.args if given else []), *(str(p) for p in notebooks)]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.resolve() in _notebooks(parent.config):
        return NotebookFile.from_parent(parent, path=file_path)
    return None


class TargetFailed(Exception):
    def __init__(self, result: TargetResult) -> None:
        super().__init__(result.name)
        self.result = result


class NotebookFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        config_path = self.config.getoption("grader_config")
        try:
            config = load_config(Path(config_path) if config_path else None)
            report = grade_path(self.path, config, self.config.getoption("grader_assignment"))
        except GraderError as exc:
            raise self.CollectError(f"the grader cannot read {self.path}: {exc}") from None
        for result in report.targets:
            yield TargetItem.from_parent(self, name=result.name, result=result)


class TargetItem(pytest.Item):
    def __init__(self, *, result: TargetResult, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.result = result
        self.user_properties += [("score", result.score), ("max_score", result.max_score)]

    def runtest(self) -> None:
        if self.result.status != "passed":
            raise TargetFailed(self.result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if not isinstance(excinfo.value, TargetFailed):
            return str(super().repr_failure(excinfo))
        r = excinfo.value.result
        lines = [f"{r.name}: {r.status}, {r.score:g} / {r.max_score:g} points"]
        if r.location:
            lines.append(f"at {r.location.describe()}")
        if r.mistakes:
            lines.append(f"mistakes: {', '.join(r.mistakes)}")
        return "\n".join([*lines, *r.messages])

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.result.location.line - 1 if self.result.location else None
        return self.path, line, f"{self.name} ({self.result.score:g}/{self.result.max_score:g})"
