"""The course author's leftovers: an exercise that would be the whole solution, one that is
stale, a catalogue's `replaces=` naming no mistake, `--out -`, and roster ids no disk takes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main

from authoring import digests, elsewhere, new_course, refused  # noqa: F401


def _unmark(solution: Path) -> None:
    """The solution notebook with its SOLUTION marker lines taken out (the answer stays)."""
    notebook = json.loads(solution.read_text())
    for cell in notebook["cells"]:
        lines = "".join(cell["source"]).split("\n")
        cell["source"] = "\n".join(line for line in lines if "SOLUTION" not in line)
    solution.write_text(json.dumps(notebook))


def test_assign_refuses_a_solution_without_markers(tmp_path: Path) -> None:
    # The exercise was the whole solution (release refused it later, but the author had a
    # full answer in the exercise file, ready to be handed out by hand).
    course = new_course(tmp_path)
    solution = course / "solutions" / "standardize.ipynb"
    _unmark(solution)
    said = refused(["assign", "--course", str(course)], tmp_path)
    assert said.startswith(f"Error: solution notebook {solution}: no code cell marks")
    assert "# BEGIN SOLUTION" in said and "# END SOLUTION" in said
    assert not (course / "exercises" / "standardize.ipynb").exists()


def test_assign_out_dash_is_the_notebook_on_standard_output(tmp_path: Path) -> None:
    # `--out -` wrote a file named '-'; `grader export --out -` means standard output.
    course = new_course(tmp_path)
    write = ["assign", "--course", str(course), "--assignment", "example"]
    result = CliRunner().invoke(main, [*write, "--out", "-"])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "-").exists()
    written = CliRunner().invoke(main, [*write, "--out", str(tmp_path / "ex.ipynb")])
    assert written.exit_code == 0, written.output
    assert result.stdout == (tmp_path / "ex.ipynb").read_text(encoding="utf-8")


def test_assign_out_dash_takes_one_assignment(tmp_path: Path) -> None:
    course = new_course(tmp_path)
    config = course / "config.yaml"
    text = config.read_text()
    again = text.split("  example:\n")[1].replace("exercises/standardize", "exercises/again")
    config.write_text(text + "  again:\n" + again)
    said = refused(["assign", "--course", str(course), "--out", "-"], tmp_path)
    assert said.startswith("Error: --out -: standard output takes one notebook, not 2")


def test_export_gradescope_refuses_out_dash(tmp_path: Path) -> None:
    course = new_course(tmp_path)
    args = ["export-gradescope", "--course", str(course), "-a", "example", "--out", "-"]
    said = refused(args, tmp_path)
    assert said.startswith("Error: --out -: the autograder is a zip to upload")
    assert not (tmp_path / "-").exists()


def _replacing(course: Path, named: str) -> None:
    """The init course's catalogue, its one mistake saying it replaces `named`."""
    catalogue = course / "solutions" / "standardize_mistakes.py"
    text = catalogue.read_text()
    assert text.count('    locate=r"\\.var\\(",\n') == 1
    catalogue.write_text(
        text.replace(
            '    locate=r"\\.var\\(",\n', f'    locate=r"\\.var\\(", replaces={named!r},\n'
        )
    )


@pytest.mark.parametrize("named", ["typo", "divides_by_variance"])
def test_a_replaces_naming_no_other_mistake_is_refused_at_load(tmp_path: Path, named: str) -> None:
    # `replaces="typo"` was kept and never matched anything: the author was not told.
    course = new_course(tmp_path)
    _replacing(course, named)
    said = refused(["selftest", "--course", str(course)], tmp_path)
    assert (
        f"mistake divides_by_variance (standardize__divides_by_variance): replaces='{named}'"
        in said
    )
    assert ("itself" if named == "divides_by_variance" else "no mistake of this catalogue") in said


def test_a_replaces_naming_a_grader_id_is_kept(tmp_path: Path) -> None:
    from grader.course.config import load_config
    from grader.judge.preflight import checked_catalogue

    course = new_course(tmp_path)
    _replacing(course, "output_transposed")
    config = load_config(course / "config.yaml")
    catalogue = checked_catalogue(config, config.assignment("example"))
    assert [m.replaces for m in catalogue.mistakes] == ["output_transposed"]


def test_selftest_runs_a_solution_that_never_ends_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Graded as a submission first, the solution held the worker for a whole time limit
    # while the course's own run of it queued behind: refused after twice the limit.
    from grader.run.workers import Workers

    course = new_course(tmp_path)
    config = course / "config.yaml"
    text = config.read_text()
    assert text.count("time_limit: {submission: 20, cell: 5, call: 2}") == 1
    config.write_text(
        text.replace("submission: 20, cell: 5, call: 2", "submission: 2, cell: 1, call: 1")
    )
    solution = course / "solutions" / "standardize.ipynb"
    notebook = json.loads(solution.read_text())
    loop = {"cell_type": "code", "execution_count": None, "id": "loop", "metadata": {}}
    notebook["cells"].append({**loop, "outputs": [], "source": "while True:\n    pass\n"})
    solution.write_text(json.dumps(notebook))
    runs: list[int] = []
    real = Workers.run

    def counted(self: Workers, *args: object, **kwargs: object) -> object:
        runs.append(1)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Workers, "run", counted)
    said = refused(["selftest", "--course", str(course)], tmp_path)
    assert "fails to run: cell 4: did not finish within 1 s" in said
    assert len(runs) == 1


