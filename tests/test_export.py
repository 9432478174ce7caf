"""CI templates and the Gradescope bundle, run end to end the way their hosts would run them."""

from __future__ import annotations

import json
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
    bundle = export_gradescope(config, assignment, tmp_path / "autograder.zip")
    root = tmp_path / "autograder"
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root)
    (root / "submission").mkdir()
    return root


def run_autograder(root: Path) -> dict[str, object]:
    result = run_bash(f"bash {root / 'run_autograder'}", root, {"AUTOGRADER_ROOT": str(root)})
    assert result.returncode == 0, result.stderr
    data: dict[str, object] = json.loads((root / "results" / "results.json").read_text())
    return data


@pytest.mark.slow
def test_gradescope_bundle_grades_a_submission(config: Config, tmp_path: Path) -> None:
    root = unpack(config, tmp_path)
    shutil.copy(BRUNO, root / "submission" / "my_homework.ipynb")
    results = run_autograder(root)
    assert results["score"] == 5
    tests = {t["name"]: t for t in results["tests"]}  # type: ignore[attr-defined]
    assert tests["scaled_dot_product_self_attention"]["status"] == "failed"
    assert "scale_discarded" in tests["scaled_dot_product_self_attention"]["output"]
    bundled = yaml.safe_load((root / "source" / "config.yaml").read_text())
    assert list(bundled["assignments"]) == ["self_attention"]
    assert (root / "source" / "grader" / "engine.py").is_file()
    with zipfile.ZipFile(tmp_path / "autograder.zip") as archive:  # unzip keeps these modes
        assert archive.getinfo("run_autograder").external_attr >> 16 & 0o111
        assert archive.getinfo("setup.sh").external_attr >> 16 & 0o111


@pytest.mark.slow
def test_gradescope_bundle_reports_a_missing_or_broken_notebook(
    config: Config, tmp_path: Path
) -> None:
    root = unpack(config, tmp_path)
    results = run_autograder(root)
    assert results == {
        "score": 0,
        "output": "No .ipynb file was found in the submission.",
        "tests": [],
    }
    (root / "submission" / "broken.ipynb").write_text("{oops")
    results = run_autograder(root)
    assert results["score"] == 0 and "invalid JSON" in str(results["output"])


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
    root = unpack(load_config(course / "config.yaml"), tmp_path)
    assert (root / "source" / "data" / "x.txt").read_text() == "numbers"
    bundled = load_config(root / "source" / "config.yaml").assignment("self_attention")
    assert [f.name for f in bundled.files] == ["data/x.txt"]
