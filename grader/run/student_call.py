"""Where the child calls the notebook's code (a cell, a graded function), in a module of
their own: a time limit's tick that lands in the child's own module (grader/run/child.py)
is the grader's work between the notebook's calls and never raises there, while one that
lands here, or deeper, is the notebook's time (a graded function that is a C builtin runs
with this module's frame innermost)."""

from __future__ import annotations

from types import CodeType
from typing import Any


def run_cell(code: CodeType, namespace: dict[str, Any]) -> None:
    """Run a compiled cell in the notebook's namespace."""
    exec(code, namespace)


def call(fn: Any, args: Any) -> Any:
    """Call a graded function of the notebook's on a case's arguments."""
    return fn(*args)
