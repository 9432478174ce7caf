"""A careless or hostile course: each slip of the author's is one line on stderr and exit 2,
before anything is written over the course's own files or outside its folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from grader.author.assign import strip_solutions, write_exercise
from grader.cli import main
from grader.course.config import load_config
from grader.errors import ConfigError

from authoring import digests, elsewhere, new_course, refused  # noqa: F401


@pytest.mark.parametrize(
    ("exercise", "words"),
    [
        ("solutions/standardize.ipynb", "is assignments.example.solution"),
        ("solutions/../solutions/standardize.ipynb", "is assignments.example.solution"),
        ("solutions/standardize_mistakes.py", "is assignments.example.mistakes"),
        ("config.yaml", "is the config"),
        ("cases.py", "is cases.py"),
    ],
)
def test_assign_never_writes_over_a_file_the_course_is_made_of(
    tmp_path: Path, exercise: str, words: str
) -> None:
    # It did: `exercise:` naming the solution replaced the reference by its stubbed copy.
    course = new_course(tmp_path)
    config = course / "config.yaml"
    text = config.read_text()
    config.write_text(
        text.replace("exercise: exercises/standardize.ipynb", f"exercise: {exercise}")
    )
    said = refused(["assign", "--course", str(course)], course)
    assert said.startswith("Error: assignments.example.exercise: ") and words in said


def test_assign_out_naming_the_solutions_folder_isrefused(tmp_path: Path) -> None:
    # --out solutions/ wrote solutions/standardize.ipynb: the solution, stubbed.
    course = new_course(tmp_path)
    said = refused(["assign", "--course", str(course), "--out", str(course / "solutions")], course)
    assert said.startswith("Error: --out: ") and "is assignments.example.solution" in said


def test_an_exercise_outside_the_course_or_shared_isrefused(tmp_path: Path) -> None:
    course = new_course(tmp_path)
    config = course / "config.yaml"
    text = config.read_text()
    config.write_text(text.replace("exercise: exercises/", "exercise: ../"))
    said = refused(["assign", "--course", str(course)], course)
    assert "assignments.example.exercise: " in said and "outside the course folder" in said
    assert not (tmp_path / "standardize.ipynb").exists()
    config.write_text(
        text + "  again:\n" + text.split("  example:\n")[1].replace("Standardize", "Again")
    )
    said = refused(["assign", "--course", str(course)], course)
    assert "assignments.example.exercise: " in said
    assert "is assignments.again.exercise as well" in said


def _solution_cells(course: Path) -> tuple[Path, dict[str, Any]]:
    path = course / "solutions" / "standardize.ipynb"
    return path, json.loads(path.read_text())


@pytest.mark.parametrize("kind", ["markdown", "raw"])
def test_a_solution_marker_in_a_text_cell_is_refused_not_handed_out(
    tmp_path: Path, kind: str
) -> None:
    # A markdown cell's `BEGIN SOLUTION` (as nbgrader writes them) was copied to the exercise
    # as it is: the answer between the markers, handed to every student.
    course = new_course(tmp_path)
    path, notebook = _solution_cells(course)
    notebook["cells"].insert(1, {"cell_type": kind, "id": "marked", "metadata": {}, "source": [
        "### BEGIN SOLUTION\n", "Divide by the standard deviation (the answer)\n",
        "### END SOLUTION\n"]})  # fmt: skip
    path.write_text(json.dumps(notebook))
    said = refused(["assign", "--course", str(course)], course)
    assert said.startswith(f"Error: standardize.ipynb, cell 2: a {kind} cell holds a SOLUTION")
    assert "'solution-only'" in said
    assert not (course / "exercises" / "standardize.ipynb").exists()


def test_a_solution_marker_inside_a_string_isrefused(tmp_path: Path) -> None:
    # Markers inside a string were stripped as if comments: the code between the strings
    # (the answer) was handed out, and the stub landed inside a string.
    course = new_course(tmp_path)
    path, notebook = _solution_cells(course)
    cell = next(c for c in notebook["cells"] if "BEGIN SOLUTION" in "".join(c["source"]))
    cell["source"] = (
        'def standardize(x):\n    note = """\n    # BEGIN SOLUTION\n    """\n'
        '    return (x - x.mean(axis=0)) / x.std(axis=0)\n    """\n    # END SOLUTION\n    """\n'
    )
    path.write_text(json.dumps(notebook))
    said = refused(["assign", "--course", str(course)], course)
    assert said == (
        f"Error: standardize.ipynb, cell {notebook['cells'].index(cell) + 1}, line 3: a SOLUTION"
        " marker inside a string; a marker must be a comment line of its own"
    )