def test_release_roster_names_a_windows_device_id_s_folder_as_its_page(tmp_path: Path) -> None:
    # A student `CON` got the folder OUT/CON, which no Windows disk can hold: a bundle copied
    # there lost that student. Their folder is named as their feedback page is.
    from grader.render.escape import safe_name

    course = new_course(tmp_path)
    CliRunner().invoke(main, ["assign", "--course", str(course)])
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nCON,Con Person\ns1,Ada\n")
    out = tmp_path / "handouts"
    args = ["release", "--course", str(course), "--roster", str(roster), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == sorted([safe_name("CON"), "s1"])
    assert safe_name("CON") != "CON" and (out / safe_name("CON") / "exercises").is_dir()
    assert (
        f"note: 'CON' is no folder name on every disk: their bundle is {out / safe_name('CON')}"
        in result.stderr
    )


def test_init_and_assign_print_paths_one_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # init printed `course/config.yaml` beside `/tmp/…/course/exercises/…` (the config's
    # paths are absolute): inside the working folder, every path is now relative to it.
    made = CliRunner().invoke(main, ["init", "course"])
    assert made.exit_code == 0, made.output
    wrote = [
        line.split(" ", 1)[1] for line in made.stdout.splitlines() if line.startswith("wrote ")
    ]
    assert "course/exercises/standardize.ipynb" in wrote
    assert all(not Path(p).is_absolute() and (tmp_path / p).is_file() for p in wrote)
    monkeypatch.chdir(tmp_path / "course")
    outside = tmp_path.parent / f"{tmp_path.name}-out.ipynb"
    for out, shown in [
        ([], "exercises/standardize.ipynb"),
        (["--out", f"../../{outside.name}"], str(outside)),
    ]:
        result = CliRunner().invoke(main, ["assign", *out])
        assert result.exit_code == 0, result.output
        assert result.stdout == f"wrote {shown}\n"
    outside.unlink()


def test_release_refuses_an_exercise_whose_solution_changed_since_assign(tmp_path: Path) -> None:
    # The solution was fixed after `grader assign`, and the old exercise released silently.
    course = new_course(tmp_path)
    assert CliRunner().invoke(main, ["assign", "--course", str(course)]).exit_code == 0
    exercise = course / "exercises" / "standardize.ipynb"
    written = json.loads(exercise.read_text())["metadata"]["grader_written_from"]["sha256"]
    solution = course / "solutions" / "standardize.ipynb"
    notebook = json.loads(solution.read_text())
    for cell in notebook["cells"]:  # outputs and counts are no change of the solution
        if cell["cell_type"] == "code":
            cell["execution_count"] = 7
    solution.write_text(json.dumps(notebook))
    args = ["release", "--course", str(course), "--out", str(tmp_path / "handout")]
    assert CliRunner().invoke(main, args).exit_code == 0
    notebook["cells"].append(
        {"cell_type": "markdown", "id": "new", "metadata": {}, "source": "A hint."}
    )
    solution.write_text(json.dumps(notebook))
    said = refused(args, tmp_path)
    assert said == (
        f"Error: {course / 'config.yaml'}: assignments.example.exercise: {exercise} was written "
        f"from an older {solution} (changed since): write it again with "
        "`grader assign --assignment example`"
    )
    assert CliRunner().invoke(main, ["assign", "--course", str(course)]).exit_code == 0
    again = json.loads(exercise.read_text())["metadata"]["grader_written_from"]["sha256"]
    assert again != written
    assert CliRunner().invoke(main, args).exit_code == 0


def test_an_exercise_without_the_record_is_released_as_before(tmp_path: Path) -> None:
    course = new_course(tmp_path)
    assert CliRunner().invoke(main, ["assign", "--course", str(course)]).exit_code == 0
    exercise = course / "exercises" / "standardize.ipynb"
    notebook = json.loads(exercise.read_text())
    del notebook["metadata"]["grader_written_from"]  # written by hand, or by an older grader
    exercise.write_text(json.dumps(notebook))
    solution = course / "solutions" / "standardize.ipynb"
    changed = json.loads(solution.read_text())
    changed["cells"].append(
        {"cell_type": "markdown", "id": "new", "metadata": {}, "source": "A hint."}
    )
    solution.write_text(json.dumps(changed))
    args = ["release", "--course", str(course), "--out", str(tmp_path / "handout")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output


def test_selftest_names_a_missing_solution_not_the_catalogue(tmp_path: Path) -> None:
    # r43: "assignments.example.mistakes in config.yaml: … solution notebook not found": the
    # solution is read with the catalogue, and its absence was blamed on the catalogue's key.
    course = new_course(tmp_path)
    solution = course / "solutions" / "standardize.ipynb"
    solution.unlink()
    said = refused(["selftest", "--course", str(course)], tmp_path)
    assert said == (
        f"Error: {course / 'config.yaml'}: assignments.example.solution: no such file: {solution}"
    )


def test_a_target_renamed_in_the_config_alone_is_named_not_blamed_on_the_catalogue(
    tmp_path: Path,
) -> None:
    # r43: renaming `standardize` in config.yaml only was told as the catalogue's mistake
    # ("fix the decorator's first word"), the catalogue being right about the solution.
    course = new_course(tmp_path)
    config = course / "config.yaml"
    text = config.read_text()
    assert text.count("      standardize:") == 1
    config.write_text(text.replace("      standardize:", "      standardise:"))
    for command in (["selftest"], ["selftest", "-a", "example"]):
        said = refused([*command, "--course", str(course)], tmp_path)
        assert "assignments.example.targets.standardise: the solution" in said, said
        assert "defines no `standardise`; it defines `standardize`" in said, said
        assert "decorator" not in said and ".mistakes in" not in said, said
