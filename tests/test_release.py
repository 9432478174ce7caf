"""`grader release`: the student bundle holds no solution, grades the public cases exactly as
the full course does, and every way a student checks from it names the hidden cases."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from grader.batch.grade import grade_batch
from grader.cli import main
from grader.course.bundle import BUNDLE_NAME, read_data
from grader.course.cases import build_cases
from grader.course.config import Config, load_config
from grader.course.notebook import load_submission
from grader.engine import grade_path
from grader.inline import check
from grader.judge.expected import build_expected
from grader.judge.released import released_data
from grader.report import Report
from grader.run import bwrap
from grader.run.workers import shared_workers

from conftest import REPO, repo_config_raw

# Each test releases or grades a course through real workers: ~40 s together.
pytestmark = [pytest.mark.slow]

AID = "self_attention"
PUBLIC = 2  # public cases of every target; the rest are hidden
NOTEBOOKS = sorted((REPO / "demo" / "submissions").glob("*.ipynb")) + sorted(
    (REPO / "tests" / "notebooks" / AID).glob("*.ipynb")
)


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Config, Path]]:
    """(the course: the bundled self_attention with PUBLIC public cases per target, the
    folder `grader release` wrote)."""
    root = tmp_path_factory.mktemp("release")
    raw = repo_config_raw()
    spec = raw["assignments"][AID]
    for target in spec["targets"].values():
        target["public_cases"] = PUBLIC
    raw["assignments"] = {AID: spec}
    (root / "course").mkdir()
    (root / "course" / "config.yaml").write_text(json.dumps(raw))
    out = root / "bundle"
    result = CliRunner().invoke(
        main, ["release", "--course", str(root / "course"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    yield load_config(root / "course" / "config.yaml"), out


def _bundle_texts(folder: Path) -> dict[str, bytes]:
    """Every byte string the bundle holds: its files, and each member of its data file."""
    texts = {}
    for path in folder.rglob("*"):
        if path.is_file():
            texts[str(path)] = path.read_bytes()
            if path.name == BUNDLE_NAME:
                with zipfile.ZipFile(path) as data:
                    for name in data.namelist():
                        texts[f"{path}:{name}"] = data.read(name)
    return texts


def _bodies(path: Path) -> dict[str, str]:
    """Each top-level function of a notebook, by name: its body as a normalised AST."""
    found = {}
    submission = load_submission(path)
    for cell in submission.cells:
        for node in submission.tree(cell.index).body:
            if isinstance(node, ast.FunctionDef):
                found[node.name] = ast.dump(ast.Module(node.body, []))
    return found


def _solution_functions(spec: Any) -> dict[str, ast.FunctionDef]:
    """The solution's functions whose body the exercise does not hand out."""
    stubs = _bodies(spec.exercise)
    solution = load_submission(spec.solution)
    found = {}
    for cell in solution.cells:
        for node in solution.tree(cell.index).body:
            body = ast.dump(ast.Module(node.body, [])) if isinstance(node, ast.FunctionDef) else ""
            if isinstance(node, ast.FunctionDef) and stubs.get(node.name) != body:
                found[node.name] = node
    return found


def test_no_solution_function_body_is_in_the_bundle(released: tuple[Config, Path]) -> None:
    config, out = released
    functions = _solution_functions(config.assignment(AID))
    assert len(functions) >= 6  # every target's solution, at least
    bundled = [p for p in out.rglob("*.ipynb")]
    handed_out = {name: body for p in bundled for name, body in _bodies(p).items()}
    texts = _bundle_texts(out)
    for name, node in functions.items():
        assert handed_out.get(name) != ast.dump(ast.Module(node.body, [])), name
        # Nor as text anywhere, data file included: each statement of the body, unparsed.
        for statement in node.body:
            line = ast.unparse(statement).split("\n")[0].encode()
            if len(line) > 20:  # a distinctive line, not `return x`
                assert not any(line in text for text in texts.values()), (name, line)


def _expressions(node: ast.FunctionDef) -> set[str]:
    """The solution's own code: each expression in it that computes something (an operator
    or a call), unparsed, long enough to be its own (not `len(x)`)."""
    found = {ast.unparse(part) for part in ast.walk(node) if isinstance(part, ast.BinOp | ast.Call)}
    return {text for text in found if len(text) >= 12}