def test_markers_in_a_cell_with_ipython_syntax_still_work() -> None:
    source = "%timeit 1\n!ls\ndef f(x):\n    # BEGIN SOLUTION\n    return x\n    # END SOLUTION\n"
    assert "return x" not in strip_solutions(source, "t")


def test_release_refuses_an_exercise_that_still_holds_solution_markers(tmp_path: Path) -> None:
    # An exercise written by hand (or by an older grader) with the answer in a marked
    # markdown cell was released as it was.
    course = new_course(tmp_path)
    exercise = course / "exercises" / "standardize.ipynb"
    write_exercise(load_config(course / "config.yaml").assignment("example"))
    notebook = json.loads(exercise.read_text())
    marked = "# BEGIN SOLUTION\nthe answer\n# END SOLUTION"
    notebook["cells"].insert(
        1, {"cell_type": "markdown", "id": "marked", "metadata": {}, "source": marked}
    )
    exercise.write_text(json.dumps(notebook))
    out = tmp_path / "handout"
    said = refused(["release", "--course", str(course), "--out", str(out)], course)
    assert said == (
        f"Error: {course / 'config.yaml'}: assignments.example.exercise: {exercise} still holds "
        "a SOLUTION marker, and what it marks would be handed out; write the exercise with "
        "`grader assign --assignment example`"
    )
    assert not out.exists()


@pytest.mark.parametrize("command", ["selftest", "check"])
@pytest.mark.parametrize(
    ("entry", "words"),
    [
        (
            '@CATALOGUE.mistake("standardise", "typo", "w", hint="h")\n'
            "def standardise__typo(x):\n    return x\n",
            "mistake typo (standardise__typo) is of `standardise`, which no assignment using "
            "this catalogue grades (they grade standardize): fix the decorator's first word",
        ),
        (
            '@CATALOGUE.mistake("standardize", "divides_by_variance", "w", hint="h")\n'
            "def standardize__again(x):\n    return x\n",
            "mistake divides_by_variance (standardize__again): "
            "standardize__divides_by_variance has the id divides_by_variance of `standardize` "
            "too; give each mistake its own id",
        ),
    ],
    ids=["misspelt_target", "id_twice"],
)
def test_a_catalogue_entry_that_could_never_be_named_isrefused(
    tmp_path: Path, command: str, entry: str, words: str
) -> None:
    # A mistake of a misspelt function was never checked: selftest said "ok" and grading
    # never named it. An id given twice: selftest said the first was "not_implemented".
    course = new_course(tmp_path)
    catalogue = course / "solutions" / "standardize_mistakes.py"
    catalogue.write_text(catalogue.read_text() + "\n\n" + entry)
    write_exercise(load_config(course / "config.yaml").assignment("example"))
    student = tmp_path / "hw.ipynb"
    student.write_bytes((course / "exercises" / "standardize.ipynb").read_bytes())
    graded = {"selftest": [], "check": [str(student)]}[command]
    said = refused([command, *graded, "--course", str(course)], course)
    assert said == (
        f"Error: assignments.example.mistakes in {course / 'config.yaml'}: mistake catalogue "
        f"{catalogue}: {words}"
    )


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("layer-norm", "targets.layer-norm: not a Python name; a target is the function (or "
         "variable) the notebook defines, such as layer_norm"),
        ("class", "targets.class: not a Python name"),
        ("12", "targets: the key 12 must be a name, not a number as YAML reads it unquoted"),
        ("null", "targets: the key None must be a name, not null as YAML reads it unquoted"),
        ("yes", "targets: the key True must be a name, not true or false as YAML reads it"),
    ],
)  # fmt: skip
def test_a_target_that_is_no_python_name_is_one_line_naming_it(
    tmp_path: Path, key: str, words: str
) -> None:
    # `layer-norm:` was "the solution does not define `layer-norm`" only once the solution
    # ran; an unquoted `12:` or `null:` crashed the grader (exit 3, a traceback).
    course = new_course(tmp_path)
    config = course / "config.yaml"
    config.write_text(config.read_text().replace("      standardize:", f"      {key}:"))
    said = refused(["selftest", "--course", str(course)], course)
    assert said.startswith(f"Error: {config}") and f"assignments.example.{words}" in said


