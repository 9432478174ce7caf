"""With `--out` the class folder, only what the grader writes there is passed over: a
student's notebook whose name merely starts like an output is graded, and a notebook inside
the feedback folder is named on the problem lines, never dropped silently."""

from __future__ import annotations

from pathlib import Path

from grader.batch.submissions import find_submissions


def test_notebooks_named_like_outputs_are_graded(tmp_path: Path) -> None:
    names = ("feedback_ada.ipynb", "feedback.ipynb", "report.html.ipynb", "grades.csv.py")
    for name in (*names, "grades.csv", "report.html", "gradebook.sqlite-journal"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "feedback").mkdir()
    (tmp_path / "feedback" / "ada.html").write_text("")
    found = find_submissions(tmp_path, None, tmp_path)
    graded = sorted(path.name for _, path in found.submissions)
    assert graded == sorted(names)
    assert found.problems == []


def test_a_notebook_in_the_feedback_folder_is_said(tmp_path: Path) -> None:
    (tmp_path / "ada.ipynb").write_text("{}")
    (tmp_path / "feedback" / "work").mkdir(parents=True)
    (tmp_path / "feedback" / "bo.html").write_text("")
    (tmp_path / "feedback" / "work" / "hw.ipynb").write_text("{}")
    found = find_submissions(tmp_path, None, tmp_path)
    assert [s for s, _ in found.submissions] == ["ada"]
    assert len(found.problems) == 1
    assert found.problems[0].startswith("feedback/work/hw.ipynb: inside the grader's feedback")
