"""Red-team findings on the instructor's semester: what a hostile student's folder or a
careless instructor's files did to the trusted side, each pinned by a test that failed
before its fix."""

from __future__ import annotations

import csv
import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.author.assign import write_exercise
from grader.author.exercise_outputs import quoted_solution
from grader.batch.adjust import read_changes
from grader.batch.lateness import Handed, handed_in, late_of, load_extensions
from grader.batch.roster import load_roster
from grader.cli import main
from grader.course.bundle import BUNDLE_NAME
from grader.course.config import load_config
from grader.course.deadline import LatePolicy, lateness
from grader.errors import ConfigError, UsageError

import students
from authoring import new_course, refused
from conftest import repo_config_raw, write_notebook

DUE = datetime(2026, 3, 1, 23, 59, tzinfo=UTC)
GIT = ["git", "-c", "user.name=M", "-c", "user.email=m@x"]


def _clone(tmp_path: Path) -> tuple[Path, Path]:
    """A student's folder holding a git repository of their own making (its .git/config
    too), with one commit of hw.ipynb; (the class folder, the notebook)."""
    folder = tmp_path / "class" / "mallory"
    folder.mkdir(parents=True)
    notebook = folder / "hw.ipynb"
    notebook.write_text("{}", encoding="utf-8")
    subprocess.run([*GIT, "init", "-q"], cwd=folder, check=True)
    subprocess.run([*GIT, "add", "hw.ipynb"], cwd=folder, check=True)
    subprocess.run([*GIT, "commit", "-qm", "hw"], cwd=folder, check=True)
    return tmp_path / "class", notebook


def _program(tmp_path: Path) -> tuple[Path, Path]:
    """A program that leaves a mark when run: (the program, the mark)."""
    mark = tmp_path / "ran"
    program = tmp_path / "evil.sh"
    program.write_text(f"#!/bin/sh\ntouch '{mark}'\nexit 1\n", encoding="utf-8")
    program.chmod(0o755)
    return program, mark


def _git(folder: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=folder, check=True, capture_output=True, text=True, input=stdin
    )
    return done.stdout.strip()


def test_a_students_git_config_runs_no_signature_program(tmp_path: Path) -> None:
    # log.showSignature made `git log` hand a "signed" commit to the repository's own
    # gpg.program: the student's program, run by the instructor's grader.
    source, notebook = _clone(tmp_path)
    program, mark = _program(tmp_path)
    folder = notebook.parent
    tree = _git(folder, "rev-parse", "HEAD^{tree}")
    signed = (
        f"tree {tree}\nauthor m <m@x> 1577836800 +0000\ncommitter m <m@x> 1577836800 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAd\n -----END PGP SIGNATURE-----\n"
        "\nsigned\n"
    )
    commit = _git(folder, "hash-object", "-t", "commit", "-w", "--stdin", stdin=signed)
    _git(folder, "update-ref", "HEAD", commit)
    _git(folder, "config", "log.showSignature", "true")
    _git(folder, "config", "gpg.program", str(program))
    handed = handed_in(("mallory",), notebook, source, {}, DUE)
    assert not mark.exists()
    assert handed.at == datetime(2020, 1, 1, tzinfo=UTC)  # the time is still read


def test_a_students_git_config_fetches_nothing_through_its_ssh_command(tmp_path: Path) -> None:
    # A "partial clone" whose commit names a tree it lacks: `git log -- FILE` fetched it from
    # the promisor remote through the repository's core.sshCommand, the student's program.
    source, notebook = _clone(tmp_path)
    program, mark = _program(tmp_path)
    folder = notebook.parent
    missing = (
        f"tree {'1' * 40}\nauthor m <m@x> 1577836800 +0000\n"
        "committer m <m@x> 1577836800 +0000\n\nx\n"
    )
    commit = _git(
        folder, "hash-object", "-t", "commit", "--literally", "-w", "--stdin", stdin=missing
    )
    _git(folder, "update-ref", "HEAD", commit)
    for key, value in (
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.url", "ssh://example.invalid/x"),
        ("remote.origin.promisor", "true"),
        ("core.sshCommand", str(program)),
    ):
        _git(folder, "config", key, value)
    os.utime(notebook, (0, 0))
    handed = handed_in(("mallory",), notebook, source, {}, DUE)
    assert not mark.exists()
    assert handed.at == datetime.fromtimestamp(0).astimezone()  # no commit: the file's time


