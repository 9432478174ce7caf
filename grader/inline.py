"""`check()` for the last cell of a student notebook: the same engine, shown inline.

It grades the notebook *file*, so it sees what was last saved; it says so, with the time.
Inside the grader's own child process it does nothing, so grading never recurses.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path

from grader.course.config import load_course
from grader.course.places import cell_places, relabel
from grader.course.recognise import asked_otherwise
from grader.engine import grade_path
from grader.errors import GraderError
from grader.render.escape import safe_lines
from grader.render.html import render_check
from grader.render.text import render as render_text
from grader.report import Report

CHILD_ENV = "GRADER_CHILD"
# How a course is named, in the notes and errors check() shows.
COURSE_HINT = "check(config='path/to/config.yaml') or $GRADER_COURSE"


@dataclass(frozen=True)
class CheckResult:
    """What `check()` returns: Jupyter shows `_repr_html_`, a terminal shows `repr`."""

    text: str
    html: str
    report: Report | None = None

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return self.html


def _message(text: str) -> CheckResult:
    """A line about why nothing was graded; it may name the student's file or quote its
    content, so no control or bidi character, and no line a CI log takes for a command."""
    from html import escape

    shown = safe_lines(text)
    return CheckResult(shown, f"<p>{escape(shown)}</p>")


def _ipython_notebook_path() -> Path | None:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    vscode = getattr(shell, "user_ns", {}).get("__vsc_ipynb_file__") if shell else None
    return Path(vscode) if vscode else None


def find_notebook() -> Path | None:
    """The notebook being run: Jupyter's session name, VS Code's variable, or the only one here."""
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb") and Path(session).is_file():
        return Path(session)
    if (path := _ipython_notebook_path()) is not None and path.is_file():
        return path
    marked = []
    for candidate in sorted(Path.cwd().glob("*.ipynb")):
        try:
            data = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        meta = data.get("metadata", {}) if isinstance(data, dict) else None
        if isinstance(meta, dict) and "grader" in meta:
            marked.append(candidate)
    return marked[0] if len(marked) == 1 else None


def check(
    target: str | None = None,
    notebook: str | os.PathLike[str] | None = None,
    assignment: str | None = None,
    config: str | os.PathLike[str] | None = None,
) -> CheckResult:
    """Grade this notebook (or one `target` of it) and show what to fix.

    Targets with `public_cases: N` in config.yaml are checked on their first N cases only;
    the instructor's `grader grade` uses them all.
    """
    if os.environ.get(CHILD_ENV):
        return _message("check() does nothing while the grader itself runs this notebook.")
    path = Path(notebook) if notebook else find_notebook()
    if path is None:
        return _message(
            "check() could not tell which notebook this is: call check(notebook='your_file.ipynb')."
        )
    try:
        settings, notes = load_course(Path(config) if config else None, path, COURSE_HINT)
        report = grade_path(path, settings, assignment, public_only=True)
    except GraderError as exc:
        said = asked_otherwise(str(exc), "call check(assignment='…') with one of")
        return _message(f"check() could not grade {path}: {said}")
    report = replace(report, notes=(*report.notes, *notes))
    targets = report.targets
    if target is not None:
        targets = tuple(t for t in targets if t.name == target)
        if not targets:
            names = ", ".join(t.name for t in report.targets)
            return _message(f"no graded function is called {target!r}; the graded ones: {names}")
    saved = time.strftime("%H:%M:%S", time.localtime(path.stat().st_mtime))
    shown = replace(report, targets=targets)
    places = cell_places(path)  # cells named as Jupyter shows them: In [n], the 7th code cell
    heading = f"{path.name}, saved at {saved}"  # which save was graded: did Ctrl-S happen?
    text = f"{heading}\n{relabel(render_text(shown), places)}"
    return CheckResult(text, render_check(shown, targets, heading, places), shown)
