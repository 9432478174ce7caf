"""Reports kept for their points only (a batch's entries, the class report's standings):
equal targets are one object, so a class of thousands stays small, and nothing that is
written changes: points keep their types, totals and overrides are as with whole reports."""

from __future__ import annotations

from pathlib import Path

from grader.batch.gradebook import Gradebook
from grader.batch.records import Override, set_override
from grader.batch.standing import from_gradebook
from grader.judge.aggregate import scores_only
from grader.report import Location, Report, TargetResult


def report(student: str, score: float, message: str) -> Report:
    """A graded report of two targets, the second one failed with a message."""
    targets = (
        TargetResult("softmax", "passed", 1.0, 1.0, cases_passed=3, cases_total=3),
        TargetResult(
            "attention",
            "failed",
            score,
            2.0,
            messages=(message,),
            mistakes=("scale_discarded",),
            location=Location(2, 4),
            cases_passed=1,
            cases_total=3,
        ),
    )
    return Report("self_attention", f"{student}.ipynb", targets, errors=("e",), seconds=0.5)


def test_equal_targets_are_shared_and_keep_no_text() -> None:
    one = scores_only(report("ada", 0.5, "you forgot to scale"))
    two = scores_only(report("bob", 0.5, "a different message"))
    assert [t.name for t in one.targets] == ["softmax", "attention"]
    for left, right in zip(one.targets, two.targets, strict=True):
        assert left is right
        assert (left.messages, left.mistakes, left.location) == ((), (), None)
    assert (one.score, one.max_score, one.submission) == (1.5, 3.0, "ada.ipynb")
    assert one.errors == () and one.did_not_run is None


def test_points_that_are_equal_but_written_differently_are_not_shared() -> None:
    as_float = scores_only(report("ada", 1.0, "m")).targets[1].score
    as_int = scores_only(report("bob", 1, "m")).targets[1].score
    negative_zero = scores_only(report("cy", -0.0, "m")).targets[1].score
    zero = scores_only(report("dee", 0.0, "m")).targets[1].score
    assert (repr(as_float), repr(as_int)) == ("1.0", "1")
    assert (repr(negative_zero), repr(zero)) == ("-0.0", "0.0")


def test_standings_without_whole_reports_have_the_same_totals(tmp_path: Path) -> None:
    book = Gradebook(tmp_path / "gradebook.sqlite")
    try:
        for i, student in enumerate(["ada", "bob", "cy"]):
            book.record(
                student, tmp_path / f"{student}.ipynb", student, "c", report(student, i, "m")
            )
        set_override(book, Override("bob", "self_attention", "attention", 2.0, "", "me", 0.0))
        book.flush()
        whole = from_gradebook(book, "self_attention")
        slim = from_gradebook(book, "self_attention", whole=False)
    finally:
        book.close()
    assert [(r.student, r.total, r.autograded) for r in whole] == [
        (r.student, r.total, r.autograded) for r in slim
    ]
    assert [r.total for r in slim] == [1.0, 3.0, 3.0]
    assert any(t.messages for r in whole for t in r.report.targets if r.report)
    assert not any(t.messages for r in slim for t in r.report.targets if r.report)