def test_a_solution_cell_that_never_ends_says_which_limit_stopped_it(tmp_path: Path) -> None:
    # It said "cell 3: TimeLimit": neither which limit nor where it is set.
    course = new_course(tmp_path)
    config = course / "config.yaml"
    config.write_text(config.read_text().replace("cell: 5,", "cell: 1,"))
    path, notebook = _solution_cells(course)
    notebook["cells"][1]["source"] = "import numpy as np\nwhile True:\n    pass"
    path.write_text(json.dumps(notebook))
    said = refused(["selftest", "--course", str(course)], course)
    assert said.endswith(
        f"{path} fails to run: cell 2: did not finish within 1 s (time_limit.cell in the config)"
    )


@pytest.mark.parametrize(
    ("out", "words"),
    [
        (".", "is the course folder: write the bundle into a folder of its own"),
        ("solutions/..", "is the course folder"),
        ("solutions/handout", "is inside the solutions' folder"),
    ],
)
def test_release_into_the_course_or_its_solutions_folder_isrefused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str, words: str
) -> None:
    # --out . copied each exercise onto itself: shutil.SameFileError, a traceback (exit 3);
    # a later release would have removed the course's own data files as stale.
    course = new_course(tmp_path)
    write_exercise(load_config(course / "config.yaml").assignment("example"))
    monkeypatch.chdir(course)
    said = refused(["release", "--course", ".", "--out", out], course)
    assert said.startswith(f"Error: --out {out} {words}")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["class"], "assignment name 'class' is a Python keyword, which cannot name its "
         "function: give --function 'f(x)'"),
        (["ok", "--function", "lambda"], "--function 'lambda': lambda is a Python keyword"),
        (["ok", "--function", "ok()"], "--function 'ok()': a graded function takes at least "
         "one argument"),
        # r50 #8: only the last was kept, without a word
        (["ok", "--function", "a(x)", "--function", "b(y)"], "--function given 2 times: the "
         "skeleton has one function; make it with one, then add 'b(y)' to the solution"),
    ],
)  # fmt: skip
def test_new_assignment_refuses_what_would_not_load_and_writes_nothing(
    tmp_path: Path, args: list[str], words: str
) -> None:
    # These wrote a solution, a catalogue and an entry the config then refused (`args:`
    # empty; a target `class` no notebook can define).
    course = new_course(tmp_path)
    said = refused(["new-assignment", *args, "--course", str(course)], course)
    assert said.startswith(f"Error: {words}")
    assert sorted(p.name for p in (course / "solutions").iterdir()) == [
        "standardize.ipynb",
        "standardize_mistakes.py",
    ]


