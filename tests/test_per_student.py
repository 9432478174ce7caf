"""Per-student inputs: each student's public cases come from a seed derived from their id and
the course secret; hidden cases stay the same for everyone; grading needs the secret."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from grader.batch import grade as batch_module
from grader.cli import main
from grader.course.cases import build_cases
from grader.course.config import load_config
from grader.course.per_student import SECRET_ENV, derive_seed, for_student

import students
from conftest import repo_config_raw, write_notebook

SECRET = "s3cr3t-course-key-9f2b"


def course(tmp_path: Path, secret_file: bool = False) -> Path:
    raw = repo_config_raw()
    spec = raw["assignments"]["self_attention"]
    spec["per_student_inputs"] = True
    for target in spec["targets"].values():
        target["public_cases"] = 2
    folder = tmp_path / "course"
    folder.mkdir()
    if secret_file:
        raw["secret_file"] = "secret.txt"
        (folder / "secret.txt").write_text(SECRET + "\n")
    (folder / "config.yaml").write_text(json.dumps(raw))
    return folder


def same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    return len(a) == len(b) and all(
        np.array_equal(np.asarray(x, dtype=object), np.asarray(y, dtype=object))
        if not isinstance(x, np.ndarray)
        else isinstance(y, np.ndarray) and np.array_equal(x, y)
        for x, y in zip(a, b, strict=True)
    )


def test_public_cases_differ_per_student_and_hidden_ones_do_not(tmp_path: Path) -> None:
    spec = load_config(course(tmp_path) / "config.yaml").assignment("self_attention")
    shared = build_cases(spec)
    ada, bob = (build_cases(for_student(spec, s, SECRET.encode())) for s in ("ada", "bob"))
    again = build_cases(for_student(spec, "ada", SECRET.encode()))
    other_secret = build_cases(for_student(spec, "ada", b"another secret"))
    for target in spec.targets:
        name = target.name
        for index, case in enumerate(shared.cases[name]):
            a, b = ada.cases[name][index].args, bob.cases[name][index].args
            assert same(a, again.cases[name][index].args)  # the same every time
            if index < 2:  # public: each student's own, and the secret matters
                assert not same(a, b) and not same(a, case.args)
                assert not same(a, other_secret.cases[name][index].args)
            else:  # hidden: the assignment's seed, for everyone
                assert same(a, case.args) and same(b, case.args)
    # Without per_student_inputs nothing changes.
    assert for_student(replace(spec, per_student_inputs=False), "ada", None).public_seed is None
    assert derive_seed(b"k", "a", "ada") != derive_seed(b"k", "a", "bob")


def rows(out: Path) -> dict[str, dict[str, str]]:
    with (out / "grades.csv").open() as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


@pytest.mark.slow
def test_a_batch_grades_each_student_on_their_own_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("ada", "bob"):
        write_notebook(folder / f"{name}.ipynb", students.cells())
    wrong = students.cells(softmax_cols=students.SOFTMAX_COLS_WRONG_AXIS)
    write_notebook(folder / "cy.ipynb", wrong)
    out = tmp_path / "out"
    command = ["grade", str(folder), "--course", str(course(tmp_path)), "-a", "self_attention"]

    monkeypatch.chdir(tmp_path)  # no ./config.yaml to note
    monkeypatch.delenv(SECRET_ENV, raising=False)
    result = CliRunner().invoke(main, [*command, "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and SECRET_ENV in result.stderr
    assert not (out / "grades.csv").exists()

    monkeypatch.setenv(SECRET_ENV, SECRET)
    judged_on: list[int | None] = []
    prepare = batch_module._prepare

    def spy(spec: Any, workers: Any) -> Any:
        judged_on.append(spec.public_seed)
        return prepare(spec, workers)

    monkeypatch.setattr(batch_module, "_prepare", spy)
    result = CliRunner().invoke(main, [*command, "--out", str(out)])
    assert result.exit_code == 0, result.output
    # Judged against each student's own references: three seeds, one per student.
    seeds = {derive_seed(SECRET.encode(), "self_attention", s) for s in ("ada", "bob", "cy")}
    assert seeds <= set(judged_on) and len(seeds) == 3
    first = rows(out)
    full = float(first["ada"]["max_total"])
    assert float(first["ada"]["total"]) == full and float(first["bob"]["total"]) == full
    assert float(first["cy"]["total"]) < full  # still judged, on cy's own cases
    assert "softmax_cols" in (out / "feedback" / "cy.html").read_text()

    result = CliRunner().invoke(main, [*command, "--out", str(out), "--force"])
    assert result.exit_code == 0, result.output
    again = rows(out)
    for student in first:  # a regrade gives the same result
        assert {k: v for k, v in again[student].items() if "time" not in k} == {
            k: v for k, v in first[student].items() if "time" not in k
        }

    for path in out.rglob("*"):  # the secret is in no output file
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_check_needs_the_student_and_reads_a_secret_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(SECRET_ENV, raising=False)
    folder = course(tmp_path, secret_file=True)
    (tmp_path / "work").mkdir()
    notebook = write_notebook(tmp_path / "work" / "ada.ipynb", students.cells())
    command = ["check", str(notebook), "--course", str(folder), "-a", "self_attention"]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 2 and "--student" in result.stderr
    assert result.stderr.strip().count("\n") == 0
    result = CliRunner().invoke(main, [*command, "--student", "ada", "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["score"] == report["max_score"]
    assert SECRET not in result.output
