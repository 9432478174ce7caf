"""Finding a class's submissions: folders, LMS exports, zips, and what is wrong with them."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from grader.batch.submissions import find_submissions, student_of
from grader.errors import UsageError
from grader.render.escape import safe_name


@pytest.mark.parametrize(
    ("name", "is_dir", "student"),
    [
        ("smithjane_12345_67890_homework.ipynb", False, "smithjane_12345"),
        ("smithjane_LATE_12345_67891_hw-1.ipynb", False, "smithjane_12345"),
        ("Jane Smith_12345_assignsubmission_file_", True, "Jane Smith_12345"),
        ("Jane Smith_12345_assignsubmission_file_hw_2.ipynb", False, "Jane Smith_12345"),
        ("HW3_jsmith_attempt_2026-11-20-10-11-12_attention.ipynb", False, "jsmith"),
        ("ada.ipynb", False, "ada"),
        ("bo", True, "bo"),
    ],
    ids=[
        "canvas",
        "canvas-late",
        "moodle",
        "moodle-flat",  # "Download submissions in folders" off: the folder's name before the file's
        "blackboard",
        "plain-file",
        "plain-folder",
    ],
)
def test_lms_names(name: str, is_dir: bool, student: str) -> None:
    assert student_of(name, is_dir)[0] == student


def test_folder_with_duplicates_junk_and_empty_folders(tmp_path: Path) -> None:
    (tmp_path / "ada.ipynb").write_text("{}")
    (tmp_path / "notes.txt").write_text("hi")
    (tmp_path / "bo").mkdir()
    (tmp_path / "bo" / "work").mkdir()
    (tmp_path / "bo" / "work" / "hw.ipynb").write_text("{}")
    (tmp_path / "cy").mkdir()
    (tmp_path / "smithjane_1_10_a.ipynb").write_text("{}")
    (tmp_path / "smithjane_LATE_1_12_b.ipynb").write_text("{}")
    found = find_submissions(tmp_path, tmp_path / "scratch")
    assert [(s, p.name) for s, p in found.submissions] == [
        ("ada", "ada.ipynb"),
        ("bo", "hw.ipynb"),
        ("smithjane_1", "smithjane_LATE_1_12_b.ipynb"),
    ]
    problems = "\n".join(found.problems)
    assert "notes.txt: not a notebook" in problems
    assert "cy/: no notebook inside" in problems
    assert "smithjane_1: 2 submissions" in problems and "graded the last" in problems


def test_hidden_folders_in_a_students_folder_hold_no_submission(tmp_path: Path) -> None:
    """A cloned repository may carry a virtual environment or checkpoints with notebooks."""
    repo = tmp_path / "ann"
    for hidden in (".ipynb_checkpoints", ".venv/lib/site-packages/pkg", ".github", "__MACOSX"):
        (repo / hidden).mkdir(parents=True)
        (repo / hidden / "z_example.ipynb").write_text("{}")
    (repo / "hw.ipynb").write_text("{}")
    found = find_submissions(tmp_path, tmp_path / "scratch")
    assert [(s, p.name) for s, p in found.submissions] == [("ann", "hw.ipynb")]
    assert found.problems == []


def test_two_students_of_one_name_are_two_students(tmp_path: Path) -> None:
    """Canvas and Moodle name students by display name *and* user id: a class may hold two
    Wang Weis, and grading only the later upload of "wangwei" would drop one of them."""
    for name in ("wangwei_11_100_hw.ipynb", "wangwei_12_101_hw.ipynb", "wangwei_12_99_a.ipynb"):
        (tmp_path / name).write_text("{}")
    for folder in ("Wang Wei_21_assignsubmission_file_", "Wang Wei_22_assignsubmission_file_"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "hw.ipynb").write_text("{}")
    found = find_submissions(tmp_path, tmp_path / "scratch")
    assert [(s, p.name) for s, p in found.submissions] == [
        ("Wang Wei_21", "hw.ipynb"),
        ("Wang Wei_22", "hw.ipynb"),
        ("wangwei_11", "wangwei_11_100_hw.ipynb"),
        ("wangwei_12", "wangwei_12_101_hw.ipynb"),
    ]
    assert found.problems == [
        "wangwei_12: 2 submissions (wangwei_12_99_a.ipynb, wangwei_12_101_hw.ipynb); "
        "graded the last, wangwei_12_101_hw.ipynb"
    ]


def test_zip_export_is_unpacked_safely(tmp_path: Path) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("submissions/leeann_7_70_hw.ipynb", "{}")
        bundle.writestr("submissions/Kim Park_8_assignsubmission_file_/hw.ipynb", "{}")
        bundle.writestr("../escape.ipynb", "{}")
        bundle.writestr("/abs/escape.ipynb", "{}")
        bundle.writestr("__MACOSX/._x", "junk")
    found = find_submissions(archive, tmp_path / "scratch")
    assert [s for s, _ in found.submissions] == ["Kim Park_8", "leeann_7"]
    assert not (tmp_path / "escape.ipynb").exists()
    # each one skipped is said (they were dropped without a line: a student left ungraded)
    outside = "a path out of the zip's folder (absolute, or with ..): not unpacked; skipped"
    assert found.problems == [f"../escape.ipynb: {outside}", f"/abs/escape.ipynb: {outside}"]


def test_empty_and_missing_and_broken(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no submissions found" in find_submissions(empty, tmp_path / "s").problems[0]
    with pytest.raises(UsageError, match="not a folder of submissions"):
        find_submissions(tmp_path / "nope", tmp_path / "s")
    bad = tmp_path / "bad.zip"
    bad.write_text("not a zip")
    with pytest.raises(UsageError, match="not a valid zip"):
        find_submissions(bad, tmp_path / "s")


def test_safe_names_are_file_names_and_never_shared() -> None:
    names = [
        "ada", "Kim Park", "Kim_Park", "Kim-Park", "../../etc/passwd", "etc_passwd", "王伟",
        "李娜", "José", "Jos_", "", ".", "..", "a" * 300, "a" * 301, "x/y", "x\\y", "x\x00y",
        "Chloé Dupont", "Chloe Dupont",
    ]  # fmt: skip
    files = [safe_name(n) for n in names]
    assert len(set(files)) == len(names)  # one page per student
    for file in files:
        assert file and "/" not in file and "\x00" not in file and file not in (".", "..")
        assert len(file.encode()) < 200
    # Names that are file names already stay as they are; the others stay recognisable.
    assert [safe_name(n) for n in ("ada", "王伟", "José", "Kim_Park")] == [
        "ada", "王伟", "José", "Kim_Park"
    ]  # fmt: skip
    assert safe_name("Kim Park").startswith("Kim_Park-")
    assert safe_name("../../etc/passwd").startswith("etc_passwd-")


def test_the_output_folder_inside_the_class_folder_is_not_a_submission(tmp_path: Path) -> None:
    (tmp_path / "ada.ipynb").write_text("{}")
    (tmp_path / "results" / "feedback").mkdir(parents=True)
    for name in ("gradebook.sqlite", "grades.csv", "report.html", "grader-faults.log"):
        (tmp_path / name).write_text("")  # written by an earlier `--out` of the class folder
    (tmp_path / "gradebook.sqlite-wal").write_text("")
    (tmp_path / "feedback").mkdir()
    (tmp_path / "notes.txt").write_text("still not a notebook")
    outputs = ("gradebook", "grades.csv", "report.html", "feedback", "grader-faults")
    found = find_submissions(tmp_path, tmp_path / "scratch", tmp_path / "results")
    said = "\n".join(found.problems)
    assert [s for s, _ in found.submissions] == ["ada"] and "results/" not in said
    assert "notes.txt: not a notebook" in said
    found = find_submissions(tmp_path, tmp_path / "scratch", tmp_path)  # --out the class folder
    said = "\n".join(found.problems)
    assert [s for s, _ in found.submissions] == ["ada"] and "results/" in said
    assert "notes.txt: not a notebook" in said and not any(n in said for n in outputs)
    unaware = "\n".join(find_submissions(tmp_path, tmp_path / "scratch").problems)
    assert "grades.csv: not a notebook" in unaware  # the test would catch a no-op


def test_links_inside_a_students_folder_are_not_followed(tmp_path: Path) -> None:
    """In a folder of cloned repositories a student chooses what is in theirs: a link there to
    the reference solution, or to another student's notebook, must not be graded as theirs."""
    solution = tmp_path / "course" / "solutions" / "self_attention.ipynb"
    solution.parent.mkdir(parents=True)
    solution.write_text("{}")
    repos = tmp_path / "repos"
    for student in ("ada", "bob", "cy", "dee"):
        (repos / student).mkdir(parents=True)
    (repos / "ada" / "hw.ipynb").write_text("{}")
    (repos / "bob" / "hw.ipynb").symlink_to(solution)
    (repos / "cy" / "hw.ipynb").symlink_to(repos / "ada" / "hw.ipynb")
    (repos / "dee" / "work").symlink_to(solution.parent, target_is_directory=True)
    (repos / "eve").symlink_to(repos / "ada", target_is_directory=True)  # the instructor's link
    found = find_submissions(repos, tmp_path / "scratch")
    assert [(s, p.relative_to(repos).as_posix()) for s, p in found.submissions] == [
        ("ada", "ada/hw.ipynb"),
        ("eve", "eve/hw.ipynb"),
    ]
    refused = [p.split(":")[0] for p in found.problems if "symbolic link" in p]
    assert refused == ["bob/hw.ipynb", "cy/hw.ipynb"]
    assert "dee/: no notebook inside; skipped" in found.problems  # its linked folder: not entered


