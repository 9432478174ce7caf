"""Feedback pages of students whose ids Windows keeps for devices (`CON`, `nul`): written
under a name Windows can create, and report.html links to that name."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.render.escape import safe_name

import students


@pytest.mark.slow
def test_a_device_names_student_gets_a_page_windows_can_create_and_the_report_links_it(
    tmp_path: Path,
) -> None:
    course, folder = students.fast_class(tmp_path, "CON", "con_", "ada")
    out = tmp_path / "out"
    where = ["--course", str(course), "-a", "self_attention"]
    done = CliRunner().invoke(main, ["grade", str(folder), "--out", str(out), *where])
    assert done.exit_code == 0, done.output
    pages = sorted(p.name for p in (out / "feedback").iterdir())
    assert len(pages) == 3 and "CON.html" not in pages and "ada.html" in pages
    assert pages == sorted(f"{safe_name(s)}.html" for s in ("CON", "con_", "ada"))
    report = (out / "report.html").read_text(encoding="utf-8")
    for page in pages:
        assert f'href="feedback/{quote(page)}"' in report, page
    assert all(page.split(".")[0].upper() != "CON" for page in pages)