@pytest.mark.parametrize("word", ["yes", "null", "on", "off", "true"])
def test_new_assignment_quotes_names_yaml_would_read_as_something_else(
    tmp_path: Path, word: str
) -> None:
    # `new-assignment yes` wrote its files, then refused to add `yes:` (YAML's True) and
    # left them behind; `--function "f(x, null)"` wrote an entry that did not load.
    course = new_course(tmp_path)
    for args in ([word], ["other", "--function", f"f(x, {word})"]):
        result = CliRunner().invoke(main, ["new-assignment", *args, "--course", str(course)])
        assert result.exit_code == 0, result.output
    config = load_config(course / "config.yaml")
    assert config.assignment(word).title == word and config.assignment(word).target(word)
    assert [a.name for a in config.assignment("other").target("f").args] == ["x", word]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b'{"cells": 5}', "not a Jupyter notebook (no 'nbformat' field)"),
        (
            b"\xff\xfe",
            "not UTF-8 text (byte 0xff at offset 0); save the notebook from Jupyter, which "
            "writes UTF-8",
        ),
        (
            b'{"cells": [{"cell_type": "code", "source": "x = 1"}], "nbformat": 4, '
            b'"nbformat_minor": 5, "metadata": {}}',
            "not a valid notebook: The notebook is invalid and is missing an expected key: "
            "metadata",
        ),
        (
            b'{"cells": [{"cell_type": "code", "metadata": {"tags": 5}, "source": "x = 1", '
            b'"outputs": []}], "nbformat": 4, "nbformat_minor": 4, "metadata": {}}',
            "its metadata's tags are not a list, but 5",
        ),
    ],
    ids=["cells_not_a_list", "not_utf8", "cell_without_metadata", "tags_not_a_list"],
)
def test_assign_from_a_broken_solution_notebook_is_one_line(
    tmp_path: Path, content: bytes, words: str
) -> None:
    # Each was a traceback (exit 3): nbformat's TypeError, ValidationError or decode error.
    course = new_course(tmp_path)
    (course / "solutions" / "standardize.ipynb").write_bytes(content)
    said = refused(["assign", "--course", str(course)], course)
    assert said.startswith("Error: ") and said.endswith(words)


@pytest.mark.parametrize("command", ["selftest", "release"])
def test_a_catalogue_that_is_not_utf8_is_one_line(tmp_path: Path, command: str) -> None:
    # A UnicodeDecodeError traceback (exit 3) from every command that reads the catalogue.
    course = new_course(tmp_path)
    write_exercise(load_config(course / "config.yaml").assignment("example"))
    catalogue = course / "solutions" / "standardize_mistakes.py"
    catalogue.write_bytes(b"# caf\xe9\n")
    out = ["--out", str(tmp_path / "handout")] if command == "release" else []
    said = refused([command, "--course", str(course), *out], course)
    assert said.endswith(
        f"mistake catalogue {catalogue}: not UTF-8 text (byte 0xe9 at offset 5); save it as UTF-8"
    )