def test_ids_windows_reserves_for_devices_get_a_page_name_windows_can_create() -> None:
    # `CON.html` (also `con.x.html`, `LPT1.html`, …) cannot be created on Windows, where an
    # instructor may copy OUT: Windows takes the part before the first dot for a device.
    reserved = ["CON", "con", "Nul", "nul.txt", "AUX.tar.gz", "PRN", "COM1", "lpt9", "COM¹"]
    reserved += ["LPT0", "com0"]
    for student in reserved:
        page = f"{safe_name(student)}.html"
        stem = page.split(".")[0].upper()
        assert stem not in WINDOWS_DEVICES, page
        assert safe_name(student).lower().startswith(student.split(".")[0].lower())
    ordinary = ["CONS", "console", "COM10", "LPT", "com", "nulla", "aux_1", "prn-2", "ada"]
    assert [safe_name(s) for s in ordinary] == ordinary  # names as before
    pages = [safe_name(s) for s in [*reserved, *ordinary, "CON_", "con_.x"]]
    assert len({p.lower() for p in pages}) == len(pages)  # one page each, on Windows too


WINDOWS_DEVICES = {"CON", "PRN", "AUX", "NUL"} | {
    f"{port}{n}" for port in ("COM", "LPT") for n in "0123456789¹²³"
}


