"""Students whose names differ only in case (`Ada`, `ada`) get feedback pages that stay two
files on a disk that ignores case (macOS, Windows), and the class report links each page.
(Release folders need a roster, which refuses ids one only in case: batch/roster.py.)"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.render.escape import safe_name, twins

import students


def test_names_one_only_in_case_get_names_one_in_no_case() -> None:
    names = ["Ada", "ada", "José", "jose\u0301", "Kim_Park", "bo"]
    clashing = twins(names)
    files = [safe_name(n, clashing) for n in names]
    assert len({f.casefold() for f in files}) == len(names)
    assert safe_name("bo", clashing) == "bo" and safe_name("Kim_Park", clashing) == "Kim_Park"
    assert files[0].startswith("Ada-") and files[1].startswith("ada-")
    assert [safe_name(n) for n in names[:2]] == ["Ada", "ada"]  # the clash, without twins


@pytest.mark.slow
def test_feedback_pages_of_ada_and_ADA_are_two_files_anywhere(tmp_path: Path) -> None:
    course, folder = students.fast_class(tmp_path, "Ada", "ada", "bo")
    out = tmp_path / "out"
    where = ["--course", str(course), "-a", "self_attention"]
    done = CliRunner().invoke(main, ["grade", str(folder), "--out", str(out), *where])
    assert done.exit_code == 0, done.output
    pages = sorted(p.name for p in (out / "feedback").iterdir())
    assert len({p.casefold() for p in pages}) == 3 and "bo.html" in pages
    report = (out / "report.html").read_text(encoding="utf-8")
    links = {unquote(link) for link in re.findall(r'href="(feedback/[^"]+)"', report)}
    assert links == {f"feedback/{page}" for page in pages}
    # A rerun, and the overrides' rewrite, keep the same names.
    again = CliRunner().invoke(main, ["grade", str(folder), "--out", str(out), *where])
    assert again.exit_code == 0, again.output
    assert sorted(p.name for p in (out / "feedback").iterdir()) == pages


@pytest.mark.slow
def test_a_twin_coming_later_leaves_no_page_under_the_plain_name(tmp_path: Path) -> None:
    course, folder = students.fast_class(tmp_path, "Ada", "bo")
    out = tmp_path / "out"
    where = ["--course", str(course), "-a", "self_attention"]
    first = CliRunner().invoke(main, ["grade", str(folder), "--out", str(out), *where])
    assert first.exit_code == 0, first.output
    assert (out / "feedback" / "Ada.html").is_file()
    students.write_notebook(folder / "ada.ipynb", students.cells())
    again = CliRunner().invoke(main, ["grade", str(folder), "--out", str(out), *where])
    assert again.exit_code == 0, again.output
    pages = sorted(p.name for p in (out / "feedback").iterdir())
    assert len(pages) == 3 and "bo.html" in pages
    assert not {"Ada.html", "ada.html"} & set(pages)  # last run's page is not handed out
    assert [p for p in pages if p.startswith(("Ada-", "ada-"))] == pages[:2]
