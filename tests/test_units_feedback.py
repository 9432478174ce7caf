"""render/feedback.py called directly on a hand-built report (no child process)."""

from __future__ import annotations

from pathlib import Path

from grader.course.notebook import CodeCell, Submission
from grader.render.feedback import CONTEXT_LINES, excerpt, write_feedback
from grader.report import Location, Report, TargetResult

SOURCE = "\n".join(f"line_{n} = {n}" for n in range(1, 11))


def submission() -> Submission:
    cells = (CodeCell(2, SOURCE, SOURCE),)
    return Submission(Path("alice.ipynb"), "alice", cells, None, ())


def failed(line: int, cell: int = 2) -> TargetResult:
    return TargetResult(
        "softmax", "failed", 0.0, 2.0, ("wrong <axis>",), ("axis",), Location(cell, line)
    )


def test_excerpt_surrounds_the_line_and_marks_it() -> None:
    lines = excerpt(submission(), failed(5))
    assert [n for n, _, _ in lines] == list(range(5 - CONTEXT_LINES, 5 + CONTEXT_LINES + 1))
    assert [(n, text) for n, text, here in lines if here] == [(5, "line_5 = 5")]
    assert all(text == f"line_{n} = {n}" for n, text, _ in lines)


def test_excerpt_is_cut_at_the_cells_edges() -> None:
    assert [n for n, _, _ in excerpt(submission(), failed(1))] == list(
        range(1, 1 + CONTEXT_LINES + 1)
    )
    assert [n for n, _, _ in excerpt(submission(), failed(10))] == list(
        range(10 - CONTEXT_LINES, 11)
    )


def test_no_excerpt_without_a_place_to_show() -> None:
    passed = TargetResult("softmax", "passed", 2.0, 2.0, location=Location(2, 5))
    assert excerpt(submission(), passed) == []
    assert excerpt(None, failed(5)) == []
    assert excerpt(submission(), failed(5, cell=7)) == []  # no such cell
    assert excerpt(submission(), TargetResult("softmax", "failed", 0.0, 2.0)) == []


def test_write_feedback_writes_one_escaped_page(tmp_path: Path) -> None:
    report = Report("self_attention", "/class/alice.ipynb", (failed(5),), errors=("<boom>",))
    path = write_feedback(tmp_path, "alice/../bob", report, submission())
    assert path.parent == tmp_path / "feedback"  # the slashes did not leave the folder
    assert path.suffix == ".html" and path.name.startswith("alice_.._bob-")
    page = path.read_text(encoding="utf-8")
    assert "0 / 2 points" in page
    assert "alice.ipynb" in page and "/class/" not in page
    assert "wrong &lt;axis&gt;" in page and "wrong <axis>" not in page
    assert "&lt;boom&gt;" in page
    assert 'class="here"' in page and "line_5 = 5" in page
    # A second page goes into the folder the first one made.
    second = write_feedback(tmp_path, "carol", report, None)
    assert second.parent == path.parent and second != path
    assert 'class="here"' not in second.read_text(encoding="utf-8")
