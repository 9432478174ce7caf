"""The class report reads each student's latest report from the gradebook once: the summary
takes it whole and the standings (totals, overrides, lateness) its points, with the same
result as standings read on their own."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_scores_only import report

import grader.report as report_module
from grader.batch.classreport import load_summary
from grader.batch.gradebook import Gradebook
from grader.batch.records import Override, set_override
from grader.batch.standing import from_gradebook
from grader.report import Points, Report


def gradebook(out: Path) -> None:
    """Three students graded (one twice, the older report superseded), one override."""
    book = Gradebook(out / "gradebook.sqlite")
    try:
        for i, student in enumerate(["ada", "bob", "cy", "bob"]):
            book.record(student, out / f"{student}.ipynb", f"{i}", "c", report(student, i, "m"))
            book.flush()
        set_override(book, Override("cy", "self_attention", "attention", 2.0, "", "me", 0.0))
    finally:
        book.close()


def decoding(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The submission of every report decoded from here on."""
    decoded: list[str] = []
    real = Report.from_dict.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Report], data: dict[str, object]) -> Report:
        made: Report = real(cls, data)
        decoded.append(made.submission)
        return made

    monkeypatch.setattr(report_module.Report, "from_dict", classmethod(counted))
    return decoded


@pytest.mark.parametrize("assignment", [None, "self_attention"])
def test_each_latest_report_is_decoded_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, assignment: str | None
) -> None:
    gradebook(tmp_path)
    decoded = decoding(monkeypatch)
    summary = load_summary(tmp_path, assignment)
    assert sorted(decoded) == ["ada.ipynb", "bob.ipynb", "cy.ipynb"]
    book = Gradebook(tmp_path / "gradebook.sqlite")
    try:
        alone = from_gradebook(book, "self_attention", whole=False)
    finally:
        book.close()
    assert summary.assignment == "self_attention"
    assert summary.students == tuple(
        (row.student, Points(row.total, row.report.max_score)) for row in alone if row.report
    )
    assert [p.score for _, p in summary.students] == [1.0, 4.0, 3.0]  # bob's latest; cy's override
    assert summary.notes == (("cy", alone[2].overrides[0].describe()),)