def test_init_where_no_folder_can_be_made_is_one_line(tmp_path: Path) -> None:
    # A traceback (exit 3): mkdir's NotADirectoryError.
    (tmp_path / "a_file").write_text("not a folder\n")
    folder = tmp_path / "a_file" / "course"
    result = CliRunner().invoke(main, ["init", str(folder)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        f"Error: FOLDER {folder}: cannot write {folder} (Not a directory)"
    ]


def test_init_says_the_next_command_so_that_it_can_be_pasted(tmp_path: Path) -> None:
    folder = tmp_path / "my course"
    result = CliRunner().invoke(main, ["init", str(folder)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1].endswith(f"--course '{folder}'")


@pytest.mark.parametrize(
    ("out", "words"),
    [
        ("solutions/standardize.ipynb", "is assignments.example.solution: name a new file"),
        ("config.yaml", "is a course's config, which this would replace; name another"),
        ("exercises/standardize.ipynb", "is assignments.example.exercise: name a new file"),
        ("solutions", "is a folder: name the zip, e.g. --out solutions/autograder.zip"),
    ],
)
def test_export_gradescope_never_writes_over_the_course(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str, words: str
) -> None:
    # --out naming the solution emptied it (the zip opened over it), then failed reading it.
    course = new_course(tmp_path)
    write_exercise(load_config(course / "config.yaml").assignment("example"))
    monkeypatch.chdir(course)
    said = refused(["export-gradescope", "-a", "example", "--course", ".", "--out", out], course)
    assert said.startswith(f"Error: --out {out} {words}")


def test_export_gradescope_of_a_broken_course_is_one_line_and_writes_nothing(
    tmp_path: Path,
) -> None:
    # A catalogue that is not UTF-8 (or a solution that is missing) was a traceback, after
    # the zip had been started.
    course = new_course(tmp_path)
    (course / "solutions" / "standardize_mistakes.py").write_bytes(b"\xff")
    out = tmp_path / "autograder.zip"
    said = refused(
        ["export-gradescope", "-a", "example", "--course", str(course), "--out", str(out)], course
    )
    assert "not UTF-8 text" in said and not out.exists()
    (course / "solutions" / "standardize_mistakes.py").unlink()
    said = refused(
        ["export-gradescope", "-a", "example", "--course", str(course), "--out", str(out)], course
    )
    assert "assignments.example.mistakes: no such file" in said and not out.exists()


def test_assign_out_one_file_for_several_assignments_isrefused(tmp_path: Path) -> None:
    # Each assignment was written to the same file, over the last, and both said "wrote".
    course = new_course(tmp_path)
    config = course / "config.yaml"
    text = config.read_text()
    config.write_text(
        text + "  again:\n" + text.split("  example:\n")[1].replace("exercises/", "again/")
    )
    out = tmp_path / "one.ipynb"
    said = refused(["assign", "--course", str(course), "--out", str(out)], course)
    assert said == (
        f"Error: --out {out}: one file for 2 assignments, each written over the last: name a "
        "folder that exists, or one assignment with --assignment"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    "marker", ["### BEGIN SOLUTION", "#BEGIN SOLUTION", "# BEGIN SOLUTION - the answer"]
)
def test_a_comment_that_is_almost_a_marker_isrefused(marker: str) -> None:
    # nbgrader's `### BEGIN SOLUTION` (and the like) matched no marker: the cell, answer
    # and all, went to the exercise as it was, without a word.
    source = f"def f(x):\n    {marker}\n    return x + 1\n    # END SOLUTION\n"
    with pytest.raises(ConfigError) as refused:
        strip_solutions(source, "nb.ipynb, cell 2")
    assert str(refused.value) == (
        f"nb.ipynb, cell 2, line 2: {marker!r} is not a marker, so what it marks would be "
        "handed out: write `# BEGIN SOLUTION` (or `# BEGIN SOLUTION: what to do`) and "
        "`# END SOLUTION`, each alone on its line"
    )


def test_the_words_in_a_string_are_no_marker() -> None:
    source = (
        'def f(x):\n    s = "END SOLUTION"\n    # BEGIN SOLUTION\n    return x\n    # END SOLUTION'
    )
    assert strip_solutions(source, "t") == (
        'def f(x):\n    s = "END SOLUTION"\n    # TODO: write this part\n'
        '    raise NotImplementedError("write this part")'
    )


def test_one_value_the_schema_refuses_is_one_line(tmp_path: Path) -> None:
    # It was two: "… is not a valid grader config:" and the key path on a line below.
    course = new_course(tmp_path)
    config = course / "config.yaml"
    config.write_text(config.read_text().replace("points: 2", "points: two"))
    said = refused(["selftest", "--course", str(course)], course)
    assert said == (
        f"Error: {config} is not a valid grader config: "
        "assignments.example.targets.standardize.points: must be a number, not 'two'"
    )


def test_a_catalogue_that_defines_a_solution_name_again_isrefused(tmp_path: Path) -> None:
    # The catalogue runs after the solution's cells: its own `center` replaced the
    # solution's for every variant that calls it, whose fingerprint was then no longer the
    # solution with one mistake (selftest named such a variant "term_dropped", no word why).
    course = new_course(tmp_path)
    path, notebook = _solution_cells(course)
    cell = next(c for c in notebook["cells"] if "BEGIN SOLUTION" in "".join(c["source"]))
    cell["source"] = "def center(x):\n    return x - x.mean(axis=0)\n\n\n" + "".join(cell["source"])
    path.write_text(json.dumps(notebook))
    catalogue = course / "solutions" / "standardize_mistakes.py"
    catalogue.write_text(
        catalogue.read_text() + "\n\ndef center(x):\n    return x\n\n\n"
        '@CATALOGUE.mistake("standardize", "uncentred", "w", hint="h")\n'
        "def standardize__uncentred(x):\n    return center(x) / x.std(axis=0)\n"
    )
    line = catalogue.read_text().split("\n").index("def center(x):") + 1
    said = refused(["selftest", "--course", str(course)], course)
    assert said.endswith(
        f"mistake catalogue {catalogue}, line {line}: `center` is the solution's own name: a "
        "variant may call it, never define it again; rename this one"
    )


def test_release_refuses_two_assignments_sharing_one_exercise(tmp_path: Path) -> None:
    # One notebook (naming one assignment in its metadata) was handed out for both.
    course = new_course(tmp_path)
    write_exercise(load_config(course / "config.yaml").assignment("example"))
    config = course / "config.yaml"
    text = config.read_text()
    config.write_text(text + "  again:\n" + text.split("  example:\n")[1])
    out = tmp_path / "handout"
    said = refused(["release", "--course", str(course), "--out", str(out)], course)
    assert said.startswith(f"Error: {config}: assignments.example.exercise: ")
    assert said.endswith("is assignments.again.exercise as well; give each assignment its own "
                         "exercise notebook")  # fmt: skip
    assert not out.exists()


def test_a_notebook_named_as_the_catalogue_isrefused(tmp_path: Path) -> None:
    # A notebook's JSON parses as a Python expression: the catalogue was silently empty,
    # and selftest said "ok".
    course = new_course(tmp_path)
    config = course / "config.yaml"
    config.write_text(
        config.read_text().replace(
            "mistakes: solutions/standardize_mistakes.py", "mistakes: solutions/standardize.ipynb"
        )
    )
    said = refused(["selftest", "--course", str(course)], course)
    assert said == (
        f"Error: {config}: assignments.example.mistakes: {course / 'solutions/standardize.ipynb'}"
        " is a notebook; the mistake catalogue is a Python file of its own, e.g. "
        "solutions/<name>_mistakes.py"
    )


def test_selftest_says_when_the_exercise_is_not_written_yet(tmp_path: Path) -> None:
    # The "untouched exercise" check was left out without a word before `grader assign`.
    course = new_course(tmp_path)
    result = CliRunner().invoke(main, ["selftest", "--course", str(course)])
    assert result.exit_code == 0, result.output
    exercise = course / "exercises" / "standardize.ipynb"
    assert (
        f"  untouched exercise: not checked, {exercise} is not written yet (grader assign)"
        in result.stdout.splitlines()
    )


def test_assign_where_a_file_stands_for_the_exercises_folder_is_one_line(tmp_path: Path) -> None:
    # A traceback (exit 3): mkdir's FileExistsError.
    course = new_course(tmp_path)
    (course / "exercises").rmdir()
    (course / "exercises").write_text("a file where the folder goes\n")
    said = refused(["assign", "--course", str(course)], course)
    assert said == (
        f"Error: assignments.example.exercise: cannot write "
        f"{course / 'exercises' / 'standardize.ipynb'}: File exists ({course / 'exercises'})"
    )


@pytest.mark.parametrize(
    ("tail", "words"),
    [
        ("  broken: [\n", "not valid YAML at line"),
        ("  x: &x [*x]\n", "an alias (*name) is used inside the anchor it names"),
    ],
)
def test_new_assignment_on_a_config_that_does_not_read_says_where_in_one_line(
    tmp_path: Path, tail: str, words: str
) -> None:
    # A config left broken by hand was a yaml.scanner traceback (exit 3), before any check.
    course = new_course(tmp_path)
    config = course / "config.yaml"
    config.write_text(config.read_text() + tail)
    said = refused(["new-assignment", "layer_norm", "--course", str(course)], course)
    assert said.startswith(f"Error: {config}: ") and words in said