def test_a_hidden_notebook_in_the_class_folder_is_skipped_with_a_line(tmp_path: Path) -> None:
    # `.x.ipynb` was passed over without a word, unlike every other file not graded.
    (tmp_path / "ada.ipynb").write_text("{}")
    (tmp_path / ".bo.ipynb").write_text("{}")
    (tmp_path / ".cy.py").write_text("")
    (tmp_path / "._ada.ipynb").write_bytes(b"\x00\x05\x16\x07")  # macOS's metadata twin
    (tmp_path / ".DS_Store").write_bytes(b"\x00")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "ada-checkpoint.ipynb").write_text("{}")
    found = find_submissions(tmp_path, tmp_path / "scratch")
    assert [s for s, _ in found.submissions] == ["ada"]
    assert found.problems == [
        f"{name}: a hidden file (its name starts with '.'); skipped: rename it to grade it"
        for name in (".bo.ipynb", ".cy.py")
    ]


def test_blackboard_usernames_holding_underscores_stay_whole(tmp_path: Path) -> None:
    # One export: every name starts with the assignment's words ("Unit_1_HW"); the username is
    # what follows them, `_` included (the last word alone sent john_smith's and jane_smith's
    # work to one student, "smith").
    names = {
        "Unit_1_HW_john_smith_attempt_2026-11-20-10-11-12_attention.ipynb": "john_smith",
        "Unit_1_HW_jane_smith_attempt_2026-11-20-10-12-00_hw.ipynb": "jane_smith",
        "Unit_1_HW_pat_attempt_2026-11-20-11-00-00.ipynb": "pat",
        "Unit_1_HW_pat_attempt_2026-11-21-09-00-00.ipynb": "pat",
    }
    for name in names:
        (tmp_path / name).write_text("{}")
    found = find_submissions(tmp_path, tmp_path / "scratch")
    chosen = dict(found.submissions)
    assert sorted(chosen) == sorted(set(names.values()))
    # each student's own file, pat's later attempt
    for student, path in chosen.items():
        later = max((n for n, s in names.items() if s == student))
        assert path.name == later


