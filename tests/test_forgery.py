"""Student text (exception messages, printed output, file and folder names) cannot forge
anything in any output: no spreadsheet formula, no CI workflow command, no broken XML, no
invisible terminal control, no Markdown link or image."""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.batch.entries import Entry
from grader.batch.grades_csv import write_csv
from grader.batch.progress import Progress
from grader.cli import main
from grader.course.config import Config
from grader.judge.aggregate import summarise
from grader.render.class_report import render_csv
from grader.render.formats import REPORT_FORMATS
from grader.render.html import render_check
from grader.render.table import render_table
from grader.report import Location, Report, TargetResult

FORGED = (
    "\n::error file=grades.csv,line=1::forged\n::add-mask::secret\r\n  ::warning::x ##[add-mask]y"
)
# C0 and C1 controls (ESC, BEL, NEL, CSI), bidi controls, XML's non-characters
INVISIBLE = "\x1b\x07\x85\x9b\u202e\u2066\u2069\u200e\u200f\u061c\ufffe\uffff\x00\x0b"
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
LINKS = "![x](http://evil/p.png) [click](javascript:alert(1)) <img src=x onerror=alert(1)>"
FORMULAS = ('=HYPERLINK("http://evil","x")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)")


def _report(text: str, submission: str = "student.ipynb") -> Report:
    """A report whose every student-derived string carries `text`."""
    failing = TargetResult(
        name="softmax",
        status="error",
        score=0.0,
        max_score=1.0,
        messages=(f"cases 1, 2: raised ValueError: {text}", text),
        location=Location(cell=3, line=2, file_line=40),
    )
    passing = TargetResult("qkv_loop", "passed", 1.0, 1.0, messages=("passed all 4 cases",))
    return Report(
        assignment="self_attention",
        submission=submission,
        targets=(passing, failing),
        errors=(f"cell 9: raised RuntimeError: {text}",),
        notes=(text,),
    )


def _all_formats(report: Report) -> dict[str, str]:
    """Every renderer's output, plus the terminal gradebook table and the Jupyter check view."""
    outputs = {
        fmt: render(report) for fmt, render in ((n, f.render) for n, f in REPORT_FORMATS.items())
    }
    outputs["table"] = render_table([(report.submission, report, "")], ["softmax"])
    outputs["html"] = render_check(report, report.targets, report.submission)
    return outputs


def _scored(report: Report, score: float) -> Report:
    """The report with every target scored `score` (a penalty can make it negative)."""
    return replace(report, targets=tuple(replace(t, score=score) for t in report.targets))


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def _is_formula(cell: str) -> bool:
    return cell[:1] in ("=", "+", "-", "@", "\t", "\r") and not re.fullmatch(r"-?[\d.]+", cell)


def test_csv_cells_cannot_be_formulas(config: Config, tmp_path: Path) -> None:
    """grades.csv and `grader report --format csv` carry student names and problems: a cell
    starting with = + - @ is a formula to Excel, so such text cells are made text."""
    spec = config.assignment("self_attention")
    report = _scored(_report("x", submission=FORMULAS[0]), -1.5)
    entries = [Entry(name, None, None, problem=name) for name in FORMULAS[1:]]
    entries.append(Entry(FORMULAS[0], None, report))
    entries.append(Entry("tab", None, None, problem=f"\t=1+1 {INVISIBLE}"))
    grades = write_csv(entries, spec, tmp_path).read_text(encoding="utf-8")
    summary = summarise("self_attention", [(FORMULAS[0], report)], [(FORMULAS[3], FORMULAS[2])])
    for text in (grades, render_csv(summary)):
        cells = _cells(text)
        assert not [cell for cell in cells if _is_formula(cell)]
        assert '\'=HYPERLINK("http://evil","x")' in cells  # kept readable, as text
        assert [c for c in cells if re.fullmatch(r"-[\d.]+", c)]  # a negative number stays one
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text.replace("\r\n", ""))


