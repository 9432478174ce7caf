"""The `grader` command: output formats, exit codes, errors as `Error:` lines."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main

import students
from conftest import REPO, NotebookFactory, write_notebook

SOLUTION = str(REPO / "solutions" / "self_attention.ipynb")
EXERCISE = str(REPO / "exercises" / "self_attention.ipynb")
CONFIG = str(REPO / "config.yaml")  # named: the bundled course is refused for its own notebooks


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_check_passing_notebook_exits_0() -> None:
    code, out, _ = invoke("check", SOLUTION, "--config", str(REPO / "config.yaml"))
    assert code == 0
    assert "10 / 10 points" in out
    assert "✓ scaled_dot_product_self_attention" in out


def test_check_failing_notebook_exits_1_with_reasons() -> None:
    code, out, _ = invoke("check", EXERCISE, "--config", CONFIG)
    assert code == 1
    assert "0 / 10 points" in out
    assert "not implemented yet" in out


def test_json_format_follows_the_contract(notebook: NotebookFactory) -> None:
    path = notebook(students.cells(scaled_dot_product_self_attention=students.SEED_001_SCALED))
    code, out, _ = invoke("check", str(path), "--format", "json")
    assert code == 1
    data = json.loads(out)
    assert set(data) >= {"assignment", "submission", "score", "max_score", "targets", "errors"}
    assert data["assignment"] == "self_attention"
    assert data["max_score"] == 10
    target = {t["name"]: t for t in data["targets"]}["scaled_dot_product_self_attention"]
    assert set(target) == {
        "name",
        "status",
        "score",
        "max_score",
        "mistakes",
        "messages",
        "location",
        "findings",  # added by issue 15: the messages as data
        "hidden_cases",  # added by issue 16: cases a student bundle's check leaves out
    }
    assert target["hidden_cases"] == 0  # the whole course: every case graded
    assert target["status"] == "failed"
    assert target["mistakes"] == ["output_transposed", "scale_discarded", "scale_hardcoded"]
    assert target["location"] == {"cell": 8, "line": 9}  # the transposing `return`
    statuses = {t["status"] for t in data["targets"]}
    assert statuses <= {"passed", "failed", "error", "missing", "timeout"}
    assert data["score"] == pytest.approx(sum(t["score"] for t in data["targets"]))


@pytest.mark.parametrize(
    ("content", "words"),
    [(None, "no such file"), (b"{not json", "invalid JSON"), (b"\xff\xfe", "not UTF-8")],
    ids=["missing", "not-json", "not-utf8"],
)
def test_unreadable_notebook_exits_2(tmp_path: Path, content: bytes | None, words: str) -> None:
    path = tmp_path / "bad.ipynb"
    if content is not None:
        path.write_bytes(content)
    code, out, err = invoke("check", str(path), "--assignment", "self_attention")
    assert code == 2
    assert err.startswith("Error: ") and words in err
    assert "Traceback" not in err and out == ""


def test_bad_config_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "c.yaml"
    bad.write_text("version: 1\nassignments: {x: {seed: -1}}\n")
    code, _, err = invoke("check", SOLUTION, "--config", str(bad))
    assert code == 2
    assert "assignments.x: missing required key" in err


def test_unknown_assignment_and_unknown_format_exit_2() -> None:
    assert invoke("check", SOLUTION, "--assignment", "nope")[0] == 2
    assert invoke("check", SOLUTION, "--format", "yaml")[0] == 2


def test_internal_error_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("grader.cli.grading.grade_path", explode)
    code, _, err = invoke("check", SOLUTION, "--config", CONFIG)
    assert code == 3
    assert "Error: internal error: RuntimeError: boom" in err


def test_assign_writes_the_exercise(tmp_path: Path) -> None:
    out = tmp_path / "student.ipynb"
    code, stdout, _ = invoke("assign", "--assignment", "self_attention", "--out", str(out))
    assert code == 0 and "wrote" in stdout
    assert out.read_text() == Path(EXERCISE).read_text()


@pytest.mark.slow
def test_grade_prints_a_table_and_writes_csv(tmp_path: Path) -> None:
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "ada.ipynb").write_text(Path(SOLUTION).read_text())
    (folder / "bo.ipynb").write_text(Path(EXERCISE).read_text())
    (folder / "junk.ipynb").write_text("{oops")
    (folder / "notes.txt").write_text("hello")
    code, out, err = invoke("grade", str(folder), "--out", str(tmp_path / "out"))
    assert code == 1  # junk.ipynb could not be graded
    lines = out.splitlines()
    assert any(line.startswith("ada") and line.endswith("10/10") for line in lines)
    assert any(line.startswith("bo") and line.endswith("0/10") for line in lines)
    assert any(
        line.startswith("junk ") and "not graded" in line and "invalid JSON" in line
        for line in lines
    )
    assert "notes.txt: not a notebook" in err
    csv_text = (tmp_path / "out" / "grades.csv").read_text().splitlines()
    assert csv_text[0].startswith("student,qkv_loop,softmax,")
    assert len(csv_text) == 4
    # The row of the notebook that could not be graded has the maximum too (it was blank
    # without a roster: a spreadsheet's total/max_total column failed on it)
    table = {row["student"]: row for row in csv.DictReader(io.StringIO("\n".join(csv_text)))}
    assert table["junk"]["max_total"] == table["ada"]["max_total"]
    assert float(table["ada"]["max_total"]) == 10


@pytest.mark.slow
def test_grade_exits_1_when_a_submission_could_not_be_graded_unless_allowed(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "subs"
    folder.mkdir()
    write_notebook(folder / "ada.ipynb", students.cells())
    write_notebook(
        folder / "bo.ipynb",
        students.cells(scaled_dot_product_self_attention=students.SCALE_HARDCODED),
    )
    (folder / "notes.txt").write_text("not a submission: skipped, not a failure")
    code, out, _ = invoke("grade", str(folder), "-a", "self_attention")
    assert code == 0, out  # a wrong answer is graded: 0 means every one was
    (folder / "junk.ipynb").write_text("{oops")
    code, out, _ = invoke("grade", str(folder), "-a", "self_attention")
    assert code == 1 and "1 could not be graded" in out
    code, out, _ = invoke("grade", str(folder), "-a", "self_attention", "--allow-ungraded")
    assert code == 0 and "1 could not be graded" in out


def test_grade_missing_folder_exits_2(tmp_path: Path) -> None:
    code, _, err = invoke("grade", str(tmp_path / "none"))
    assert code == 2 and "not a folder" in err


def test_grade_into_an_output_folder_it_cannot_make_exits_2_before_grading(
    tmp_path: Path,
) -> None:
    (tmp_path / "class").mkdir()
    write_notebook(tmp_path / "class" / "ada.ipynb", students.cells())
    afile = tmp_path / "results.txt"
    afile.write_text("not a folder")
    for out, words in (
        (afile, "exists and is not a folder"),
        (afile / "sub", "cannot create the folder (Not a directory)"),
    ):
        code, stdout, err = invoke("grade", str(tmp_path / "class"), "--out", str(out))
        assert code == 2 and f"--out {out}: {words}" in err and "Traceback" not in err
        assert "graded" not in stdout
    assert afile.read_text() == "not a folder"


def test_a_gradebook_that_is_not_ours_exits_2_and_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "class").mkdir()
    write_notebook(tmp_path / "class" / "ada.ipynb", students.cells())
    garbage, foreign = tmp_path / "garbage", tmp_path / "foreign"
    for folder in (garbage, foreign):
        folder.mkdir()
    (garbage / "gradebook.sqlite").write_bytes(b"not a database, just bytes" * 100)
    with sqlite3.connect(foreign / "gradebook.sqlite") as db:
        db.execute("CREATE TABLE results (who TEXT, grade REAL)")
    for out in (garbage, foreign):
        before = (out / "gradebook.sqlite").read_bytes()
        for command in (
            ("grade", str(tmp_path / "class"), "--out", str(out)),
            ("report", str(out)),
        ):
            code, _, err = invoke(*command)
            assert code == 2, err
            assert f"{out / 'gradebook.sqlite'}: not a gradebook this grader can use" in err
            assert "Traceback" not in err
        assert (out / "gradebook.sqlite").read_bytes() == before


def test_help_has_examples() -> None:
    code, out, _ = invoke("check", "--help")
    assert code == 0 and "Example" in out and "Exit code" in out


@pytest.mark.slow
def test_python_dash_m_works() -> None:
    command = [sys.executable, "-m", "grader", "check", SOLUTION, "--course", str(REPO)]
    result = subprocess.run(
        [*command, "--format", "json"], capture_output=True, text=True, check=False, cwd=REPO
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["score"] == 10


@pytest.mark.parametrize(
    "command",
    [
        ["export", "--format", "canvas", "--results", "results"],
        ["export-gradescope", "-a", "self_attention"],
        ["assign", "-a", "self_attention"],
    ],
    ids=["export", "export-gradescope", "assign"],
)
def test_an_out_file_that_cannot_be_written_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    # The folder of --out is a file: each of these once ended in a traceback (exit 3).
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken").write_text("a file, not a folder\n")
    out = Path("taken") / "x.out"
    result = CliRunner().invoke(main, [*command, "--course", str(REPO), "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [f"Error: --out {out}: taken is not a folder"]
