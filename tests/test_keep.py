"""Several notebooks from one student: each graded, the best or the latest kept, and a line
(on the terminal and in the feedback page) saying which and why."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.batch.keep import Candidate, choose
from grader.cli import main

import students
from conftest import repo_config_raw, write_notebook


def test_best_keeps_the_most_points_and_a_tie_goes_to_the_latest() -> None:
    a, b, c = (Candidate(k, Path(f"{k}.ipynb"), p) for k, p in (("a", 7), ("b", 9), ("c", 9)))
    kept, line = choose([a, b, c], "best")
    assert kept is c and "kept c.ipynb, the best (keep: best)" in line
    assert "a.ipynb: 7 points" in line
    kept, _ = choose([b, Candidate("d", Path("d.ipynb"), None)], "best")
    assert kept is b  # a notebook that could not be graded is never the best
    kept, line = choose([a, b, c], "latest")
    assert (
        kept is c
        and line == "3 notebooks (a.ipynb, b.ipynb, c.ipynb); kept the latest (keep: latest)"
    )


def course(tmp_path: Path, keep: str | None) -> Path:
    raw = repo_config_raw()
    if keep:
        raw["assignments"]["self_attention"]["keep"] = keep
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "config.yaml").write_text(json.dumps(raw))
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("keep", ["best", None])
def test_each_notebook_is_graded_and_the_kept_one_is_said(tmp_path: Path, keep: str | None) -> None:
    folder = tmp_path / "class"
    # Canvas: the resubmission (submission 12) is worse than the first one (11).
    folder.mkdir()
    write_notebook(folder / "parkkim_4242_11_hw.ipynb", students.cells())
    worse = students.cells(softmax_cols=students.SOFTMAX_COLS_WRONG_AXIS)
    write_notebook(folder / "parkkim_4242_12_hw.ipynb", worse)
    write_notebook(folder / "ada.ipynb", students.cells())
    out = tmp_path / "out"
    command = [
        "grade",
        str(folder),
        "--course",
        str(course(tmp_path, keep)),
        "-a",
        "self_attention",
    ]
    result = CliRunner().invoke(main, [*command, "--out", str(out)])
    assert result.exit_code == 0, result.output
    with (out / "grades.csv").open() as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    full = float(rows["ada"]["max_total"])
    page = (out / "feedback" / "parkkim_4242.html").read_text()
    if keep == "best":
        said = "kept parkkim_4242_11_hw.ipynb, the best (keep: best)"
        assert float(rows["parkkim_4242"]["total"]) == full
        assert "parkkim_4242_12_hw.ipynb: " in result.stderr
    else:
        said = "kept the latest (keep: latest)"
        assert float(rows["parkkim_4242"]["total"]) < full
    assert said in page
    assert said in result.stderr or "graded the last" in result.stderr
    # Graded again, nothing changed: the same one is kept, the note once.
    result = CliRunner().invoke(main, [*command, "--out", str(out)])
    with (out / "grades.csv").open() as handle:
        again = {row["student"]: row for row in csv.DictReader(handle)}
    assert again["parkkim_4242"]["total"] == rows["parkkim_4242"]["total"]
    assert (out / "feedback" / "parkkim_4242.html").read_text().count(said) == 1
