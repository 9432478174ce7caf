"""CI templates and the Gradescope bundle, run end to end the way their hosts would run them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

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


@pytest.mark.slow
def test_github_workflow_runs_end_to_end(tmp_path: Path) -> None:
    workflow = yaml.safe_load(template("github"))
    job = workflow["jobs"]["grade"]
    workspace = tmp_path / "repo"
    workspace.mkdir()
    shutil.copy(BRUNO, workspace / job["env"]["NOTEBOOK"])
    output, summary = tmp_path / "output", tmp_path / "summary.md"
    env = {
        **job["env"],
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    ran = []
    for step in job["steps"]:
        if "run" not in step or step.get("id") == "install":
            continue  # `uses:` actions and the pip install need the hosted runner
        result = run_bash(step["run"], workspace, env)
        ran.append(step["id"])
        assert result.returncode == 1  # the notebook has failing functions: the check is red
        assert any(line.startswith("::error file=") for line in result.stdout.splitlines())
    assert ran == ["grade"]
    assert "points=5/10" in output.read_text()
    assert "| ❌ | `scaled_dot_product_self_attention` | failed |" in summary.read_text()


@pytest.mark.slow
def test_gitlab_job_writes_a_junit_report(tmp_path: Path) -> None:
    job = yaml.safe_load(template("gitlab"))["grade-notebook"]
    shutil.copy(BRUNO, tmp_path / job["variables"]["NOTEBOOK"])
    result = run_bash("\n".join(job["script"]), tmp_path, job["variables"])
    assert result.returncode == 1  # failing functions make the job red, as on GitHub
    assert "5 / 10 points" in result.stdout
    report = tmp_path / job["artifacts"]["reports"]["junit"]
    root = ET.parse(report).getroot()
    assert {c.get("name") for c in root.iter("testcase")} >= {"softmax", "self_attention"}


def test_template_command_prints_the_files() -> None:
    result = CliRunner().invoke(main, ["template", "github"])
    assert result.exit_code == 0 and result.output == template("github")
    assert CliRunner().invoke(main, ["template", "travis"]).exit_code == 2


def test_gradescope_bundle_carries_the_data_files(tmp_path: Path) -> None:
    from grader.course.config import load_config

    course = tmp_path / "course"
    shutil.copytree(REPO / "solutions", course / "solutions")
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
