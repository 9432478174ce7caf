"""Where each student stands on an assignment: autograded points, overrides, comments, and
why there is no grade. The one view grades.csv, the class report and the exports share, so
their totals cannot disagree.

With a roster the view covers exactly the roster, in its order: a student without a
submission is there with 0 and "no submission". Without one, it covers whoever was graded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from grader.batch.gradebook import Gradebook
from grader.batch.lateness import stored_late
from grader.batch.records import TOTAL, Comment, Override, comments, overrides, stored_roster
from grader.batch.roster import Student
from grader.course.config import AssignmentSpec
from grader.course.deadline import Late
from grader.judge.aggregate import scores_only
from grader.render.feedback import Adjusted
from grader.render.formats import GRADES_FORMATS
from grader.render.grades import Grades
from grader.render.whole_file import write_text
from grader.report import Report, TargetResult

NO_SUBMISSION = "no submission"


@dataclass(frozen=True)
class Standing:
    """One student's line of the gradebook."""

    student: str
    report: Report | None
    problem: str = ""
    name: str = ""
    section: str = ""
    email: str = ""
    lms_id: str = ""
    overrides: tuple[Override, ...] = ()
    comments: tuple[Comment, ...] = ()
    late: Late | None = None
    problem_file: str = ""  # the file the problem is about, as the gradebook stored it

    @property
    def shown_problem(self) -> str:
        """Why there is no grade, as a student may read it (an LMS's feedback): the file
        named by its name only, never with the folders it lay in on the grading machine."""
        if not self.problem_file:
            return self.problem
        return self.problem.replace(self.problem_file, PurePath(self.problem_file).name)

    @property
    def autograded(self) -> float:
        """The points the grader gave (0 without a report)."""
        return self.report.score if self.report is not None else 0  # written "0", as before

    def points(self, target: str) -> float:
        """A target's points: its override if there is one, else the autograded points."""
        for override in self.overrides:
            if override.target == target:
                return override.points
        if self.report is None:
            return 0
        return next((t.score for t in self.report.targets if t.name == target), 0)

    @property
    def total(self) -> float:
        """The assignment's points: an override of the total (it replaces the penalised
        value), else the sum over targets (overrides applied) less any late penalty."""
        for override in self.overrides:
            if override.target == TOTAL:
                return override.points
        return self.late.apply(self.before_penalty) if self.late else self.before_penalty

    @property
    def before_penalty(self) -> float:
        """The sum over targets, overrides of targets applied, before any late penalty. With
        a report, its targets only: an override of a function the config no longer grades
        (removed, renamed) does not count. Without one, the overridden targets."""
        if not any(o.target for o in self.overrides):
            return self.autograded
        if self.report is not None:
            return sum(self.points(t.name) for t in self.report.targets)
        return sum(self.points(o.target) for o in self.overrides if o.target)

    @property
    def penalty(self) -> float:
        """The late penalty in percent (0: on time, or no late policy)."""
        return self.late.percent if self.late else 0.0

    @property
    def lateness(self) -> str:
        """One line on when it was handed in and what that cost ("" when nothing to say)."""
        if self.late is None or (self.late.minutes <= 0 and "modification" not in self.late.note):
            return ""
        return self.late.note

    def stand_in(self, spec: AssignmentSpec) -> Report:
        """For a student without a graded notebook (one that could not be read, or none):
        a report of 0 points on every function, its problem said, for their feedback page,
        which then shows the same total as every other output (the instructor's, if set)."""
        said = (
            "not graded: no notebook was handed in"
            if self.problem == NO_SUBMISSION
            else "not graded: the notebook could not be read (see the problem below)"
        )
        targets = tuple(TargetResult(t.name, "error", 0.0, t.points, (said,)) for t in spec.targets)
        return Report(spec.id, self.problem_file, targets, errors=(self.shown_problem,))

    def adjusted(self) -> Adjusted | None:
        """What the feedback page shows of the instructor's changes (None: nothing changed)."""
        if not self.overrides and not self.comments and not self.lateness:
            return None
        notes = (*(o.describe() for o in self.overrides), *(c.describe() for c in self.comments))
        points = {o.target: o.points for o in self.overrides if o.target}
        return Adjusted(self.total, points, notes, self.lateness)


