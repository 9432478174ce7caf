"""Where each graded notebook goes as soon as it is judged: the batch's entries, the gradebook,
the feedback folder and the fault log; a student's several notebooks are held until the one
kept is known."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.batch.entries import Batch, Entry, log_fault
from grader.batch.gradebook import Gradebook
from grader.batch.keep import Candidate, base_of, choose
from grader.batch.lateness import Handed, clear_late, late_of, save_late
from grader.batch.records import Comment, Override, comments, overrides
from grader.batch.standing import Standing
from grader.course.config import Config
from grader.course.deadline import Late
from grader.course.notebook import Submission
from grader.course.recognise import graded_as_the_class
from grader.judge.aggregate import scores_only
from grader.render.escape import folded, safe_name
from grader.render.feedback import Adjusted, page_is_whole, write_feedback
from grader.report import Report


@dataclass
class Recorder:
    """Where each finished entry goes: the batch, the gradebook, the feedback folder."""

    batch: Batch
    book: Gradebook | None
    out: Path | None
    settings: str
    on_entry: Callable[[Entry], None] | None
    keep_reports: bool = True
    hashes: dict[str, str] = field(default_factory=dict)
    notes: dict[str, tuple[dict[str, list[Override]], dict[str, list[Comment]]]] = field(
        default_factory=dict
    )
    config: Config | None = None
    handed: dict[str, Handed] = field(default_factory=dict)  # when each was handed in
    # the name each roster student's notebook had before the course had a roster (an LMS
    # export's `adalove_123`) or the id an earlier roster spelled in another case, which
    # earlier runs recorded them under
    former: dict[str, list[str]] = field(default_factory=dict)
    extensions: dict[str, float] = field(default_factory=dict)  # hours, by student
    cleared: set[str] = field(default_factory=set)  # assignments without a late policy
    groups: dict[str, list[str]] = field(default_factory=dict)  # keys of several notebooks
    waiting: dict[str, dict[str, tuple[Entry, Submission | None, bool]]] = field(
        default_factory=dict
    )
    kept: dict[str, str] = field(default_factory=dict)  # which notebook was kept, and why
    clashing: frozenset[str] = frozenset()  # names one only in case (render/escape.twins)
    assignment: str = ""  # what the batch grades as (--assignment, settled, the only one)
    # a .zip's: the folder it was unpacked into, and the archive; each notebook from it is
    # named `archive.zip/member` in every output (the folder is gone once the batch ends)
    unpacked: tuple[Path, Path] | None = None

    def _as_handed_in(self, entry: Entry) -> Entry:
        """`entry` with a notebook unpacked from a .zip named as the zip's member, in its
        path, its problem and its report, instead of by the scratch folder's path."""
        if self.unpacked is None or entry.path is None:
            return entry
        folder, archive = self.unpacked
        if not entry.path.is_relative_to(folder):
            return entry
        named = archive / entry.path.relative_to(folder)
        problem = entry.problem.replace(str(entry.path), str(named))
        report = entry.report
        if report is not None and report.submission == str(entry.path):
            report = replace(report, submission=str(named))
        return replace(entry, path=named, problem=problem, report=report)

    def late(self, student: str, report: Report, save: bool = True) -> Late | None:
        """The lateness of a student's submission under its assignment's policy, stored in
        the gradebook (None, and any stored lateness forgotten, without a policy)."""
        spec = self.config.assignments.get(report.assignment) if self.config else None
        handed = self.handed.get(student)
        if spec is None or spec.late is None or handed is None:
            if save and self.book is not None and spec is not None and spec.id not in self.cleared:
                clear_late(self.book, spec.id)
                self.cleared.add(spec.id)
            return None
        late = late_of(spec.late, handed, self.extensions.get(base_of(student), 0.0))
        if save and self.book is not None:
            save_late(self.book, student, spec.id, handed, late)
        return late

    def _held(
        self, entry: Entry, submission: Submission | None, new: bool
    ) -> tuple[Entry, Submission | None, bool] | None:
        """One of a student's several notebooks: held until all are graded, then the kept
        one (under the student's own key); None while some are still out."""
        base = base_of(entry.student)
        waiting = self.waiting.setdefault(base, {})
        waiting[entry.student] = (entry, submission, new)
        if len(waiting) < len(self.groups[base]):
            return None
        return self._keep(base)

    def _keep(self, base: str) -> tuple[Entry, Submission | None, bool]:
        waiting = self.waiting.pop(base)
        keys = [key for key in self.groups.pop(base) if key in waiting]
        candidates = []
        for key in keys:
            report = waiting[key][0].report
            late = self.late(key, report, save=False) if report is not None else None
            points = None if report is None else late.apply(report.score) if late else report.score
            candidates.append(Candidate(key, waiting[key][0].path, points))
        reports = [r for k in reversed(keys) if (r := waiting[k][0].report) is not None]
        spec = (
            self.config.assignments.get(reports[0].assignment) if reports and self.config else None
        )
        kept, line = choose(candidates, spec.keep if spec else "latest")
        entry, submission, new = waiting[kept.key]
        if kept.key != base:
            self.hashes[base] = self.hashes.get(kept.key, "")
            if kept.key in self.handed:
                self.handed[base] = self.handed[kept.key]
            entry, new = replace(entry, student=base), True
        self.kept[base] = line
        self.batch.problems.append(f"{base}: {line}")
        return entry, submission, new

    def settle(self) -> None:
        """Keep one notebook of each student some of whose notebooks never came back."""
        for base in list(self.waiting):
            self.add(*self._keep(base))

    def adjusted(self, student: str, report: Report) -> Adjusted | None:
        """The instructor's overrides and comments for a student's feedback page."""
        if self.book is None:
            return None
        overridden, commented = self._notes(report.assignment)
        return Standing(
            student,
            report,
            overrides=tuple(overridden.get(student, ())),
            comments=tuple(commented.get(student, ())),
            late=self.late(student, report),
        ).adjusted()

    def _page(
        self, student: str, report: Report, submission: Submission | None, adjusted: Adjusted | None
    ) -> None:
        """Write a student's feedback page; the class's clashing names are passed only for a
        student among them (the page's name is the plain one for everyone else)."""
        assert self.out is not None
        if folded(student) in self.clashing:
            write_feedback(self.out, student, report, submission, adjusted, self.clashing)
        else:
            write_feedback(self.out, student, report, submission, adjusted)

    def _problem_page(self, entry: Entry) -> None:
        """The page of a student whose notebook could not be graded: the problem, 0 points
        (or the instructor's), in place of the page of a notebook graded before it (which
        showed its old points while every other output said 0)."""
        assert self.out is not None
        spec = self.config.assignments.get(self.assignment) if self.config else None
        if spec is None:  # no assignment to say the points of: no page, and no stale one
            page = self.out / "feedback" / f"{safe_name(entry.student, self.clashing)}.html"
            page.unlink(missing_ok=True)
            return
        overridden, commented = self._notes(spec.id)
        row = Standing(
            entry.student,
            None,
            entry.problem,
            overrides=tuple(overridden.get(entry.student, ())),
            comments=tuple(commented.get(entry.student, ())),
            problem_file=str(entry.path),
        )
        report = row.stand_in(spec)
        try:
            self._page(entry.student, report, None, row.adjusted())
        except Exception:  # the problem is recorded; one page must not stop all
            log_fault(self.out, replace(entry, fault=traceback.format_exc()))

    def _notes(self, assignment: str) -> tuple[dict[str, list[Override]], dict[str, list[Comment]]]:
        """The assignment's overrides and comments by student, read once per batch."""
        if self.book is None:
            return {}, {}
        if assignment not in self.notes:
            self.notes[assignment] = (
                overrides(self.book, assignment),
                comments(self.book, assignment),
            )
        return self.notes[assignment]

    def add(self, entry: Entry, submission: Submission | None = None, new: bool = True) -> None:
        """Record a finished entry (one of several notebooks: once the kept one is known)."""
        entry = self._as_handed_in(entry)
        if base_of(entry.student) in self.groups:
            held = self._held(entry, submission, new)
            if held is None:
                return
            entry, submission, new = held
        line = self.kept.get(entry.student, "")
        if entry.report is not None and line and line not in entry.report.notes:
            entry = replace(entry, report=replace(entry.report, notes=(line, *entry.report.notes)))
        if entry.fault and self.out is not None:
            log_fault(self.out, entry)
        if entry.lost:
            self.batch.lost.append(entry.student)
        if entry.report is None and self.book is not None and entry.path:
            self.book.record_problem(entry.student, self.assignment, entry.path, entry.problem)
        if entry.report is None and self.out is not None and entry.path:
            self._problem_page(entry)
        if entry.report is not None and new and self.book is not None and entry.path:
            content = self.hashes[entry.student]
            self.book.record(entry.student, entry.path, content, self.settings, entry.report)
        if entry.report is not None and self.out is not None:
            page = self.out / "feedback" / f"{safe_name(entry.student, self.clashing)}.html"
            # An unchanged submission's page again when its lateness (an extension, a
            # deadline) may have changed since, or when the page is missing or cut off.
            if new or self.handed or not page_is_whole(page):
                try:
                    adjusted = self.adjusted(entry.student, entry.report)
                    self._page(entry.student, entry.report, submission, adjusted)
                except Exception as exc:  # the grade is recorded; one page must not stop all
                    problem = f"feedback page not written (grader fault: {exc!r:.200})"
                    entry = replace(entry, problem=problem, fault=traceback.format_exc())
                    log_fault(self.out, entry)
        if self.on_entry:
            self.on_entry(entry)
        if entry.report is not None:  # said on the terminal too, before the notes are dropped
            said = [n for n in entry.report.notes if graded_as_the_class(n)]
            self.batch.graded_as_class += [(entry.student, note) for note in said]
        if entry.report is not None and not self.keep_reports:
            entry = replace(entry, report=scores_only(entry.report))
        self.batch.entries.append(entry)