def test_a_roster_saved_with_blank_spreadsheet_rows_loads(tmp_path: Path) -> None:
    # A spreadsheet saves rows it once formatted as `,,,,,`: each stopped `grader grade`
    # with "the id is empty". Empty cells only are a blank line; a row with any text is not.
    path = tmp_path / "roster.csv"
    path.write_text(
        "id,name,email\r\ns001,Ada Lovelace,ada@uni.edu\r\n,,\r\n , ,,,\r\ns002,Bo Chen,\r\n,,\r\n",
        encoding="utf-8",
    )
    assert [s.id for s in load_roster(path)] == ["s001", "s002"]
    path.write_text("id,name\ns001,Ada\n,Bo\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 3: the id is empty"):
        load_roster(path)


def test_a_blank_spreadsheet_row_in_extensions_is_no_bad_line(tmp_path: Path) -> None:
    (tmp_path / "roster.csv").write_text("id,name\ns001,Ada\n,\n", encoding="utf-8")
    (tmp_path / "extensions.csv").write_text("student,hours\ns001,48\n,\n", encoding="utf-8")
    assert load_extensions(tmp_path) == {"s001": 48.0}


def test_a_roster_separated_by_semicolons_says_so(tmp_path: Path) -> None:
    path = tmp_path / "roster.csv"
    path.write_text("id;name;email\ns001;Ada Lovelace;ada@uni.edu\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="separated by ';': save it as comma-separated CSV"):
        load_roster(path)


@pytest.mark.parametrize("out", ["..", "../.."])
def test_release_into_a_folder_holding_the_course_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str
) -> None:
    # `--out ..` (the repository the course lies in, say) wrote the bundle beside the
    # course's own folder: whoever got the handout got the solutions with it.
    course = new_course(tmp_path / "teaching")
    write_exercise(load_config(course / "config.yaml").assignment("example"))
    monkeypatch.chdir(course)
    said = refused(["release", "--course", ".", "--out", out], course)
    assert said.startswith(f"Error: --out {out} holds ") and "students must never get" in said
    assert not list(tmp_path.rglob(BUNDLE_NAME))


def _grade(command: list[str], *more: str) -> dict[str, dict[str, str]]:
    result = CliRunner().invoke(main, [*command, *more])
    assert result.exit_code == 0, result.output
    out = Path(command[command.index("--out") + 1])
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


@pytest.mark.slow
def test_a_rerun_without_submitted_at_keeps_the_times_it_was_given(tmp_path: Path) -> None:
    # Graded with --submitted-at, then again without it (after a config fix, --force or
    # not): every student's time fell back to the file's, copied after the due date, and
    # each total lost the capped 50%. A time given once stays while the notebook is the same.
    raw = repo_config_raw()
    raw["assignments"]["self_attention"].update(
        due="2026-03-01T23:59:00+01:00", late={"percent": 10, "per": "hour", "cap": 50}
    )
    course = tmp_path / "course"
    course.mkdir()
    (course / "config.yaml").write_text(json.dumps(raw))
    folder = tmp_path / "class"
    folder.mkdir()
    for student in ("ada", "bo"):
        write_notebook(folder / f"{student}.ipynb", students.cells())
    times = tmp_path / "times.csv"
    times.write_text(
        "student,timestamp\nada,2026-03-01T23:59:00+01:00\nbo,2026-03-02T00:30+01:00\n"
    )
    command = ["grade", str(folder), "--course", str(course), "-a", "self_attention"]
    command += ["--out", str(tmp_path / "out")]
    first = _grade(command, "--submitted-at", str(times))
    assert [first[s]["late_penalty"] for s in ("ada", "bo")] == ["0.0", "10.0"]
    for more in ([], ["--force"]):
        again = _grade(command, *more)
        for student in ("ada", "bo"):
            assert again[student]["total"] == first[student]["total"]
            assert again[student]["lateness"] == first[student]["lateness"]
    # A notebook handed in again is another submission: the time given for the old one
    # is not its time.
    write_notebook(folder / "bo.ipynb", [*students.cells(), "x = 1"])
    changed = _grade(command)
    assert "modification time" in changed["bo"]["lateness"]
    assert changed["ada"]["lateness"] == first["ada"]["lateness"]


