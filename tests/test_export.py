"""CI templates and the Gradescope bundle, run end to end the way their hosts would run them."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from grader.author.export import export_gradescope, template
from grader.cli import main
from grader.course.config import Config

from conftest import REPO

BRUNO = REPO / "demo" / "submissions" / "bruno.ipynb"
BIN = str(Path(sys.executable).parent)


def run_bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", **env}
    return subprocess.run(
        ["bash", "-e", "-c", script], cwd=cwd, env=full_env, capture_output=True, text=True
    )


def unpack(config: Config, tmp_path: Path, assignment: str = "self_attention") -> Path:
    """The zip unpacked as Gradescope unpacks it into /autograder/source (the machine itself
    is tests/test_gradescope.py)."""
    bundle = export_gradescope(config, assignment, tmp_path / "autograder.zip")
    source = tmp_path / "source"
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(source)
    return source


def step_outputs(path: Path) -> dict[str, str]:
    """name=value lines a step wrote to $GITHUB_OUTPUT."""
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def classroom_points(reporter: dict[str, Any], outputs: dict[str, dict[str, str]]) -> str:
    """What GitHub Classroom's autograding reporter writes on the check run, read the way it
    reads it: for each runner in `runners`, the env var <RUNNER>_RESULTS (its value the
    step output the workflow gives it), base64 JSON; the tests' scores add up, over the sum
    of the runners' `max_score`."""
    total = maximum = 0.0
    for runner in reporter["with"]["runners"].split(","):
        value = reporter["env"][f"{runner.strip().upper()}_RESULTS"]
        match = re.fullmatch(r"\$\{\{ steps\.([\w-]+)\.outputs\.(\w+) \}\}", value)
        assert match, value
        results = json.loads(base64.b64decode(outputs[match[1]][match[2]]).decode("utf-8"))
        assert results["version"] == 1 and results["status"] in ("pass", "fail", "error")
        maximum += results["max_score"]
        total += sum(test["score"] for test in results["tests"])
    return f"Points {total:g}/{maximum:g}"


