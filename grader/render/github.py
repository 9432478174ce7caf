"""`--format github`: workflow commands that annotate the notebook, and a job summary table.

GitHub shows at most 10 error annotations per step, so the rest are folded into one notice.
Every student-derived string is escaped, so no message can start a command of its own, and
each message is put on one line first (the annotation's own line breaks separate messages).
"""

from __future__ import annotations

import os
from pathlib import Path

from grader.render.escape import one_line, workflow_data, workflow_property
from grader.render.markdown import render as render_markdown
from grader.report import Report, TargetResult, cases_line

MAX_ANNOTATIONS = 10


def _annotation(report: Report, target: TargetResult) -> str:
    props = [f"file={workflow_property(report.submission)}"]
    if target.location is not None:
        props.append(f"line={target.location.file_line or target.location.line}")
    title = f"{target.name}: {target.status} ({target.score:g}/{target.max_score:g})"
    props.append(f"title={workflow_property(title)}")
    named = [f"[{', '.join(target.mistakes)}]"] if target.mistakes else []
    body = "\n".join(map(one_line, [*named, *target.messages]))
    return f"::error {','.join(props)}::{workflow_data(body)}"


def render(report: Report) -> str:
    """Workflow commands for the log; the Markdown report appended to the job summary."""
    failing = [t for t in report.targets if t.status != "passed"]
    lines = [_annotation(report, t) for t in failing[:MAX_ANNOTATIONS]]
    if len(failing) > MAX_ANNOTATIONS:
        rest = ", ".join(t.name for t in failing[MAX_ANNOTATIONS:])
        lines.append(f"::notice title=More failing targets::{workflow_data(rest)}")
    for error in report.errors:
        lines.append(f"::warning title=Notebook problem::{workflow_data(one_line(error))}")
    score = f"{report.score:g} / {report.max_score:g} points"
    if (cases := cases_line(report.targets)) is not None:  # a student bundle's public cases
        score += f"; {cases}"
    lines.append(f"::notice title=Score::{workflow_data(score)}")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:
            with Path(summary).open("a", encoding="utf-8") as handle:
                handle.write(render_markdown(report) + "\n")
        except OSError as exc:  # the annotations and the score still reach the log
            said = f"the job summary {summary} cannot be written ({exc.strerror or exc})"
            lines.append(f"::warning title=No job summary::{workflow_data(said)}")
    return "\n".join(lines)