def _commands(text: str) -> list[str]:
    """Lines a GitHub Actions runner would take for a workflow command: `::` after leading
    white space, or the legacy `##[` anywhere in the line."""
    return [
        line
        for line in re.split(r"\r\n|\r|\n", text)
        if line.lstrip().startswith("::") or "##[" in line
    ]


def test_student_text_cannot_start_a_workflow_command() -> None:
    """A new line in an exception message, or a file name starting with `::`, must not put
    a line of its own into a CI log (`::add-mask::` hides text, `::error` forges a verdict)."""
    report = _report(FORGED, submission="::add-mask::student.ipynb")
    outputs = _all_formats(report)
    for fmt in ("text", "junit", "table", "gradescope", "markdown"):
        assert _commands(outputs[fmt]) == [], fmt
    github = outputs["github"].split("\n")
    assert all(re.match(r"::(error|warning|notice) [a-z]+=", line) for line in github)
    messages = [e.get("message", "") for e in ET.fromstring(outputs["junit"]).iter("error")]
    assert messages and not [m for m in messages if "\n" in m or "\r" in m]


def test_an_error_naming_a_student_file_cannot_start_a_workflow_command(tmp_path: Path) -> None:
    """`grader check` says which file it could not read: the name is the student's to choose."""
    missing = tmp_path / "a\n::add-mask::secret\n##[stop-commands]x.ipynb"
    result = CliRunner().invoke(main, ["check", str(missing)])
    assert result.exit_code == 2 and "no such file" in result.output
    assert _commands(result.output) == []


def test_junit_is_well_formed_whatever_the_file_name() -> None:
    """U+FFFE, U+FFFF and control characters are not allowed in XML 1.0, in text or in an
    attribute: a notebook named with them made the whole JUnit file unreadable."""
    report = _report(INVISIBLE, submission=f"a{INVISIBLE}b.ipynb")
    xml = REPORT_FORMATS["junit"].render(report)
    root = ET.fromstring(xml)  # raises on XML that is not well-formed
    assert not NOT_XML.search(xml)
    files = {case.get("file") or "" for case in root.iter("testcase")}
    assert len(files) == 1 and all(f.startswith("a") and f.endswith("b.ipynb") for f in files)


@pytest.mark.parametrize("char", sorted(INVISIBLE), ids=lambda c: f"U+{ord(c):04X}")
def test_invisible_controls_reach_no_output(char: str) -> None:
    """Escapes (C0, C1), bidi overrides that reorder what a reader sees, and non-characters
    are taken out of student text in every format, the terminal's included."""
    report = _report(f"a{char}b", submission=f"s{char}.ipynb")
    for fmt, output in _all_formats(report).items():
        assert char not in output, fmt
    stream = _Terminal()
    progress = Progress(1, stream=stream)
    progress.step(f"s{char}.ipynb")
    progress.close()
    assert char not in stream.getvalue()


class _Terminal(io.StringIO):
    """A stream that says it is a terminal, so that Progress draws its bar."""

    def isatty(self) -> bool:
        return True


def test_markdown_links_and_images_are_inert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pull-request comment or a job summary renders Markdown: student text must not put
    an image (a tracking pixel), a link (javascript:) or raw HTML into it."""
    import mistune  # nbconvert's own Markdown renderer: always installed with the grader

    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    report = _report(LINKS, submission=f"{LINKS}.ipynb")
    REPORT_FORMATS["github"].render(report)
    render = mistune.create_markdown(escape=False, plugins=["table", "url", "strikethrough"])
    for markdown in (
        REPORT_FORMATS["markdown"].render(report),
        summary.read_text(encoding="utf-8"),
    ):
        html = render(markdown)
        assert "<img" not in html and "<a " not in html, html
        assert "](" not in re.sub(r"\\.", "", markdown)  # no link syntax left unescaped
        assert "![x]" in html.replace("&amp;", "&")  # still readable as text