@pytest.mark.slow
def test_github_workflow_reports_points_to_classroom(tmp_path: Path) -> None:
    workflow = yaml.safe_load(template("github"))
    job = workflow["jobs"]["run-autograding-tests"]
    assert workflow["name"] == job["name"] == "Autograding Tests"  # the check run it updates
    assert workflow["permissions"]["checks"] == "write"
    workspace = tmp_path / "repo"
    workspace.mkdir()
    shutil.copy(BRUNO, workspace / job["env"]["NOTEBOOK"])
    summary = tmp_path / "summary.md"
    env = {
        **job["env"],
        "GRADER_COURSE": str(REPO),  # what the workflow checks out into .course
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    outputs: dict[str, dict[str, str]] = {}
    reporters = []
    for step in job["steps"]:
        if "classroom-resources/autograding-grading-reporter" in step.get("uses", ""):
            reporters.append(step)
        if "run" not in step or step.get("id") in ("install", "sandbox"):
            continue  # `uses:` actions, the pip and apt installs need the hosted runner
        output = tmp_path / f"output-{step['id']}"
        output.touch()
        result = run_bash(step["run"], workspace, {**env, "GITHUB_OUTPUT": str(output)})
        assert result.returncode == 1  # the notebook has failing functions: the check is red
        assert any(line.startswith("::error file=") for line in result.stdout.splitlines())
        outputs[step["id"]] = step_outputs(output)
    assert list(outputs) == ["grade"]
    expected = json.loads((workspace / "grade.json").read_text())
    assert outputs["grade"]["points"] == f"{expected['score']:g}/{expected['max_score']:g}"
    assert len(reporters) == 1
    points = classroom_points(reporters[0], outputs)
    assert points == f"Points {expected['score']:g}/{expected['max_score']:g}"
    assert "| ❌ | `scaled_dot_product_self_attention` | failed |" in summary.read_text()


@pytest.mark.slow
def test_gitlab_job_writes_a_junit_report(tmp_path: Path) -> None:
    job = yaml.safe_load(template("gitlab"))["grade-notebook"]
    shutil.copy(BRUNO, tmp_path / job["variables"]["NOTEBOOK"])
    env = {**job["variables"], "GRADER_COURSE": str(REPO)}  # what before_script clones
    result = run_bash("\n".join(job["script"]), tmp_path, env)
    assert result.returncode == 1  # failing functions make the job red, as on GitHub
    assert "5 / 10 points" in result.stdout
    report = tmp_path / job["artifacts"]["reports"]["junit"]
    root = ET.parse(report).getroot()
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert set(cases) >= {"softmax", "self_attention"}
    failed = cases["scaled_dot_product_self_attention"]
    assert failed.find("failure") is not None and cases["softmax"].find("failure") is None
    assert "$GRADER_COURSE" in " ".join(job["before_script"])


def test_template_command_prints_the_files() -> None:
    result = CliRunner().invoke(main, ["template", "github"])
    assert result.exit_code == 0 and result.output == template("github")
    assert CliRunner().invoke(main, ["template", "travis"]).exit_code == 2


def test_gradescope_bundle_carries_the_data_files(tmp_path: Path) -> None:
    from grader.course.config import load_config

    course = tmp_path / "course"
    shutil.copytree(REPO / "solutions", course / "solutions")
    shutil.copy(REPO / "cases.py", course / "cases.py")
    (course / "data").mkdir()
    (course / "data" / "x.txt").write_text("numbers")
    raw = yaml.safe_load((REPO / "config.yaml").read_text())
    raw["assignments"]["self_attention"]["files"] = ["data/x.txt"]
    raw["assignments"]["self_attention"].pop("exercise")
    (course / "config.yaml").write_text(yaml.safe_dump(raw))
    source = unpack(load_config(course / "config.yaml"), tmp_path)
    assert (source / "data" / "x.txt").read_text() == "numbers"
    bundled = load_config(source / "config.yaml").assignment("self_attention")
    assert [f.name for f in bundled.files] == ["data/x.txt"]


def test_the_autograder_grades_only_in_the_sandbox_unless_the_course_says(
    tmp_path: Path,
) -> None:
    # The bundled course says no `sandbox:`: the zip's config asks for it, and a note says so.
    out = tmp_path / "a.zip"
    result = CliRunner().invoke(
        main, ["export-gradescope", "--assignment", "self_attention", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "note: the autograder grades only inside the sandbox (`sandbox: required`)" in (
        result.stderr
    )
    with zipfile.ZipFile(out) as archive:
        assert yaml.safe_load(archive.read("config.yaml"))["sandbox"] == "required"
    # A course that chose `auto` keeps it, and is not told.
    course = tmp_path / "course"
    shutil.copytree(REPO / "solutions", course / "solutions")
    shutil.copy(REPO / "cases.py", course / "cases.py")
    raw = yaml.safe_load((REPO / "config.yaml").read_text())
    raw["sandbox"] = "auto"
    for spec in raw["assignments"].values():
        spec.pop("exercise", None)
    (course / "config.yaml").write_text(yaml.safe_dump(raw))
    chosen = CliRunner().invoke(
        main,
        ["export-gradescope", "--course", str(course), "--assignment", "self_attention",
         "--out", str(tmp_path / "b.zip")],
    )  # fmt: skip
    assert chosen.exit_code == 0, chosen.output
    assert "grades only inside the sandbox" not in chosen.stderr
    with zipfile.ZipFile(tmp_path / "b.zip") as archive:
        assert yaml.safe_load(archive.read("config.yaml"))["sandbox"] == "auto"


def test_the_autograder_says_gradescope_charges_lateness_not_the_config(tmp_path: Path) -> None:
    # `grader check` on Gradescope charges no lateness: the config's `due:` and `late:` were
    # carried into the zip as if they counted, and nothing said they did not.
    course = tmp_path / "course"
    shutil.copytree(REPO / "solutions", course / "solutions")
    shutil.copy(REPO / "cases.py", course / "cases.py")
    raw = yaml.safe_load((REPO / "config.yaml").read_text())
    raw["time_zone"] = "Europe/Berlin"
    raw["assignments"]["self_attention"]["due"] = "2026-12-01T23:59:00+01:00"
    raw["assignments"]["self_attention"]["late"] = {"percent": 10, "per": "day"}
    for spec in raw["assignments"].values():
        spec.pop("exercise", None)
    (course / "config.yaml").write_text(yaml.safe_dump(raw))

    def export(assignment: str, out: Path) -> str:
        result = CliRunner().invoke(
            main,
            ["export-gradescope", "--course", str(course), "--assignment", assignment,
             "--out", str(out)],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        return result.stderr

    said = export("self_attention", tmp_path / "late.zip")
    assert "note: the assignment's `due:` and `late:` are not in the autograder" in said
    with zipfile.ZipFile(tmp_path / "late.zip") as archive:
        bundled = yaml.safe_load(archive.read("config.yaml"))["assignments"]["self_attention"]
    assert "due" not in bundled and "late" not in bundled
    assert "`due:`" not in export("masked_attention", tmp_path / "other.zip")
