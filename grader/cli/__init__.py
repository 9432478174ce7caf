"""The `grader` command. The only package that knows about click, exit codes and `Error:` lines.

Exit codes: 0 all passed · 1 some checks failed · 2 usage, config or unreadable submission ·
3 internal error. `main` and what every command shares are in common.py; the commands are in
grading.py (check, grade, report), semester.py (override, comment, export), serving.py
(serve), authoring.py (init, new-assignment, assign, selftest, release,
export-gradescope, template) and cache.py (cache).
"""

import importlib
from typing import Any

from grader.cli.common import main

# What this package names, and the module that holds it: imported on first use, so that a
# command imports only its own module (grader/cli/common.py's LazyGroup).
_LAZY = {
    "authoring": ("authoring", None),
    "grading": ("grading", None),
    "semester": ("semester", None),
    "serving": ("serving", None),
    "check": ("grading", "check"),
    "grade": ("grading", "grade"),
    "report": ("grading", "report"),
    "export_command": ("semester", "export_command"),
}


def __getattr__(name: str) -> Any:
    """A command or a commands' module, imported on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = importlib.import_module(f"grader.cli.{module_name}")
    return module if attribute is None else getattr(module, attribute)


__all__ = [
    "authoring",
    "check",
    "export_command",
    "grade",
    "grading",
    "main",
    "report",
    "semester",
    "serving",
]
