"""The `grader` command. The only package that knows about click, exit codes and `Error:` lines.

Exit codes: 0 all passed · 1 some checks failed · 2 usage, config or unreadable submission ·
3 internal error. `main` and what every command shares are in common.py; the commands are in
grading.py (check, grade, report), semester.py (override, comment, export), serving.py
(serve) and authoring.py (init, new-assignment, assign, selftest, release,
export-gradescope, template).
"""

from grader.cli import authoring, grading, semester, serving
from grader.cli.common import main
from grader.cli.grading import check, grade, report
from grader.cli.semester import export_command

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
