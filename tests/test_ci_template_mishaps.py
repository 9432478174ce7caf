"""The CI templates a student's repository runs, fed a careless student's notebook: the job
ends with the grader's own line and exit code, never a traceback of the workflow's glue."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from grader.author.export import template

from conftest import REPO

pytestmark = pytest.mark.slow


def _grade_step() -> tuple[dict[str, str], str]:
    job = yaml.safe_load(template("github"))["jobs"]["run-autograding-tests"]
    step = next(s for s in job["steps"] if s.get("id") == "grade")
    return job["env"], step["run"]


def test_a_notebook_cut_off_mid_save_ends_the_github_job_with_the_graders_line(
    tmp_path: Path,
) -> None:
    from test_export import run_bash

    env, script = _grade_step()
    whole = (REPO / "exercises" / "self_attention.ipynb").read_text(encoding="utf-8")
    (tmp_path / env["NOTEBOOK"]).write_text(whole[: len(whole) // 2], encoding="utf-8")
    output, summary = tmp_path / "output", tmp_path / "summary.md"
    done = run_bash(
        script,
        tmp_path,
        {
            **env,
            "GRADER_COURSE": str(REPO),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
        },
    )
    assert done.returncode == 2, done.stderr  # bad input, as grader check says
    assert "Traceback" not in done.stderr, done.stderr
    assert "invalid JSON" in done.stderr
    # no points are claimed for a notebook that could not be read
    assert "points=" not in (output.read_text() if output.exists() else "")


def _sandbox_step() -> str:
    job = yaml.safe_load(template("github"))["jobs"]["run-autograding-tests"]
    return str(next(s for s in job["steps"] if s.get("id") == "sandbox")["run"])


@pytest.mark.parametrize("apt_status", [0, 100])
def test_the_github_job_installs_the_sandbox_and_goes_on_where_it_cannot(
    tmp_path: Path, apt_status: int
) -> None:
    from test_export import run_bash

    shims, log = tmp_path / "bin", tmp_path / "calls.log"
    shims.mkdir()
    (shims / "sudo").write_text('#!/bin/sh\nexec "$@"\n')
    (shims / "apt-get").write_text(f'#!/bin/sh\necho "apt-get $*" >> {log}\nexit {apt_status}\n')
    for shim in shims.iterdir():
        shim.chmod(0o755)
    done = run_bash(_sandbox_step(), tmp_path, {"PATH": f"{shims}:/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr  # a runner without it still grades
    assert "install -y -q bubblewrap" in log.read_text()
    failed_notice = "::notice::bubblewrap could not be installed"
    assert (failed_notice in done.stdout) == (apt_status != 0), done.stdout


@pytest.mark.parametrize("ci", ["github", "gitlab"])
def test_the_templates_assignment_grades_a_notebook_that_cannot_say_its_own(
    tmp_path: Path, ci: str
) -> None:
    # r45: a notebook started afresh (no metadata) that defines only `softmax`, a function
    # of several assignments, ended every job with "cannot tell which assignment" (exit 2):
    # no points, and Classroom recorded nothing. The template's ASSIGNMENT now names it.
    import nbformat
    from test_export import run_bash

    if ci == "github":
        env, script = _grade_step()
    else:
        job = yaml.safe_load(template("gitlab"))["grade-notebook"]
        env, script = job["variables"], "\n".join(job["script"])
    assert env["ASSIGNMENT"] == ""
    source = (
        "import numpy as np\ndef softmax(x):\n    e = np.exp(x - np.max(x))\n"
        "    return e / e.sum()\n"
    )
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    nbformat.write(book, tmp_path / env["NOTEBOOK"])
    variables = {**env, "GRADER_COURSE": str(REPO), "GITHUB_OUTPUT": str(tmp_path / "out"),
                 "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}  # fmt: skip
    unnamed = run_bash(script, tmp_path, variables)
    assert unnamed.returncode == 2 and "cannot tell which assignment" in unnamed.stderr
    named = run_bash(script, tmp_path, {**variables, "ASSIGNMENT": "masked_attention"})
    assert named.returncode == 1, named.stderr  # graded: its other functions are missing
    assert "cannot tell" not in named.stderr
    if ci == "github":
        assert "points=" in (tmp_path / "out").read_text()  # Classroom gets its points
    else:
        assert "homework.ipynb — masked_attention: " in named.stdout