def test_no_expression_of_the_solution_is_in_the_bundle(released: tuple[Config, Path]) -> None:
    """Not one computing expression of a solution function, as code, in any file of the
    bundle: a derived mistake's words quote them (`omega_q @ all_x[n] + beta_q`), so the
    bundle holds no derived mistake (they are named once a notebook is handed in)."""
    config, out = released
    functions = _solution_functions(config.assignment(AID))
    manifest_text = str(np.load(out / BUNDLE_NAME, allow_pickle=False)["manifest"][()])
    # The files' bytes, and the manifest as text (numpy keeps it as UTF-32 in its file).
    texts = [*_bundle_texts(out).values(), manifest_text.encode()]
    manifest = json.loads(manifest_text)
    prints = [f for target in manifest["numbers"][AID].values() for f in target["fingerprints"]]
    # What the course's author wrote for students in the catalogue (a hint may show the
    # expression meant) is theirs to hand out; nothing else may show the solution's code.
    authored = " ".join(
        str(f["mistake"][words])
        for f in prints
        if f["origin"] in ("catalogue", "inherited")
        for words in ("message", "hint", "static")
    )
    expressions = {text for node in functions.values() for text in _expressions(node)}
    assert len(expressions) >= 10
    for text in expressions - {text for text in expressions if text in authored}:
        assert not any(text.encode() in held for held in texts), text
    origins = {f["origin"] for f in prints}
    assert origins == {"catalogue", "inherited"}


def test_no_line_pattern_made_from_a_variant_is_in_the_bundle(
    released: tuple[Config, Path],
) -> None:
    """r45: the patterns that place a catalogued mistake where the course's own finds no
    line are made from its variant's changed line (`q@k.T/np.sqrt(v.shape[-1])`), one edit
    from the solution's: the bundle keeps the course's own `locate` alone."""
    from grader.judge.fingerprints import catalogue_for

    config, out = released
    own = {m.function: m.locate for m in catalogue_for(config.assignment(AID)).mistakes}
    manifest = json.loads(str(np.load(out / BUNDLE_NAME, allow_pickle=False)["manifest"][()]))
    prints = [f for target in manifest["numbers"][AID].values() for f in target["fingerprints"]]
    mine = [f["mistake"] for f in prints if f["mistake"]["function"] in own]
    assert len(mine) >= 5
    for mistake in mine:
        assert mistake["locate"] == own[mistake["function"]], mistake["id"]


def _verdicts(report: Report) -> list[Any]:
    return [
        (t.name, t.status, t.score, t.cases_passed, t.cases_total, t.hidden_cases)
        for t in report.targets
    ]  # fmt: skip


def _derived(config: Config) -> set[str]:
    """The words of every derived (mutant) mistake of the full course's assignment."""
    spec = config.assignment(AID)
    full = build_expected(spec, build_cases(spec), shared_workers(bwrap.support()))
    return {
        f.mistake.message for prints in full.fingerprints.values() for f in prints
        if f.origin == "mutant"
    }  # fmt: skip


def test_verdicts_and_diagnoses_are_the_full_course_s(released: tuple[Config, Path]) -> None:
    config, out = released
    bundle = load_config(out / BUNDLE_NAME)
    assert bundle.assignment(AID).released is not None
    derived = _derived(config)
    compared, same_words, derived_named = 0, 0, 0
    for notebook in NOTEBOOKS:
        try:  # a few are unreadable on purpose
            meta = json.loads(notebook.read_text()).get("metadata", {})
        except ValueError:
            continue
        if meta.get("grader", {}).get("assignment", AID) != AID:
            continue
        full = grade_path(notebook, config, AID, public_only=True)
        alone = grade_path(notebook, bundle, AID)
        assert _verdicts(alone) == _verdicts(full), notebook.name
        assert alone.errors == full.errors
        for mine, theirs in zip(alone.targets, full.targets, strict=True):
            # The same diagnosis, but for the derived mistakes: the bundle holds none.
            assert not any(words in m for m in mine.messages for words in derived)
            if any(words in m for m in theirs.messages for words in derived):
                derived_named += 1
            else:
                assert (mine.mistakes, mine.messages, mine.location) == (
                    theirs.mistakes,
                    theirs.messages,
                    theirs.location,
                )
                same_words += 1
        compared += 1
    assert compared >= 10 and derived_named >= 1 and same_words >= 30


