"""Every output format, read back with a real parser, and hostile student text neutralised."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from grader.course.config import Config
from grader.engine import grade_path
from grader.render.formats import REPORT_FORMATS
from grader.render.table import display_width, render_table
from grader.report import Report

import students
from conftest import NotebookFactory

HOSTILE = "::error file=x.py,line=1::forged\n</failure><script>alert(1)</script> 100% | done"


@pytest.fixture
def hostile(config: Config, notebook: NotebookFactory) -> Report:
    """softmax raises with a message made to break every format; self_attention is transposed."""
    bad = f"def softmax(items_in):\n    raise ValueError({HOSTILE!r})\n"
    cells = students.cells(softmax=bad, self_attention=students.SEED_001_SELF)
    cells.append(f"print({HOSTILE!r})\nraise RuntimeError({HOSTILE!r})")
    return grade_path(notebook(cells), config, "self_attention")


def test_text_and_json(hostile: Report) -> None:
    data = json.loads(REPORT_FORMATS["json"].render(hostile))
    assert data["score"] == hostile.score
    text = REPORT_FORMATS["text"].render(hostile)
    assert "✗ softmax" in text and "Problems while running the notebook:" in text


def test_junit_parses_and_carries_the_diagnosis_in_the_text(hostile: Report) -> None:
    root = ET.fromstring(REPORT_FORMATS["junit"].render(hostile))
    suite = root.find("testsuite")
    assert suite is not None
    assert suite.get("tests") == "6"
    assert suite.get("failures") == "1" and suite.get("errors") == "2"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    transposed = cases["self_attention"].find("failure")
    assert transposed is not None and transposed.text is not None
    assert "output_transposed" in transposed.text
    assert cases["self_attention"].get("line")  # points into the notebook file
    raised = cases["softmax"].find("error")
    assert raised is not None and raised.text is not None
    assert "</failure><script>" in raised.text  # kept as text, not as markup
    assert not list(root.iter("script"))
    assert cases["qkv_loop"].find("failure") is None


def test_github_commands_cannot_be_forged(
    hostile: Report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    lines = REPORT_FORMATS["github"].render(hostile).split("\n")
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
    assert not any("::forged" in line.split("::", 2)[1] for line in lines)
    softmax = next(line for line in lines if "title=softmax%3A" in line)
    assert "%0A" in softmax and "100%25" in softmax
    assert softmax.startswith("::error file=") and ",line=" in softmax
    assert (
        lines[-1] == "::notice title=Score::" + f"{hostile.score:g} / {hostile.max_score:g} points"
    )
    table = summary.read_text()
    assert "| ❌ | `self_attention` | failed |" in table
    assert "<script>" not in table and "&lt;script&gt;" in table


def test_github_folds_annotations_beyond_ten(hostile: Report) -> None:
    from dataclasses import replace

    many = replace(
        hostile, targets=tuple(replace(hostile.targets[4], name=f"t{i}") for i in range(12))
    )
    lines = REPORT_FORMATS["github"].render(many).split("\n")
    assert sum(line.startswith("::error ") for line in lines) == 10
    assert any(line.startswith("::notice title=More failing targets::t10, t11") for line in lines)


def test_markdown_is_safe_and_readable(hostile: Report) -> None:
    text = REPORT_FORMATS["markdown"].render(hostile)
    assert text.startswith(f"## self_attention: {hostile.score:g} / 10 points")
    assert "<script>" not in text
    assert "&lt;/failure&gt;&lt;script&gt;" in text
    assert "### `scaled_dot_product_self_attention`" not in text  # it passed


def test_gradescope_results(hostile: Report) -> None:
    data = json.loads(REPORT_FORMATS["gradescope"].render(hostile))
    assert data["score"] == hostile.score
    tests = {t["name"]: t for t in data["tests"]}
    assert set(tests) == {t.name for t in hostile.targets}
    assert tests["softmax"]["status"] == "failed" and tests["softmax"]["score"] == 0
    assert tests["qkv_loop"] == {
        "name": "qkv_loop",
        "score": 1.0,
        "max_score": 1.0,
        "status": "passed",
        "output": "passed: 1 / 1 points\npassed all 4 cases",
        "visibility": "visible",
    }
    assert "output_transposed" in tests["self_attention"]["output"]


def test_gradebook_table_lines_up_names_in_any_script(hostile: Report) -> None:
    rows = [("王伟", hostile, ""), ("ada", hostile, ""), ("José", hostile, "")]
    header, _, *graded = render_table(rows, ["softmax", "self_attention"]).splitlines()
    # Columns are padded to fixed widths: on a terminal every row is as wide as the header.
    assert [display_width(line) for line in graded] == [display_width(header)] * 3
    assert display_width("王伟") == 4 and display_width("José") == 4
    assert display_width("Jose\u0301") == 4  # a combining accent takes no column


def test_gradebook_table_lines_up_names_holding_a_tab_or_other_control(hostile: Report) -> None:
    # A tab in a name jumped to the terminal's next tab stop: that row no longer lined up.
    rows = [("Ann\tLee", hostile, ""), ("ada", hostile, ""), ("Bo\x0bChen\x1b[2J", hostile, "")]
    rows.append(("Cy\tDiaz", None, "not\ta notebook"))
    table = render_table(rows, ["softmax", "self_attention"])
    assert "\t" not in table and "\x0b" not in table and "\x1b" not in table
    header, _, *graded = table.splitlines()
    assert [display_width(line) for line in graded[:3]] == [display_width(header)] * 3
    assert graded[0].startswith("Ann Lee ") and graded[3].startswith("Cy Diaz ")
    assert graded[2].startswith("Bo?Chen?[2J ")  # the others are shown as "?", as before
