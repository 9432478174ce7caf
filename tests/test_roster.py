"""roster.csv: reading it, matching submissions to its students, and a batch that covers
exactly the roster (a student without a submission gets 0 and "no submission")."""

from __future__ import annotations

import csv
import json
import sqlite3
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.batch.roster import Student, load_roster, match
from grader.cli import main
from grader.errors import ConfigError

import students
from conftest import write_fast_course, write_notebook

HEADER = "id,name,email,section,lms_id,github\n"


def roster_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_roster_with_only_id_and_name_reads_and_a_bom_is_no_column(tmp_path: Path) -> None:
    path = roster_file(tmp_path, "\ufeffID,Name\ns1, Ada Lovelace \ns2,Bo\n")
    assert load_roster(path) == [Student("s1", "Ada Lovelace"), Student("s2", "Bo")]
    full = roster_file(tmp_path, HEADER + "s1,Ada,ada@uni.edu,A,4242,adal\n")
    assert load_roster(full) == [Student("s1", "Ada", "ada@uni.edu", "A", "4242", "adal")]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("id,email\ns1,a@b\n", "line 1: the roster needs the columns id, name (missing: name)"),
        ("id,name\ns1,Ada\ns2,\n", "line 3: the name is empty"),
        ("id,name\ns1,Ada\n,Bo\n", "line 3: the id is empty"),
        ("id,name\ns1,Ada\ns2,Bo\ns1,Cy\n", "line 4: the id 's1' is already on line 2"),
        ("id,name\ns1,Ada,extra\n", "line 2: more cells than columns"),
        ("id,name,ID\ns1,Ada,s2\n", "line 1: the column 'id' is given twice"),
        # A quote never closed swallowed every row after it into one name, silently.
        ('id,name\ns1,"Ada\ns2,Bo\ns3,Cy\n', "line 4: a quote opened on line 2 is never closed"),
        ('id,name\n\n\ns1,"Ada\ns2,Bo\n', "line 5: a quote opened on line 4 is never closed"),
        ('"id,name\ns1,Ada\n', "line 2: a quote opened on line 1 is never closed"),
    ],
)
def test_a_bad_row_is_one_line_with_its_line_number(tmp_path: Path, text: str, said: str) -> None:
    path = roster_file(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_roster(path)
    assert str(caught.value).startswith(f"{path} {said}")
    assert "\n" not in str(caught.value)
    assert caught.value.exit_code == 2


ROSTER = [
    Student("s1", "Ada Lovelace", "ada@uni.edu", "A", "4242", "adal"),
    Student("s2", "Bo Chen", "bchen@uni.edu", "B", "5151", "bochen"),
    Student("s3", "Cy Diaz", "", "B", "", ""),
    Student("s4", "Cy Diaz", "", "A", "", ""),
]


def test_submissions_match_by_lms_id_user_name_folder_or_name() -> None:
    where = Path("x.ipynb")
    found = match(
        ROSTER,
        [
            ("lovelaceada_4242", where),  # Canvas: name_userid
            ("bochen", where),  # a folder named for the GitHub user
            ("cydiaz", where),  # two students of that name: neither is guessed
            ("mallory", where),
        ],
    )
    assert [sid for sid, _ in found.submissions] == ["s1", "s2"]
    assert found.unmatched == [
        "cydiaz: fits several students of the roster; not graded (x.ipynb)",
        "mallory: matches no student of the roster; not graded (x.ipynb)",
    ]
    board = match([Student("s9", "Di Eng", lms_id="deng7")], [("deng7", where)])
    assert board.submissions == [("s9", where)]  # Blackboard: the user name is the LMS id
    by_name = match(ROSTER[:3], [("Chen Bo", where), ("ada", where), ("s3", where)])
    assert [sid for sid, _ in by_name.submissions] == ["s1", "s2", "s3"]


def test_a_name_that_is_a_students_own_key_wins_over_digits_at_its_end() -> None:
    """`bo_7` is Bo's GitHub user name (a folder per student): it ended in `_7`, Ada's LMS
    id, and Bo's notebook was graded as Ada's. The digits of an export's name still find
    their student when the whole name is nobody's key."""
    roster = [Student("s1", "Ada Lovelace", lms_id="7"), Student("s2", "Bo Chen", github="bo_7")]
    where = Path("x.ipynb")
    found = match(roster, [("bo_7", where), ("lovelaceada_7", where)])
    assert found.submissions == [("s1", where), ("s2", where)]
    assert found.unmatched == []


def course_with_roster(tmp_path: Path, roster: str) -> Path:
    course = tmp_path / "course"
    write_fast_course(course)
    (course / "roster.csv").write_text(roster, encoding="utf-8")
    return course


def s1_graded(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """A course whose roster is s1 alone, s1's notebook graded into OUT: (course, OUT, the
    grade command without --out)."""
    course = course_with_roster(tmp_path, "id,name\ns1,Ada Lovelace\n")
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    write_notebook(folder / "s1.ipynb", students.cells())
    command = ["grade", str(folder), "--course", str(course), "-a", "self_attention"]
    assert CliRunner().invoke(main, [*command, "--out", str(out)]).exit_code == 0
    return course, out, command


@pytest.mark.slow
def test_a_student_added_to_the_roster_after_grading_is_named_by_export_and_override(
    tmp_path: Path,
) -> None:
    """Export and override read the roster the gradebook was graded with: a student added to
    roster.csv since was silently missing from the export, and `override` said only "no such
    student on the roster" of a student the roster plainly holds."""
    course, out, command = s1_graded(tmp_path)
    where = ["--results", str(out), "--course", str(course)]
    export = ["export", "--format", "csv", "--out", "-", *where]
    quiet = CliRunner().invoke(main, export)
    assert quiet.exit_code == 0 and "roster.csv" not in quiet.stderr
    (course / "roster.csv").write_text("id,name\ns1,Ada Lovelace\ns2,Bo Chen\n")
    noted = CliRunner().invoke(main, export)
    assert noted.exit_code == 0, noted.output
    assert [row["student"] for row in csv.DictReader(noted.stdout.splitlines())] == ["s1"]
    assert noted.stderr.strip().splitlines()[-1] == (
        "note: the course's roster.csv has 1 student(s) the gradebook was not last graded "
        "with (s2); they are not here: `grader grade` into the same --out takes the new roster"
    )
    refused = CliRunner().invoke(main, ["override", "s2", "--points", "1", *where])
    assert refused.exit_code == 2
    assert "s2: no such student on the roster the gradebook was last graded with" in (
        refused.stderr
    )
    assert CliRunner().invoke(main, [*command, "--out", str(out)]).exit_code == 0
    taken = CliRunner().invoke(main, ["override", "s2", "--points", "1", *where])
    assert taken.exit_code == 0, taken.output


@pytest.mark.slow
def test_the_outputs_cover_exactly_the_roster(tmp_path: Path) -> None:
    course = course_with_roster(
        tmp_path,
        HEADER
        + "s1,Ada Lovelace,ada@uni.edu,A,4242,adal\n"
        + "s2,Bo Chen,,B,5151,\n"
        + "s3,=HYPERLINK(1),,B,,cyd\n",
    )
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / "lovelaceada_4242_77_attention.ipynb", students.cells())
    write_notebook(folder / "mallory.ipynb", students.cells())
    out = tmp_path / "out"
    command = ["grade", str(folder), "--course", str(course), "-a", "self_attention"]
    result = CliRunner().invoke(main, [*command, "--out", str(out)])
    assert result.exit_code == 1, result.output  # mallory is on no roster
    assert "mallory: matches no student of the roster; not graded" in result.stderr
    with (out / "grades.csv").open(encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert [row["student"] for row in table] == ["s1", "s2", "s3"]
    ada, bo, cy = table
    assert ada["name"] == "Ada Lovelace" and float(ada["total"]) == float(ada["max_total"]) > 0
    assert bo["problem"] == cy["problem"] == "no submission"
    assert float(bo["total"]) == 0 and bo["max_total"] == ada["max_total"]
    assert cy["name"] == "'=HYPERLINK(1)"  # inert in a spreadsheet
    report = (out / "report.html").read_text(encoding="utf-8")
    assert report.count("no submission") == 2
    # mallory is no student's, and said so where the class is read, not only on stderr (r55):
    # the summary line, the report's own section (and nowhere else in it), `grader report`.
    assert "1 set aside by the roster" in result.stdout.splitlines()[-2], result.stdout
    aside = "<tr><td>mallory: matches no student of the roster; not graded (mallory.ipynb)</td>"
    assert report.count("mallory") == aside.count("mallory") and aside in report
    assert "1 submission set aside by the roster" in report
    shown = CliRunner().invoke(main, ["report", str(out), "--format", "json"])
    assert json.loads(shown.stdout)["unmatched"] == [aside.removeprefix("<tr><td>")[:-5]]
    # The unmatched one matched: now everyone is graded or absent, and the exit says so.
    (folder / "mallory.ipynb").rename(folder / "cyd.ipynb")
    result = CliRunner().invoke(main, [*command, "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "set aside" not in report and "set aside" not in result.stdout
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        assert [r[0] for r in db.execute("SELECT id FROM roster ORDER BY rowid")] == [
            "s1",
            "s2",
            "s3",
        ]


def test_a_bad_roster_stops_grade_with_exit_2_before_grading(tmp_path: Path) -> None:
    course = course_with_roster(tmp_path, "id,name\ns1,Ada\ns1,Bo\n")
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / "ada.ipynb", students.cells())
    result = CliRunner().invoke(main, ["grade", str(folder), "--course", str(course)])
    assert result.exit_code == 2
    said = f"Error: {course / 'roster.csv'} line 3: the id 's1' is already on line 2"
    assert result.stderr.splitlines()[-1] == said and "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_batch_without_a_roster_forgets_the_one_stored_before(tmp_path: Path) -> None:
    course = course_with_roster(tmp_path, HEADER + "s1,Ada Lovelace,,A,4242,\ns2,Bo Chen,,B,,\n")
    folder = tmp_path / "class"
    folder.mkdir()
    write_notebook(folder / "lovelaceada_4242_77_attention.ipynb", students.cells())
    out = tmp_path / "out"
    command = ["grade", str(folder), "--course", str(course), "-a", "self_attention"]
    assert CliRunner().invoke(main, [*command, "--out", str(out)]).exit_code == 0
    assert "no submission" in (out / "report.html").read_text(encoding="utf-8")  # s2
    (course / "roster.csv").unlink()
    assert CliRunner().invoke(main, [*command, "--out", str(out)]).exit_code == 0
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM roster").fetchone()[0] == 0
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "no submission" not in report and "Bo Chen" not in report


def test_ids_that_differ_only_in_case_or_unicode_form_are_one_id_given_twice(
    tmp_path: Path,
) -> None:
    # Matching folds case and form, so two such ids could never be told apart: both
    # students would get "no submission", and their pages would share a name on macOS.
    nfd = unicodedata.normalize("NFD", "José")
    for first, second in [("Ada", "ada"), (unicodedata.normalize("NFC", "José"), nfd)]:
        path = roster_file(tmp_path, f"id,name\n{first},One\ns9,Other\n{second},Two\n")
        with pytest.raises(ConfigError) as caught:
            load_roster(path)
        assert str(caught.value) == f"{path} line 4: the id {second!r} is already on line 2"


def test_a_name_or_id_in_another_unicode_form_still_matches_its_student() -> None:
    # A zip unpacked on macOS, or a folder named there, spells é as e + a combining accent.
    roster = [
        Student(unicodedata.normalize("NFC", "sé1"), unicodedata.normalize("NFC", "José Núñez")),
        Student("s2", "Bo Chen"),
    ]
    where = Path("x.ipynb")
    for name in ("núñezjosé", "José Núñez", "sé1"):
        decomposed = unicodedata.normalize("NFD", name)
        assert decomposed != name
        found = match(roster, [(decomposed, where)])
        assert found.submissions == [(roster[0].id, where)], name
        assert found.unmatched == []


@pytest.mark.parametrize("separator", ["\u2028", "\x85", "\x1e"])
def test_a_line_separator_inside_a_cell_makes_no_phantom_student(
    tmp_path: Path, separator: str
) -> None:
    # Rows were cut with str.splitlines, which also breaks at these: `s1,Ana<U+2028>Maria,a@x`
    # became s1 "Ana" without e-mail and a student "Maria" named "a@x".
    path = roster_file(tmp_path, f"id,name,email\ns1,Ana{separator}Maria,a@x\ns2,Bo,b@x\n")
    assert load_roster(path) == [
        Student("s1", f"Ana{separator}Maria", "a@x"),
        Student("s2", "Bo", "b@x"),
    ]


def test_a_cell_over_the_csv_module_s_limit_is_one_line_with_its_line(tmp_path: Path) -> None:
    path = roster_file(tmp_path, "id,name\ns1,Ada\ns2," + "x" * 200_000 + "\ns3,Cy\n")
    with pytest.raises(ConfigError) as caught:
        load_roster(path)
    assert str(caught.value).startswith(f"{path} line 3: field larger than field limit")
    assert caught.value.exit_code == 2
    # The same in the header row, which the reader reads before any row (a traceback, exit 3).
    path = roster_file(tmp_path, "id,name," + "x" * 200_000 + "\ns1,Ada\n")
    with pytest.raises(ConfigError) as caught:
        load_roster(path)
    assert str(caught.value).startswith(f"{path} line 1: field larger than field limit")


def test_text_after_a_closing_quote_reads_as_it_always_did(tmp_path: Path) -> None:
    """A file aligned by hand (`"s1" ,"Ada Lovelace"  ,`): csv's strict mode would refuse it;
    only a quote never closed is refused."""
    path = roster_file(tmp_path, 'id ,name\n"s1" ,"Ada Lovelace"  \n"s2"\t,Bo\n')
    assert [(s.id, s.name) for s in load_roster(path)] == [("s1", "Ada Lovelace"), ("s2", "Bo")]


def test_a_missing_column_lists_every_optional_one_extension_hours_included(
    tmp_path: Path,
) -> None:
    path = roster_file(tmp_path, "id,email\ns1,a@b\n")
    with pytest.raises(ConfigError) as caught:
        load_roster(path)
    assert str(caught.value).endswith("optional: email, section, lms_id, github, extension_hours")


def test_a_roster_saved_as_excels_csv_says_its_line_and_how_to_save_it(tmp_path: Path) -> None:
    # It was the codec's own words: "'utf-8' codec can't decode byte 0xe9 in position 16".
    path = tmp_path / "roster.csv"
    path.write_bytes("id,name\nada,Ada\njo,José\n".encode("cp1252"))
    with pytest.raises(ConfigError) as refused:
        load_roster(path)
    assert str(refused.value) == (
        f'{path} line 3: not UTF-8 text (byte 0xe9); save it as "CSV UTF-8" (Excel) or in '
        "the UTF-8 encoding, and run again"
    )


@pytest.mark.slow
def test_export_is_made_from_the_stored_roster_when_roster_csv_cannot_be_read(
    tmp_path: Path,
) -> None:
    """The note on students added to roster.csv read the file: saved with `;` it stopped an
    export that needs only the roster stored in the gradebook."""
    course, out, _ = s1_graded(tmp_path)
    (course / "roster.csv").write_text("id;name\ns1;Ada Lovelace\n")
    export = ["export", "--format", "csv", "--out", "-", "--results", str(out)]
    done = CliRunner().invoke(main, [*export, "--course", str(course)])
    assert done.exit_code == 0, done.output
    assert [row["student"] for row in csv.DictReader(done.stdout.splitlines())] == ["s1"]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("note: ") and "roster.csv" in last
    assert last.endswith("(the roster the gradebook was last graded with is used)")


def test_a_name_of_three_words_matches_as_canvas_sorts_it_and_as_a_course_may() -> None:
    # r46: Canvas names files from its sortable name, the last word first (`Cruz, Maria de
    # la` -> cruzmariadela, `Sartre, Jean Paul` -> sartrejeanpaul): neither matched.
    roster = [Student("s1", "Maria de la Cruz"), Student("s2", "Jean Paul Sartre")]
    where = Path("x.ipynb")
    canvas = match(roster, [("cruzmariadela", where), ("sartrejeanpaul", where)])
    assert canvas.submissions == [("s1", where), ("s2", where)], canvas.unmatched
    course = match(roster, [("delacruzmaria", where)])  # the last name of three words first
    assert course.submissions == [("s1", where)], course.unmatched


def test_a_roster_of_only_its_header_stops_grade_and_keeps_the_stored_one(
    tmp_path: Path,
) -> None:
    # r46: it read as "nothing to grade" (exit 2, the roster unnamed) and, failing, had
    # already replaced the gradebook's roster: the next export lost names and overrides.
    course = course_with_roster(tmp_path, HEADER + "s1,Ada Lovelace,,A,4242,\n")
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    write_notebook(folder / "lovelaceada_4242_77_attention.ipynb", students.cells())
    command = ["grade", str(folder), "--course", str(course), "-a", "self_attention"]
    assert CliRunner().invoke(main, [*command, "--out", str(out)]).exit_code == 0
    (course / "roster.csv").write_text(HEADER)
    result = CliRunner().invoke(main, [*command, "--out", str(out)])
    assert result.exit_code == 2, result.output
    said = f"Error: {course / 'roster.csv'}: no student in it, only its header"
    assert result.stderr.splitlines()[-1].startswith(said), result.stderr
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        assert db.execute("SELECT id FROM roster").fetchall() == [("s1",)]


def test_each_of_a_students_set_aside_submissions_names_the_one_graded() -> None:
    """With three submissions of one student, a line said "ada also handed in adalovelace;
    graded adalovelace" while lovelaceada was graded (r56), and report.html now keeps it."""
    found = match(
        ROSTER[:1],
        [
            ("ada", Path("a.ipynb")),
            ("adalovelace", Path("b.ipynb")),
            ("lovelaceada", Path("c.ipynb")),
        ],
    )
    assert found.submissions == [("s1", Path("c.ipynb"))]
    assert found.unmatched == [
        "ada: s1 also handed in lovelaceada; graded lovelaceada",
        "adalovelace: s1 also handed in lovelaceada; graded lovelaceada",
    ]