def test_a_bulk_override_file_giving_a_function_twice_is_refused(tmp_path: Path) -> None:
    # Two TAs' regrade sheets pasted together gave s1's softmax 0 and then 1: the last line
    # won in silence ("2 overrides recorded"). Which one counts is the instructor's call.
    sheet = tmp_path / "regrades.csv"
    sheet.write_text(
        "student,target,points,comment\ns1,softmax,0,ta one\ns1,,8,\ns1,softmax,1,ta two\n"
    )
    with pytest.raises(UsageError) as refused_sheet:
        read_changes(sheet)
    assert str(refused_sheet.value) == (
        f"{sheet} line 4: s1's `softmax` is already on line 2: give each student's function "
        "(or total) once"
    )
    sheet.write_text("student,target,points,comment\ns1,,8,\ns2,,8,\ns1,,,\n")
    with pytest.raises(UsageError, match="line 4: s1's total is already on line 2"):
        read_changes(sheet)
    sheet.write_text("student,target,points,comment\ns1,softmax,1,\ns1,,8,\ns2,softmax,1,\n")
    assert [(c.student, c.target) for c in read_changes(sheet)] == [
        ("s1", "softmax"),
        ("s1", ""),
        ("s2", "softmax"),
    ]


@pytest.mark.slow
def test_a_roster_added_later_keeps_the_overrides_and_comments_made_before(
    tmp_path: Path,
) -> None:
    # Graded without a roster, an override and a comment went to `chenbo_4243` (the Canvas
    # name); with a roster added, the student is `s2`, and both were gone from grades.csv
    # and every export (the total back to the autograded one): nothing said so.
    course = tmp_path / "course"
    course.mkdir()
    (course / "config.yaml").write_text(json.dumps(repo_config_raw()))
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / "chenbo_4243_1_hw.ipynb", students.cells())
    out = tmp_path / "out"
    where = ["--results", str(out), "--course", str(course)]
    command = ["grade", str(folder), "--course", str(course), "-a", "self_attention"]
    before = _grade([*command, "--out", str(out)])
    full = float(before["chenbo_4243"]["total"])
    assert [p.name for p in (out / "feedback").iterdir()] == ["chenbo_4243.html"]
    said = CliRunner().invoke(main, ["override", "chenbo_4243", "--points", "1", *where])
    assert said.exit_code == 0, said.output
    said = CliRunner().invoke(main, ["comment", "chenbo_4243", "see me", *where])
    assert said.exit_code == 0, said.output
    (course / "roster.csv").write_text("id,name,lms_id\ns1,Ada Lovelace,4242\ns2,Bo Chen,4243\n")
    after = _grade([*command, "--out", str(out)])
    assert full != 1 and float(after["s2"]["total"]) == 1
    assert "total set to 1" in after["s2"]["overrides"] and "see me" in after["s2"]["comments"]
    # r46 #9: the page under the LMS name stayed beside the new one, showing the old total
    assert [p.name for p in (out / "feedback").iterdir()] == ["s2.html"]
    exported = CliRunner().invoke(main, ["export", "--format", "canvas", *where, "--out", "-"])
    rows = {row["SIS User ID"]: row for row in csv.DictReader(exported.stdout.splitlines())}
    assert float(rows["s2"]["self_attention"]) == 1 and float(rows["s1"]["self_attention"]) == 0


def test_a_roster_giving_one_lms_id_to_two_students_is_refused(tmp_path: Path) -> None:
    # A pasted row: Ada's Canvas user id on Bo's line too. Every submission of 4242 went to
    # Bo in silence (the later row won) and Ada had "no submission".
    path = tmp_path / "roster.csv"
    path.write_text("id,name,lms_id\ns1,Ada Lovelace,4242\ns2,Bo Chen,4242\ns3,Cy,\ns4,Di,\n")
    with pytest.raises(ConfigError) as refused_roster:
        load_roster(path)
    assert str(refused_roster.value) == f"{path} line 3: the lms_id '4242' is already on line 2"
    path.write_text("id,name,lms_id\ns1,Ada,4242\ns2,Bo,4243\ns3,Cy,\ns4,Di,\n")
    assert [s.lms_id for s in load_roster(path)] == ["4242", "4243", "", ""]


def test_a_submission_seconds_late_says_how_many_seconds() -> None:
    # One second late cost a started hour, and the note said "0 min after the due date".
    policy = LatePolicy(DUE, percent=10, per="hour")
    for seconds, shown in ((1, "1 s"), (0.2, "1 s"), (59, "59 s"), (61, "1 min 1 s")):
        late = lateness(policy, DUE + timedelta(seconds=seconds))
        assert late.percent == 10
        assert f", {shown} after the due date: late penalty 10%" in late.note
    assert lateness(policy, DUE).note.endswith(", on time")


def _with_output(exercise: Path, output: dict[str, object]) -> None:
    """Save `output` as the output of the exercise's cell that defines standardize."""
    notebook = json.loads(exercise.read_text(encoding="utf-8"))
    cell = next(c for c in notebook["cells"] if "def standardize" in "".join(c["source"]))
    cell["outputs"], cell["execution_count"] = [output], 2
    exercise.write_text(json.dumps(notebook), encoding="utf-8")