def test_hard_coded_public_outputs_pass_only_the_public_cases(
    released: tuple[Config, Path], tmp_path: Path
) -> None:
    config, out = released
    case_set, expected = released_data(load_config(out / BUNDLE_NAME).assignment(AID))
    answers = {
        len(case.args[0]): expected.references["softmax"].outputs[case.index].tolist()
        for case in case_set.cases["softmax"]
    }
    code = (
        "import numpy as np\n"
        f"ANSWERS = {answers!r}\n"
        "def softmax(items_in):\n"
        "    return np.array(ANSWERS.get(len(items_in), np.zeros(len(items_in))))\n"
    )
    folder = tmp_path / "class"
    folder.mkdir()
    notebook = folder / "mallory.ipynb"
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": code}]  # fmt: skip
    notebook.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                    "nbformat_minor": 5}))  # fmt: skip
    public = grade_path(notebook, load_config(out / BUNDLE_NAME), AID)
    softmax = next(t for t in public.targets if t.name == "softmax")
    assert softmax.status == "passed" and softmax.cases_passed == PUBLIC
    batch = grade_batch(folder, config, None, AID)
    graded = batch.entries[0].report
    assert graded is not None
    softmax = next(t for t in graded.targets if t.name == "softmax")
    assert softmax.status == "failed"
    assert softmax.cases_passed == PUBLIC < softmax.cases_total


