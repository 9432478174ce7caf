"""Every output of the demo class, as each front end writes it, is the renderer's own output:
`grader check --format F`, `grader report --format F`, and the files of `grader grade --out`
(grades.csv, report.html) byte for byte. The expected text is computed here by calling the
renderers directly on the same data; nothing is stored."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from grader import cli
from grader.batch.classreport import load_summary
from grader.batch.entries import Entry
from grader.batch.gradebook import Gradebook
from grader.batch.grades_csv import write_csv
from grader.batch.records import stored_roster
from grader.course.config import Config
from grader.engine import grade_path
from grader.render import classroom, github, gradescope, junit, markdown, text
from grader.render import json as json_format
from grader.render.class_report import render_csv, render_html, render_json
from grader.render.formats import CLASS_FORMATS, FORMATS, GRADES_FORMATS, REPORT_FORMATS
from grader.render.verdict import verdict_lines
from grader.report import Report

from conftest import REPO

DEMO = REPO / "demo" / "submissions"
DIRECT = {
    "text": text.render,
    "json": json_format.render,
    "junit": junit.render,
    "github": github.render,
    "gradescope": gradescope.render,
    "markdown": markdown.render,
    "classroom": classroom.render,
}


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo class graded by `grader grade --out`: its output folder."""
    out = tmp_path_factory.mktemp("demo") / "out"
    args = ["grade", str(DEMO), "--course", str(REPO), "--assignment", "self_attention"]
    result = CliRunner().invoke(cli.main, [*args, "--out", str(out), "--allow-ungraded"])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def reports(config: Config) -> list[Report]:
    """Three demo notebooks of different fates, graded once."""
    names = ("ada", "bruno", "fatima")
    return [grade_path(DEMO / f"{n}.ipynb", config, "self_attention") for n in names]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", sorted(DIRECT))
def test_check_prints_what_the_format_renders(
    fmt: str, reports: list[Report], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GRADER_GRADESCOPE_ROOT", str(tmp_path))  # no results/ folder there
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    offered = next(p for p in cli.check.params if p.name == "fmt").type
    assert isinstance(offered, click.Choice) and sorted(offered.choices) == sorted(DIRECT)
    for report in reports:
        monkeypatch.setattr(cli.grading, "grade_path", lambda *_a, _r=report, **_k: _r)
        result = CliRunner().invoke(
            cli.main, ["check", str(DEMO / "ada.ipynb"), "--course", str(REPO), "--format", fmt]
        )
        assert result.exit_code == (0 if report.all_passed else 1)
        assert result.stdout == DIRECT[fmt](report) + "\n"


@pytest.mark.slow
def test_report_prints_and_writes_what_the_class_formats_render(graded_class: Path) -> None:
    summary = load_summary(graded_class)
    runner = CliRunner()
    as_csv = runner.invoke(cli.main, ["report", str(graded_class), "--format", "csv"])
    assert as_csv.exit_code == 0 and as_csv.stdout_bytes == render_csv(summary).encode()
    as_json = runner.invoke(cli.main, ["report", str(graded_class), "--format", "json"])
    assert as_json.exit_code == 0 and as_json.stdout == render_json(summary) + "\n"
    written = (graded_class / "report.html").read_bytes()
    assert written == render_html(summary).encode("utf-8")
    page = graded_class / "report.html"
    page.unlink()
    assert runner.invoke(cli.main, ["report", str(graded_class)]).exit_code == 0
    assert page.read_bytes() == written


@pytest.mark.slow
def test_grades_csv_is_what_the_grades_format_renders(
    graded_class: Path, config: Config, tmp_path: Path
) -> None:
    book = Gradebook(graded_class / "gradebook.sqlite")
    try:
        roster = stored_roster(book)
        latest = dict(book.each_latest("self_attention"))
        problems = dict(book.problems())
    finally:
        book.close()
    entries = [Entry(s, DEMO / f"{s}.ipynb", r) for s, r in sorted(latest.items())]
    entries += [Entry(s, DEMO / f"{s}.ipynb", None, p) for s, p in sorted(problems.items())]
    entries.sort(key=lambda e: e.student)
    again = tmp_path / "again"
    again.mkdir()
    shutil.copy(graded_class / "gradebook.sqlite", again)
    spec = config.assignment("self_attention")
    rewritten = write_csv(entries, spec, again, roster).read_bytes()
    assert rewritten == (graded_class / "grades.csv").read_bytes()


def test_every_front_end_offers_the_registered_formats() -> None:
    fronts = ((cli.check, REPORT_FORMATS), (cli.report, CLASS_FORMATS))
    for command, formats in (*fronts, (cli.export_command, GRADES_FORMATS)):
        offered = next(p for p in command.params if p.name == "fmt").type
        assert isinstance(offered, click.Choice) and sorted(offered.choices) == sorted(formats)
    for subject, listed in FORMATS.items():
        assert listed and all(name == f.name and f.summary for name, f in listed.items())
        assert subject in ("report", "class", "grades", "table")


@pytest.mark.slow
def test_the_ci_formats_say_the_same_verdict_block(reports: list[Report]) -> None:
    """junit, gradescope and classroom each write status, points, place (and mistakes) of a
    failing target in the same words, from one function."""
    failing = [(r, t) for r in reports for t in r.targets if t.status != "passed"]
    assert failing
    for report, target in failing:
        block = "\n".join(verdict_lines(target))
        assert block in REPORT_FORMATS["junit"].render(report)
        outputs = json.loads(REPORT_FORMATS["gradescope"].render(report))["tests"]
        assert any(t["output"].startswith(block) for t in outputs)
        tests = json.loads(REPORT_FORMATS["classroom"].render(report))["tests"]
        said = "\n".join(verdict_lines(target, mistakes=False))
        assert any(t["message"].startswith(said) for t in tests)


def test_an_unwritable_job_summary_still_gives_the_annotations_and_the_score(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # r45: GITHUB_STEP_SUMMARY in a folder that is not there was a traceback (exit 3), and
    # the log lost every annotation, a passing notebook's too.
    from grader.report import Report, TargetResult

    report = Report("ada.ipynb", "self_attention", (TargetResult("softmax", "failed", 0, 1),))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "missing" / "summary.md"))
    lines = github.render(report).splitlines()
    assert lines[-1].startswith("::warning title=No job summary::the job summary ")
    assert "No such file or directory" in lines[-1]
    assert any(line.startswith("::notice title=Score::0 / 1 points") for line in lines)


def test_the_junit_message_says_what_is_wrong_not_only_how_many_cases() -> None:
    """r52 M7: the `message` a CI page shows held only "4 of 4 cases failed"."""
    import xml.etree.ElementTree as ET

    from grader.report import Report, TargetResult

    said = ("4 of 4 cases failed", "the weights sum to 6.876, not to one", "case 1 (N=3): …")
    target = TargetResult("softmax", "failed", 0, 1, messages=said)
    xml = junit.render(Report("ada.ipynb", "self_attention", (target,)))
    (failure,) = ET.fromstring(xml).iter("failure")
    assert failure.get("message") == "4 of 4 cases failed; the weights sum to 6.876, not to one"
