"""results.json for a target with hidden cases: a visible test of the public cases and an
`after_published` one of the rest, adding up to the target's score."""

from __future__ import annotations

import json
from pathlib import Path

from grader.course.config import load_config
from grader.engine import grade_path
from grader.render.gradescope import results
from grader.report import Finding, Location, Report, TargetResult

import students
from conftest import repo_config_raw, write_notebook

SUMMARY = Finding("summary", "2 of 4 cases failed")
CASE = Finding("case", "case 3 (D=6, N=2): shape (2, 6), expected (6, 2)")
MISTAKE = Finding("mistake", "output_transposed: returns the transpose", "output_transposed")


def target(outcomes: tuple[str, ...], score: float, public: int | None = 2) -> TargetResult:
    return TargetResult(
        "f",
        "passed" if all(o == "passed" for o in outcomes) else "failed",
        score,
        2.0,
        tuple(f.message for f in (SUMMARY, CASE, MISTAKE)),
        ("output_transposed",),
        Location(5, 3),
        sum(o == "passed" for o in outcomes),
        len(outcomes),
        outcomes,
        (SUMMARY, CASE, MISTAKE),
        public,
    )


def shown_tests(result: TargetResult) -> list[dict[str, object]]:
    shown: list[dict[str, object]] = results(Report("a", "hw.ipynb", (result,)))["tests"]
    return shown


def test_public_and_hidden_tests_add_up() -> None:
    public, hidden = shown_tests(target(("passed", "failed", "failed", "passed"), 1.0))
    assert (public["name"], public["visibility"]) == ("f (public cases)", "visible")
    assert (hidden["name"], hidden["visibility"]) == ("f (hidden cases)", "after_published")
    assert (public["score"], public["max_score"]) == (0.5, 1.0)
    assert (hidden["score"], hidden["max_score"]) == (0.5, 1.0)
    assert public["status"] == hidden["status"] == "failed"


def test_the_visible_test_says_nothing_of_hidden_cases() -> None:
    failed_public = shown_tests(target(("passed", "failed", "failed", "passed"), 1.0))[0]
    output = str(failed_public["output"])
    assert output.startswith("public cases: 1 of 2 passed") and "output_transposed" in output
    assert "case 3" not in output and "of 4" not in output
    passed_public = shown_tests(target(("passed", "passed", "failed", "failed"), 1.0))[0]
    assert passed_public["output"] == "public cases: 2 of 2 passed"
    assert passed_public["status"] == "passed"


def test_all_or_nothing_never_shows_more_than_earned() -> None:
    public, hidden = shown_tests(target(("passed", "passed", "failed", "passed"), 0.0))
    assert public["score"] == 0.0 and hidden["score"] == 0.0


def test_a_target_without_hidden_cases_is_one_visible_test() -> None:
    (only,) = shown_tests(target(("passed",) * 4, 2.0, public=None))
    assert only["name"] == "f" and only["visibility"] == "visible" and only["score"] == 2.0
    (all_public,) = shown_tests(target(("passed",) * 4, 2.0, public=4))
    assert all_public["name"] == "f"


def test_all_or_nothing_the_visible_test_is_the_same_whatever_the_hidden_cases_did() -> None:
    # r50: a visible "0.0 / 1.0" beside "public cases: 2 of 2 passed" told a student, before
    # the publication, that a hidden case failed (partial_credit: false).
    from dataclasses import replace

    shown = {}
    for hidden, score in ((("passed", "passed"), 2.0), (("failed", "passed"), 0.0)):
        both = shown_tests(
            replace(target(("passed", "passed", *hidden), score), all_or_nothing=True)
        )
        shown[hidden] = both
        assert sum(float(t["score"]) for t in both) == score  # type: ignore[arg-type]
        assert both[1]["max_score"] == 2.0 and both[1]["visibility"] == "after_published"
    visible = [both[0] for both in shown.values()]
    assert visible[0] == visible[1] and (visible[0]["score"], visible[0]["max_score"]) == (0, 0)
    assert str(visible[0]["output"]).startswith("public cases: 2 of 2 passed")


def test_the_grading_marks_the_targets_whose_points_are_all_or_nothing(tmp_path: Path) -> None:
    raw = repo_config_raw()
    raw["assignments"]["self_attention"]["targets"]["softmax"]["partial_credit"] = False
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "config.yaml").write_text(json.dumps(raw))
    config = load_config(tmp_path / "course" / "config.yaml")
    notebook = write_notebook(tmp_path / "hw.ipynb", students.cells())
    report = grade_path(notebook, config, "self_attention")
    marked = {t.name for t in report.targets if t.all_or_nothing}
    assert marked == {"softmax"}