def test_grader_check_finds_the_bundle_and_names_the_hidden_cases(
    released: tuple[Config, Path], tmp_path: Path
) -> None:
    _, out = released
    copy = tmp_path / "bundle"
    shutil.copytree(out, copy)
    shutil.copy(REPO / "demo" / "submissions" / "bruno.ipynb", copy / "bruno.ipynb")
    env = {k: v for k, v in os.environ.items() if k not in ("GRADER_COURSE", "GRADER_CONFIG")}
    grader = [sys.executable, "-m", "grader", "check", str(copy / "bruno.ipynb")]
    for extra, folder in (([], copy), (["--course", str(copy)], tmp_path)):
        done = subprocess.run(
            [*grader, *extra], cwd=folder, env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 1, done.stderr
        hidden = 6 * 4 + 2 - 6 * PUBLIC  # softmax has six sizes, the others four
        assert f"public cases: 8 of 12 passed; {hidden} hidden cases are graded" in done.stdout
        assert "output_transposed" in done.stdout  # the diagnosis, from the bundle's numbers


def test_check_in_the_notebook_from_the_bundle(
    released: tuple[Config, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _, out = released
    shutil.copy(REPO / "demo" / "submissions" / "bruno.ipynb", tmp_path / "bruno.ipynb")
    monkeypatch.setenv("GRADER_COURSE", str(out))
    shown = check(notebook=tmp_path / "bruno.ipynb")
    assert "public cases: 8 of 12 passed" in shown.text
    assert "public cases: 8 of 12 passed" in shown._repr_html_()
    assert "scale_discarded" in shown.text


def test_pytest_notebook_from_the_bundle(
    released: tuple[Config, Path], pytester: pytest.Pytester
) -> None:
    _, out = released
    result = pytester.runpytest_subprocess(
        "--notebook", str(REPO / "demo" / "submissions" / "bruno.ipynb"),
        "--grader-config", str(out / BUNDLE_NAME), "-p", "no:cacheprovider",
    )  # fmt: skip
    result.assert_outcomes(passed=4, failed=2)
    result.stdout.fnmatch_lines(["*grader: bruno.ipynb: public cases: 8 of 12 passed*"])


def test_the_instructor_grades_against_the_course_not_a_bundle(
    released: tuple[Config, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _, out = released
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["grade", str(REPO / "demo" / "submissions"),
                                       "--course", str(out)])  # fmt: skip
    assert result.exit_code == 2
    assert "student bundle" in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "command",
    [["selftest"], ["assign"], ["export-gradescope", "-a", AID, "--out", "gs.zip"],
     ["serve", "--out", "served"]],
)  # fmt: skip
def test_the_author_s_and_instructor_s_commands_refuse_a_bundle_in_one_line(
    released: tuple[Config, Path],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    command: list[str],
) -> None:
    # They once took the bundle's data file for a solution notebook or a YAML config: a
    # message about UTF-8 notebooks, a case builder '' or a traceback (exit 3).
    _, out = released
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, [*command, "--course", str(out)])
    assert result.exit_code == 2
    said = result.stderr.strip().splitlines()
    assert said == [
        f"Error: {out / BUNDLE_NAME} is a student bundle (public cases only): run "
        f"`grader {command[0]}` in the course itself, or name it with --course DIR, "
        "--config FILE or $GRADER_COURSE"
    ]
    assert list(tmp_path.iterdir()) == []  # no half-written zip


@pytest.mark.parametrize("how", ["named", "link", "copy"])
def test_an_exercise_that_is_a_solution_is_never_handed_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    # `exercise:` naming the solution (a slip of the pen), a link to it or a copy of it
    # was copied into the bundle as it is: the whole solution, handed to every student.
    raw = repo_config_raw()
    spec = raw["assignments"][AID]
    raw["assignments"] = {AID: spec}
    solution = Path(spec["solution"])
    exercise = tmp_path / "course" / "exercises" / "self_attention.ipynb"
    exercise.parent.mkdir(parents=True)
    if how == "named":
        exercise = solution
    elif how == "link":
        exercise.symlink_to(solution)
    else:
        shutil.copyfile(solution, exercise)
    said = _refused_release(tmp_path, raw, exercise, monkeypatch)
    assert f"assignments.{AID}.exercise: {exercise} is {solution}" in said


def test_the_ci_templates_run_from_the_bundle(
    released: tuple[Config, Path], tmp_path: Path
) -> None:
    import yaml
    from test_export import run_bash

    from grader.author.export import template

    _, out = released
    line = "public cases: 8 of 12 passed; 14 hidden cases are graded when you submit"
    job = yaml.safe_load(template("github"))["jobs"]["run-autograding-tests"]
    step = next(s for s in job["steps"] if s.get("id") == "grade")
    workspace = tmp_path / "github"
    workspace.mkdir()
    shutil.copy(REPO / "demo" / "submissions" / "bruno.ipynb", workspace / "homework.ipynb")
    summary, output = tmp_path / "summary.md", tmp_path / "output"
    env = {**job["env"], "GRADER_COURSE": str(out), "GITHUB_STEP_SUMMARY": str(summary)}
    done = run_bash(step["run"], workspace, {**env, "GITHUB_OUTPUT": str(output)})
    assert done.returncode == 1, done.stderr  # failing functions: the check is red
    assert line in done.stdout and line in summary.read_text()
    assert "points=5/10" in output.read_text()
    gitlab = yaml.safe_load(template("gitlab"))["grade-notebook"]
    done = run_bash("\n".join(gitlab["script"]), workspace, {**env, **{"GRADER_COURSE": str(out)}})
    assert done.returncode == 1 and line in done.stdout
    assert (workspace / gitlab["artifacts"]["reports"]["junit"]).read_text().count("<testcase") == 6


def test_per_student_bundles_hold_each_student_s_own_public_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRADER_COURSE_SECRET", "a course secret")
    monkeypatch.chdir(tmp_path)
    raw = repo_config_raw()
    spec = raw["assignments"][AID]
    spec["per_student_inputs"] = True
    for target in spec["targets"].values():
        target["public_cases"] = PUBLIC
    raw["assignments"] = {AID: spec}
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "config.yaml").write_text(json.dumps(raw))
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nada,Ada L\nbruno,Bruno M\n")
    out = tmp_path / "out"
    release = ["release", "--course", "course", "--out", str(out)]
    refused = CliRunner().invoke(main, release)
    assert refused.exit_code == 2 and "--roster" in refused.stderr  # one bundle cannot
    done = CliRunner().invoke(main, [*release, "--roster", str(roster)])
    assert done.exit_code == 0, done.output
    assert f"wrote 2 student bundles in {out}" in done.stdout
    mine = {s: load_config(out / s / BUNDLE_NAME).assignment(AID) for s in ("ada", "bruno")}
    inputs = {s: released_data(a)[0].cases["softmax"][0].args[0] for s, a in mine.items()}
    assert not np.array_equal(inputs["ada"], inputs["bruno"])  # each their own
    config = load_config(tmp_path / "course" / "config.yaml")
    notebook = REPO / "demo" / "submissions" / "bruno.ipynb"
    full = grade_path(notebook, config, AID, public_only=True, student="bruno")
    alone = grade_path(notebook, load_config(out / "bruno" / BUNDLE_NAME), AID)
    assert _verdicts(alone) == _verdicts(full)
    roster.write_text("id,name\n../elsewhere,Eve\n")
    escaped = CliRunner().invoke(main, [*release, "--roster", str(roster)])
    assert escaped.exit_code == 2 and not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04", b"\x93NUMPY"])
def test_an_empty_or_cut_bundle_is_one_line_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    # An empty grader-bundle.npz (a failed download, a disk full) was an EOFError: exit 3.
    (tmp_path / BUNDLE_NAME).write_bytes(content)
    shutil.copy(REPO / "demo" / "submissions" / "bruno.ipynb", tmp_path / "bruno.ipynb")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRADER_COURSE", raising=False)
    monkeypatch.delenv("GRADER_CONFIG", raising=False)
    result = CliRunner().invoke(main, ["check", "bruno.ipynb"])
    assert result.exit_code == 2
    said = result.stderr.strip().splitlines()
    assert len(said) == 1
    assert said[0].startswith(f"Error: {tmp_path / BUNDLE_NAME}: not a readable student bundle")


def test_an_out_folder_that_cannot_be_made_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It was a traceback (exit 3) after the course had been checked.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken").write_text("a file, not a folder\n")
    out = Path("taken") / "handout"
    result = CliRunner().invoke(
        main, ["release", "--course", str(REPO), "-a", AID, "--out", str(out)]
    )
    assert result.exit_code == 2
    said = result.stderr.strip().splitlines()
    assert said == [f"Error: --out {out}: cannot write {out} (Not a directory)"]


def _refused_release(
    tmp_path: Path, raw: dict[str, Any], exercise: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    """Release the course `raw` with `exercise` as its exercise: it must be refused in one
    line (exit 2) before anything is written; that line."""
    raw["assignments"][AID]["exercise"] = str(exercise)
    (tmp_path / "course" / "config.yaml").write_text(json.dumps(raw))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "bundle"
    result = CliRunner().invoke(
        main, ["release", "--course", str(tmp_path / "course"), "--out", str(out)]
    )
    assert result.exit_code == 2
    said = result.stderr.strip().splitlines()
    assert len(said) == 1 and not out.exists()
    return said[0]


def test_a_release_removes_what_the_last_one_wrote_and_it_no_longer_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exercise renamed (or a file once handed out by mistake) does not stay in the
    handout; what else the folder holds is not touched."""
    raw = repo_config_raw()
    spec = raw["assignments"][AID]
    raw["assignments"] = {AID: spec}
    folder = tmp_path / "course" / "exercises"
    folder.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "bundle"
    for name in ("draft.ipynb", "self_attention.ipynb"):
        shutil.copyfile(REPO / "exercises" / f"{AID}.ipynb", folder / name)
        spec["exercise"] = str(folder / name)
        (tmp_path / "course" / "config.yaml").write_text(json.dumps(raw))
        result = CliRunner().invoke(
            main, ["release", "--course", str(tmp_path / "course"), "--out", str(out)]
        )
        assert result.exit_code == 0, result.output
        if name == "draft.ipynb":
            assert (out / "exercises" / "draft.ipynb").is_file()
            (out / "README.md").write_text("the instructor's own")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "README.md",
        "exercises/self_attention.ipynb",
        BUNDLE_NAME,
    ]


def test_a_copy_of_the_solution_saved_again_is_never_handed_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A copy of the solution opened and saved in Jupyter differs from it in bytes (its
    # indentation, a metadata key) and was handed out: the check compares code, not bytes.
    raw = repo_config_raw()
    spec = raw["assignments"][AID]
    raw["assignments"] = {AID: spec}
    notebook = json.loads(Path(spec["solution"]).read_text())
    notebook["metadata"]["saved_by"] = "jupyter"
    exercise = tmp_path / "course" / "exercises" / "self_attention.ipynb"
    exercise.parent.mkdir(parents=True)
    exercise.write_text(json.dumps(notebook, indent=2))
    said = _refused_release(tmp_path, raw, exercise, monkeypatch)
    first = load_config(tmp_path / "course" / "config.yaml").assignment(AID).targets[0].name
    assert f"holds the solution's `{first}` as it is" in said


def test_no_exercise_of_the_course_hands_out_a_solution(config: Config) -> None:
    # multihead_attention's exercise gave `softmax_cols` and `one_head` as they are: the
    # self_attention solution's `softmax_cols` and `scaled_dot_product_self_attention`,
    # handed to every student of a whole-course release.
    from grader.author.release import given_away

    with_exercises = [a for a in config.assignments.values() if a.exercise is not None]
    assert len(with_exercises) >= 4
    for spec in with_exercises:
        assert given_away(config, spec) == [], spec.id


def _handing_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A course of self_attention and multihead_attention whose multihead exercise hands
    out self_attention's `scaled_dot_product_self_attention` as its `one_head` (the body
    copied from the solution): (the course folder, that exercise)."""
    raw = repo_config_raw()
    raw["assignments"] = {a: raw["assignments"][a] for a in (AID, "multihead_attention")}
    solution = load_submission(Path(raw["assignments"][AID]["solution"]))
    from grader.judge.static import find_function

    found = find_function(solution, "scaled_dot_product_self_attention")
    assert found is not None
    given = ast.unparse(found.node).replace("scaled_dot_product_self_attention", "one_head", 1)
    notebook = json.loads((REPO / "exercises" / "multihead_attention.ipynb").read_text())
    cell = next(c for c in notebook["cells"] if "".join(c["source"]).startswith("def one_head"))
    cell["source"] = given
    course = tmp_path / "course"
    exercise = course / "exercises" / "multihead_attention.ipynb"
    exercise.parent.mkdir(parents=True)
    exercise.write_text(json.dumps(notebook))
    raw["assignments"]["multihead_attention"]["exercise"] = str(exercise)
    (course / "config.yaml").write_text(json.dumps(raw))
    monkeypatch.chdir(tmp_path)
    return course, exercise


def test_an_exercise_handing_out_another_s_solution_is_refused_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    course, exercise = _handing_out(tmp_path, monkeypatch)
    out = tmp_path / "bundle"
    result = CliRunner().invoke(main, ["release", "--course", str(course), "--out", str(out)])
    assert result.exit_code == 2
    said = result.stderr.strip().splitlines()
    assert len(said) == 1 and not out.exists()
    assert (
        f"{exercise} hands out {AID}'s solution of `scaled_dot_product_self_attention` "
        f"(as `one_head`), and {AID} is in this release" in said[0]
    )


def test_on_its_own_it_is_released_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Once self_attention is due, its answers are the next assignment's given helpers.
    course, exercise = _handing_out(tmp_path, monkeypatch)
    out = tmp_path / "bundle"
    argv = ["release", "--course", str(course), "--assignment", "multihead_attention"]
    result = CliRunner().invoke(main, [*argv, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stderr.strip().splitlines() == [
        f"note: {exercise} hands out {AID}'s solution of `scaled_dot_product_self_attention` "
        f"(as `one_head`): hand it out only once {AID} is due"
    ]
    assert (out / "exercises" / "multihead_attention.ipynb").is_file()


def test_an_assignment_without_an_exercise_gets_a_bundle_of_its_cases(tmp_path: Path) -> None:
    # r45: `udl_12_1` grades students' copies of a textbook notebook the course does not
    # write: release left it out without a word (`-a udl_12_1`: "exercise: not set"), and
    # those students had no check of their own.
    out = tmp_path / "handout"
    done = CliRunner().invoke(
        main, ["release", "--course", str(REPO), "-a", "udl_12_1", "--out", str(out)]
    )
    assert done.exit_code == 0, done.output
    assert "note: udl_12_1 has no `exercise:`: its bundle holds its public cases alone" in (
        done.stderr
    )
    assert done.stdout == f"wrote {out / BUNDLE_NAME} in {out}\n"
    assert sorted(p.name for p in out.iterdir()) == [BUNDLE_NAME]
    for name, points in (("correct", 10), ("seed_001", None)):
        shutil.copy(REPO / "tests" / "notebooks" / "udl_12_1" / f"{name}.ipynb", out)
        report = grade_path(out / f"{name}.ipynb", load_config(out / BUNDLE_NAME), "udl_12_1")
        full = grade_path(out / f"{name}.ipynb", load_config(REPO / "config.yaml"), "udl_12_1")
        assert report.score == (points if points is not None else full.score), report.targets
        assert [t.status for t in report.targets] == [t.status for t in full.targets]


def test_one_assignment_released_into_a_bundle_keeps_those_released_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # r50 #7: `release --assignment` into last week's bundle deleted last week's exercise
    # and left it out of the manifest (exit 0, no word): those students' check() broke.
    # Week 3's exercise may hand out week 1's solution, released before.
    course, _ = _handing_out(tmp_path, monkeypatch)
    out = tmp_path / "bundle"
    for aid in (AID, "multihead_attention"):
        argv = ["release", "--course", str(course), "--assignment", aid, "--out", str(out)]
        result = CliRunner().invoke(main, argv)
        assert result.exit_code == 0, result.output
    assert f"note: {out} already holds {AID}: kept" in result.stderr
    manifest, _ = read_data(out / BUNDLE_NAME)
    assert [a["id"] for a in manifest["assignments"]] == [AID, "multihead_attention"]
    for entry in manifest["assignments"]:
        assert (out / entry["exercise"]).is_file(), entry["exercise"]