def test_a_named_pipe_is_skipped_with_a_line_not_read_forever(tmp_path: Path) -> None:
    # `grader grade` waited on a pipe named like a notebook for a writer that never came.
    (tmp_path / "ada.ipynb").write_text("{}")
    os.mkfifo(tmp_path / "pipe.ipynb")
    (tmp_path / "bo").mkdir()
    os.mkfifo(tmp_path / "bo" / "hw.ipynb")
    found = find_submissions(tmp_path, tmp_path / "scratch")
    assert [student for student, _ in found.submissions] == ["ada"]
    assert "pipe.ipynb: not a file (a named pipe, a device or a folder); skipped" in found.problems
    assert any(p.startswith("bo/hw.ipynb: not a file") for p in found.problems), found.problems


def test_a_link_to_nothing_is_still_a_submission_that_cannot_be_read(tmp_path: Path) -> None:
    os.symlink(tmp_path / "gone.ipynb", tmp_path / "ada.ipynb")
    found = find_submissions(tmp_path, tmp_path / "scratch")
    assert [student for student, _ in found.submissions] == ["ada"]  # graded: "no such file"


def test_a_link_that_leads_back_to_itself_is_a_line_not_the_end_of_the_batch(
    tmp_path: Path,
) -> None:
    # pathlib's resolve() raised RuntimeError("Symlink loop"): exit 3 and no class graded.
    (tmp_path / "bo.ipynb").write_text("{}")
    os.symlink("ada.ipynb", tmp_path / "ada.ipynb")
    found = find_submissions(tmp_path, tmp_path / "scratch", tmp_path / "out")
    assert [student for student, _ in found.submissions] == ["bo"]
    assert found.problems == ["ada.ipynb: a link that leads back to itself; skipped"]


def test_a_number_of_more_digits_than_python_reads_is_a_broken_notebook(tmp_path: Path) -> None:
    from grader.course.notebook import load_submission
    from grader.errors import SubmissionError

    path = tmp_path / "ada.ipynb"
    path.write_text('{"nbformat": 4, "x": ' + "7" * 5001 + "}")
    with pytest.raises(SubmissionError, match="holds a number that cannot be read"):
        load_submission(path)


class _LegacyName(zipfile.ZipInfo):
    """An entry named in UTF-8 without the zip's UTF-8 flag, as many tools write one."""

    def _encodeFilenameFlags(self) -> tuple[bytes, int]:  # zipfile's own method, overridden
        return self.filename.encode("utf-8"), self.flag_bits & ~0x800


def test_a_zip_entry_named_in_utf8_without_the_flag_keeps_its_name(tmp_path: Path) -> None:
    # r46: `ödegaard-smithdana_7777_…` came out `├╢degaard…` (cp437) and matched no student.
    from grader.batch.adjust import _submission
    from grader.batch.submissions import unpack

    archive = tmp_path / "export.zip"
    name = "ödegaard_7777_123_hw.ipynb"
    text = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr(_LegacyName(name), text)
        bundle.writestr("Ñandú_1.ipynb", text)  # flagged UTF-8, as Python writes it
    with zipfile.ZipFile(archive) as bundle:
        assert bundle.namelist()[0] != name  # what reading it as the format says gives
    folder, problems = unpack(archive, tmp_path / "scratch")
    assert problems == []
    assert sorted(p.name for p in folder.iterdir()) == sorted([name, "Ñandú_1.ipynb"])
    # an override reads the notebook again from the archive, by the name it was graded as
    assert _submission(archive / name) is not None
