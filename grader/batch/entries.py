"""What grading a class yields: one Entry per student, the Batch over the class, and the log
where a bug of the grader's own is kept with its traceback."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from grader.batch.roster import Student
from grader.render.escape import one_line, safe_lines
from grader.report import Report


@dataclass(frozen=True)
class Entry:
    """One student's outcome: a report, or why there is none."""

    student: str
    path: Path | None
    report: Report | None
    problem: str = ""
    skipped: bool = False  # unchanged since the gradebook last graded it
    fault: str = ""  # a traceback: the problem is a bug in the grader, not the student's doing
    absent: bool = False  # on the roster, no submission found
    lost: bool = False  # not graded for a fault on the grader's side (no worker, no sandbox)


@dataclass
class Batch:
    """The outcome of grading a class: one entry per student, problems, lost submissions, the time
    taken, and the roster when the course has one."""

    entries: list[Entry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # not graded for a fault on the grader's side (a worker that died or could not start, a
    # sandbox that could not be set up): the students, whom the same command grades again
    lost: list[str] = field(default_factory=list)
    seconds: float = 0.0
    roster: list[Student] | None = None  # the course's roster.csv, when it has one
    unmatched: list[str] = field(default_factory=list)  # submissions of no roster student
    file_times: list[str] = field(default_factory=list)  # handed in when the file says
    # lines on the instructor's files: an extensions.csv row naming no one, without a roster
    warnings: list[str] = field(default_factory=list)
    # (student, note): graded as the class's assignment though the notebook looked like another
    graded_as_class: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ungraded(self) -> list[Entry]:
        """Submissions found but not graded (unreadable, …); not roster students without one."""
        return [e for e in self.entries if e.report is None and not e.absent]

    @property
    def graded(self) -> int:
        """How many submissions were graded in this run (not those skipped as unchanged)."""
        return sum(e.report is not None and not e.skipped for e in self.entries)

    @property
    def skipped(self) -> int:
        """How many submissions were skipped as unchanged since the gradebook last graded them."""
        return sum(e.skipped for e in self.entries)

    @property
    def faults(self) -> list[Entry]:
        """The entries whose grading hit a bug in the grader (they carry a traceback)."""
        return [e for e in self.entries if e.fault]


FAULT_LOG = "grader-faults.log"  # one of submissions.OUTPUTS


def log_fault(out: Path, entry: Entry) -> Path:
    """Append a grader fault's whole traceback to OUT/grader-faults.log, for a bug report.
    The name, the path and the exception's message may be the student's: the header stays
    one line, and no line of the log can move a terminal's cursor or be a CI command."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / FAULT_LOG
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    head = one_line(f"--- {stamp} {entry.student} ({entry.path})")
    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"{head}\n{safe_lines(entry.fault.rstrip())}\n\n")
    return path
