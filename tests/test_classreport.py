"""The class report: numbers that match a batch with known mistakes, layouts for 5 and for
2,000 students, and a real browser that loads the page without errors."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from grader.batch.classreport import load_summary, write_report
from grader.batch.grade import grade_batch
from grader.batch.gradebook import Gradebook
from grader.cli import main
from grader.course.config import Config
from grader.judge.aggregate import summarise
from grader.render.class_report import render_html

import students
from conftest import REPO, write_notebook

# Who makes which mistake, so the report's numbers can be checked exactly.
KNOWN = {
    "seed001": 3,  # scale_discarded + scale_hardcoded + output_transposed on the scaled one
    "wrong_axis": 2,  # softmax_wrong_axis (its callers are told to fix it first)
    "hardcoded": 2,  # scale_hardcoded alone
    "correct": 4,
}


SVG = {"svg": "http://www.w3.org/2000/svg"}


def charts_in(page: str) -> list[ET.Element]:
    """The report's inline SVG charts, parsed as XML (so each is well-formed)."""
    pieces = page.split("<svg ")[1:]
    return [ET.fromstring("<svg " + piece.split("</svg>")[0] + "</svg>") for piece in pieces]


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory, config: Config) -> Path:
    folder = tmp_path_factory.mktemp("class")
    overrides = {
        "seed001": {"scaled_dot_product_self_attention": students.SEED_001_SCALED},
        "wrong_axis": {"softmax_cols": students.SOFTMAX_COLS_WRONG_AXIS},
        "hardcoded": {"scaled_dot_product_self_attention": students.SCALE_HARDCODED},
        "correct": {},
    }
    for kind, count in KNOWN.items():
        for i in range(count):
            write_notebook(folder / f"{kind}{i}.ipynb", students.cells(**overrides[kind]))
    shutil.copy(REPO / "exercises" / "self_attention.ipynb", folder / "stub0.ipynb")
    (folder / "broken0.ipynb").write_text("{not json")
    out = folder / "out"
    grade_batch(folder, config, out, "self_attention")
    write_report(out)
    return out


def test_report_numbers_match_the_known_mistakes(graded: Path) -> None:
    summary = load_summary(graded)
    counts = {m.id: m.count for m in summary.mistakes}
    assert counts == {
        "scale_hardcoded": KNOWN["seed001"] + KNOWN["hardcoded"],
        "output_transposed": KNOWN["seed001"],
        "scale_discarded": KNOWN["seed001"],
        "softmax_wrong_axis": KNOWN["wrong_axis"],
        "not_implemented": 1,
    }
    who = {m.id: m.students for m in summary.mistakes}
    assert who["softmax_wrong_axis"] == ("wrong_axis0", "wrong_axis1")
    assert len(summary.students) == sum(KNOWN.values()) + 1
    rates = {t.name: (t.passed, t.total) for t in summary.targets}
    assert rates["softmax_cols"] == (11 - 2, 12)
    assert rates["scaled_dot_product_self_attention"] == (4, 12)
    assert [s for s, _ in summary.failing_to_run] == ["broken0"]
    seconds = [t for _, t in summary.slowest]
    assert len(seconds) == 10 and seconds == sorted(seconds, reverse=True)
    scaled = next(m for m in summary.mistakes if m.id == "scale_discarded")
    assert scaled.message.startswith("`all_km_qn / 2` computes the scaled scores")
    for mistake in summary.mistakes:  # no one student's cell and line in what the class reads
        assert not re.search(r"cell \d+, line \d+", mistake.message), mistake.message


def test_report_command_formats(graded: Path) -> None:
    data = json.loads(CliRunner().invoke(main, ["report", str(graded), "--format", "json"]).output)
    assert data["students"] == 12 and data["mistakes"][0]["id"] == "scale_hardcoded"
    text = CliRunner().invoke(main, ["report", str(graded), "--format", "csv"]).output
    assert "mistake,softmax_wrong_axis,2,wrong_axis0;wrong_axis1" in text
    html = CliRunner().invoke(main, ["report", str(graded)])
    assert html.exit_code == 0 and (graded / "report.html").is_file()
    missing = CliRunner().invoke(main, ["report", str(graded / "nope")])
    assert missing.exit_code == 2 and "no gradebook.sqlite" in missing.output


@pytest.mark.parametrize("size", [5, 2000])
def test_report_stays_readable(graded: Path, size: int) -> None:
    book = Gradebook(graded / "gradebook.sqlite")
    try:
        reports = [r for _, r in book.latest()]  # whole reports, with their mistakes
    finally:
        book.close()
    many = [(f"student{i:04d}", replace(reports[i % len(reports)])) for i in range(size)]
    summary = summarise("self_attention", many, [])
    assert summary.mistakes and max(m.count for m in summary.mistakes) > 50 * (size > 5)
    page = render_html(summary)
    histogram, rates = charts_in(page)
    bars = histogram.findall(".//svg:rect", SVG)
    counts = [int(b.findtext("svg:title", namespaces=SVG).split()[0]) for b in bars]
    assert len(bars) == 20 and sum(counts) == size  # half-point bins over 0..10
    widths = [float(r.get("width", "")) for r in rates.findall(".//svg:rect", SVG)]
    shares = [t.pass_rate for t in summary.targets]
    assert widths == pytest.approx([max(widths) / max(shares) * s for s in shares], abs=0.1)
    for mistake in summary.mistakes:  # long lists of names are cut, and say by how much
        cut = f"… and {mistake.count - 50} more"
        assert (cut in page) == (mistake.count > 50)
    assert page.count('<td><a href="feedback/') == size + min(size, 10)  # list + slowest
    assert len(page) < 60_000 + 400 * size


@pytest.mark.browser
def test_report_in_a_real_browser(graded: Path, chromium: Any) -> None:
    from selenium.webdriver.common.by import By

    driver = chromium
    driver.get((graded / "report.html").resolve().as_uri())
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    charts = driver.find_elements(By.TAG_NAME, "svg")
    assert [c.get_attribute("id") for c in charts] == ["histogram", "pass-rates"]
    for chart in charts:
        assert chart.size["width"] > 300 and chart.size["height"] > 100
        assert chart.find_elements(By.CSS_SELECTOR, "rect.bar")
    rows = driver.find_elements(By.CSS_SELECTOR, "#mistakes tr")
    listed = {r.find_elements(By.TAG_NAME, "td")[0].text for r in rows[1:]}
    assert listed == {
        "scale_hardcoded",
        "output_transposed",
        "scale_discarded",
        "softmax_wrong_axis",
        "not_implemented",
    }
    link = driver.find_element(By.LINK_TEXT, "wrong_axis0").get_attribute("href")
    assert link is not None and link.endswith("feedback/wrong_axis0.html")