def test_an_exercise_whose_saved_output_quotes_the_solution_is_never_handed_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An exercise run while it still held the solution, then emptied by hand: its traceback
    # (coloured, as IPython saves it) quoted the solution's line, and release handed it out.
    course = new_course(tmp_path)
    spec = load_config(course / "config.yaml").assignment("example")
    write_exercise(spec)
    assert spec.exercise is not None
    coloured = "\x1b[0;32m----> 4\x1b[0m \x1b[38;5;28;01mreturn\x1b[39;00m (x - x.mean(axis=0))"
    _with_output(
        spec.exercise,
        {
            "output_type": "error",
            "ename": "ValueError",
            "evalue": "boom",
            "traceback": [f"{coloured} / x.std(axis=0)\n"],
        },
    )
    monkeypatch.chdir(course)
    said = refused(["release", "--course", ".", "--out", str(tmp_path / "handout")], course)
    line = "return (x - x.mean(axis=0)) / x.std(axis=0)"
    assert f"saved output shows the solution's line `{line}`" in said
    assert not (tmp_path / "handout").exists()
    # Numbers an exercise shows on purpose ("your output should look like this") are no code.
    _with_output(
        spec.exercise,
        {"output_type": "stream", "name": "stdout", "text": ["[[ 1.22 -1.22]\n", " [0. 0.]]\n"]},
    )
    assert quoted_solution(spec.exercise, spec.solution) is None


def test_submitted_at_matches_a_student_as_the_roster_does(tmp_path: Path) -> None:
    # A spreadsheet's `S001` (or a name in another Unicode form) matched nobody: the time
    # fell back to the file's, 50% off, while extensions.csv matched it case aside.
    notebook = tmp_path / "class" / "s001.ipynb"
    notebook.parent.mkdir()
    notebook.write_text("{}", encoding="utf-8")
    given = {"S001": DUE, "Zoe\u0301": DUE, "s002": DUE}
    assert handed_in(("s001",), notebook, notebook.parent, given, DUE).at == DUE
    assert handed_in(("zo\u00e9",), notebook, notebook.parent, given, DUE).at == DUE
    exact = {"Ada": DUE, "ada": DUE + timedelta(hours=1)}  # two students, one each
    assert handed_in(("ada",), notebook, notebook.parent, exact, DUE).at == exact["ada"]
    assert "modification time" in handed_in(("s003",), notebook, notebook.parent, given, DUE).source


@pytest.mark.parametrize("listed", ["course-secret.txt", "roster.csv", "extensions.csv"])
def test_the_class_list_and_the_course_secret_are_never_data_files(
    tmp_path: Path, listed: str
) -> None:
    # `files:` took them: `grader release` handed them out (every name and e-mail of the
    # class; the secret every classmate's per-student inputs derive from), and each
    # student's notebook could read them in the sandbox.
    raw = repo_config_raw()
    raw["secret_file"] = "course-secret.txt"
    course = tmp_path / "course"
    course.mkdir()
    for name in ("course-secret.txt", "roster.csv", "extensions.csv", "data.csv"):
        (course / name).write_text("x\n", encoding="utf-8")
    raw["assignments"]["self_attention"]["files"] = ["data.csv", listed]
    (course / "config.yaml").write_text(json.dumps(raw))
    with pytest.raises(ConfigError) as refused_config:
        load_config(course / "config.yaml")
    assert f"assignments.self_attention.files: {listed!r} is the class list, its extensions" in (
        str(refused_config.value)
    )
    raw["assignments"]["self_attention"]["files"] = ["data.csv"]
    (course / "config.yaml").write_text(json.dumps(raw))
    spec = load_config(course / "config.yaml").assignment("self_attention")
    assert [data.name for data in spec.files] == ["data.csv"]


def test_a_canvas_late_flag_does_not_undo_an_extension() -> None:
    # Canvas flags `_LATE_` against its own due date; a student with 48 h of extension who
    # handed in an hour after the due date was charged a period all the same.
    policy = LatePolicy(DUE, percent=10, per="hour")
    flagged = Handed(DUE + timedelta(hours=1), "the file's time (flagged _LATE_ by Canvas)")
    assert late_of(policy, flagged, 48).percent == 0
    assert late_of(policy, flagged, 0).percent == 10  # no extension: an hour late
    early = Handed(DUE - timedelta(hours=1), "the file's time (flagged _LATE_ by Canvas)")
    assert late_of(policy, early, 0).percent == 10  # Canvas knows better than the file
    assert late_of(policy, Handed(DUE + timedelta(hours=49), flagged.source), 48).percent == 10