def standings(
    results: Iterable[tuple[str, Report | None, str]],
    roster: Sequence[Student] | None,
    overridden: Mapping[str, Sequence[Override]] | None = None,
    commented: Mapping[str, Sequence[Comment]] | None = None,
    late: Mapping[str, Late] | None = None,
    files: Mapping[str, str] | None = None,
) -> list[Standing]:
    """(student, report or None, problem) triples made into standings: with a roster, one
    per roster student in its order, those without a result marked "no submission";
    `files`: the file each problem is about, by student."""
    overridden = overridden or {}
    commented = commented or {}
    late = late or {}
    files = files or {}
    found = {student: (report, problem) for student, report, problem in results}

    def one(student: str, report: Report | None, problem: str, who: Student | None) -> Standing:
        return Standing(
            student,
            report,
            problem,
            who.name if who else "",
            who.section if who else "",
            who.email if who else "",
            who.lms_id if who else "",
            tuple(overridden.get(student, ())),
            tuple(commented.get(student, ())),
            late.get(student) if report is not None else None,
            files.get(student, "") if report is None else "",
        )

    if roster is None:
        return [one(s, r, p, None) for s, (r, p) in sorted(found.items())]
    return [one(s.id, *found.get(s.id, (None, NO_SUBMISSION)), s) for s in roster]


def from_gradebook(
    book: Gradebook,
    assignment: str,
    whole: bool = True,
    latest: Iterable[tuple[str, Report]] | None = None,
) -> list[Standing]:
    """The standings the gradebook holds: each student's latest graded submission of the
    assignment, the unreadable ones, the stored roster, overrides and comments. With
    `whole=False` each report keeps only its points and statuses (`scores_only`): all a
    total needs, so a class of thousands fits in little memory. `latest`: those latest
    reports when the caller has read them already (`book.each_latest(assignment)`, scores
    only with `whole=False`), so that they are not read and decoded again."""
    results, files = book_results(book, assignment, whole, latest)
    return standings(
        results.values(),
        stored_roster(book),
        overrides(book, assignment),
        comments(book, assignment),
        stored_late(book, assignment),
        files,
    )


def one_standing(
    book: Gradebook, student: str, assignment: str, mine: Sequence[Override] | None = None
) -> Standing:
    """Where one student stands, as the gradebook's view of the class has them (their
    latest graded submission, or 0 when a newer one could not be graded), read without the
    rest of the class (`mine`: their overrides, when the caller has read them)."""
    report = (
        None if student in book.not_graded_of(assignment) else book.latest_of(student, assignment)
    )
    return Standing(
        student,
        report,
        overrides=tuple(overrides(book, assignment).get(student, ()) if mine is None else mine),
        late=stored_late(book, assignment).get(student) if report is not None else None,
    )


Result = tuple[str, Report | None, str]  # (student, report or None, problem)


def book_results(
    book: Gradebook,
    assignment: str,
    whole: bool = True,
    latest: Iterable[tuple[str, Report]] | None = None,
) -> tuple[dict[str, Result], dict[str, str]]:
    """Each student's result the gradebook holds for the assignment, by student: the latest
    submission's, as a batch's grades.csv has it (a notebook of this assignment that could
    not be graded, after a graded one, is its problem and 0, not the earlier grade: a
    not-graded row is removed whenever one of the student's is graded, so one held is the
    newer; one of no known assignment only stands for a student with no grade); and the
    file each problem is about (see `from_gradebook` for `whole` and `latest`)."""
    unreadable = book.unreadable(assignment)
    newer = book.not_graded_of(assignment)
    results: dict[str, Result] = {}
    for student, report in book.each_latest(assignment) if latest is None else latest:
        results[student] = (student, report if whole else scores_only(report), "")
    shown = [row for row in unreadable if row[0] in newer or row[0] not in results]
    for student, _, problem in shown:
        results[student] = (student, None, problem)
    return results, {student: path for student, path, _ in shown}


def write_grades(
    rows: Sequence[Standing], targets: Sequence[str], max_total: float, path: Path
) -> Path:
    """grades.csv (or an export in its columns) at `path`, as the `csv` grades format renders
    it (grader/render/grades.py)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = GRADES_FORMATS["csv"].render(Grades(rows, targets, max_total))
    write_text(path, text, newline="")
    return path
