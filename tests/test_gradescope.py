"""The Gradescope autograder, run the way Gradescope runs it.

A folder stands for the autograder machine and is bound at `/autograder` in a bubblewrap
sandbox that sees the system read-only and nothing else of this machine. As Gradescope does:
the zip is unpacked into `/autograder/source`, `setup.sh` runs there once (it installs the
grader from the zip into `/autograder/venv`), `run_autograder` is copied to
`/autograder/run_autograder`; then for each submission `/autograder/submission` holds the
student's files and `/autograder/run_autograder` runs in `/autograder`, leaving
`/autograder/results/results.json`. As root the sandbox is made directly; as an ordinary user
in a user namespace where that user is root, as Gradescope's container runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from grader.author.export import export_gradescope
from grader.course.config import Config, load_config

from conftest import REPO, repo_config_raw

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

DEMO = REPO / "demo" / "submissions"
PUBLIC = 2  # cases of each target that students see before the results are published


def machine_run(machine: Path, script: str, cwd: str) -> subprocess.CompletedProcess[str]:
    """`script` in bash on the autograder machine: `machine` at /autograder, the system's
    /usr, /etc and /opt read-only (Python, pip's configuration and local package index)."""
    as_root = [] if os.geteuid() == 0 else ["--unshare-user", "--uid", "0", "--gid", "0"]
    command = [
        "bwrap", *as_root, "--die-with-parent", "--unshare-pid",
        "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc", "--ro-bind", "/opt", "/opt",
        "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
        "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/root",
        "--bind", str(machine), "/autograder", "--chdir", cwd,
        "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
        "--setenv", "HOME", "/root", "--setenv", "PIP_NO_CACHE_DIR", "1",
        "bash", "-c", script,
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=500)


@pytest.fixture(scope="module")
def course() -> Iterator[Path]:
    """The bundled course with only the first PUBLIC cases of each target public."""
    folder = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="grader-gs-course-"))
    folder.chmod(0o755)
    raw = repo_config_raw()
    for target in raw["assignments"]["self_attention"]["targets"].values():
        target["public_cases"] = PUBLIC
    # This machine cannot make the sandbox inside its own bwrap, as many Gradescope images
    # cannot: the course grades with process limits alone there, as it must say to do so
    # (the export's default is `required`: test_unsandboxed_machine_grades_nobody).
    raw["sandbox"] = "auto"
    (folder / "config.yaml").write_text(json.dumps(raw))
    (folder / "config.yaml").chmod(0o644)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def build_machine(config: Config, assignment: str, root: Path) -> Path:
    """An autograder machine at root/autograder, built from the exported zip as Gradescope
    builds its image."""
    zipped = export_gradescope(config, assignment, root / "upload" / "autograder.zip")
    machine = root / "autograder"
    machine.mkdir()
    subprocess.run(["unzip", "-q", str(zipped), "-d", str(machine / "source")], check=True)
    built = machine_run(
        machine,
        "bash ./setup.sh && cp /autograder/source/run_autograder /autograder/run_autograder",
        "/autograder/source",
    )
    assert built.returncode == 0, built.stderr[-3000:]
    return machine


@pytest.fixture(scope="module")
def machine(course: Path) -> Iterator[Path]:
    """The machine for the course with hidden cases."""
    root = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="grader-gs-"))
    root.chmod(0o755)
    try:
        yield build_machine(load_config(course / "config.yaml"), "self_attention", root)
    finally:
        shutil.rmtree(root)


def submit(machine: Path, files: dict[str, Path | str]) -> dict[str, Any]:
    """One submission: the files in /autograder/submission, run_autograder, results.json."""
    for folder in ("submission", "results"):
        shutil.rmtree(machine / folder, ignore_errors=True)
        (machine / folder).mkdir()
    for name, content in files.items():
        target = machine / "submission" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            shutil.copy(content, target)
        else:
            target.write_text(content)
    ran = machine_run(machine, "/autograder/run_autograder", "/autograder")
    assert ran.returncode == 0, ran.stderr
    results: dict[str, Any] = json.loads((machine / "results" / "results.json").read_text())
    return results


def checkout_grade(course: Path, notebook: Path) -> dict[str, Any]:
    """What `grader check` in this checkout says of the notebook, against the same course."""
    done = subprocess.run(
        [sys.executable, "-m", "grader", "check", str(notebook), "--course", str(course),
         "--assignment", "self_attention", "--format", "json"],
        capture_output=True, text=True, check=False, cwd=course,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_the_zip_is_laid_out_for_gradescope(machine: Path) -> None:
    source = machine / "source"
    assert (source / "setup.sh").is_file() and os.access(source / "run_autograder", os.X_OK)
    assert (source / "config.yaml").is_file() and (source / "solutions").is_dir()
    assert not (source / "source").exists()
    assert (machine / "venv" / "bin" / "grader").is_file()  # setup.sh installed the grader


@pytest.mark.parametrize("student", ["bruno", "ada", "emil"])
def test_results_match_grader_check_with_hidden_cases_after_published(
    machine: Path, course: Path, student: str
) -> None:
    notebook = DEMO / f"{student}.ipynb"
    results = submit(machine, {f"my {student}.ipynb": notebook})
    expected = checkout_grade(course, notebook)
    assert results["score"] == pytest.approx(expected["score"])
    tests = results["tests"]
    assert sum(t["score"] for t in tests) == pytest.approx(expected["score"])
    assert sum(t["max_score"] for t in tests) == pytest.approx(expected["max_score"])
    for target in expected["targets"]:
        public, hidden = (
            next(t for t in tests if t["name"] == f"{target['name']} ({kind} cases)")
            for kind in ("public", "hidden")
        )
        assert public["visibility"] == "visible"
        assert hidden["visibility"] == "after_published"
        assert public["score"] + hidden["score"] == pytest.approx(target["score"])
        assert public["output"].startswith("public cases: ")
    assert {t["visibility"] for t in tests} == {"visible", "after_published"}


def test_a_submission_without_a_notebook_scores_zero_with_a_reason(machine: Path) -> None:
    results = submit(machine, {"notes.txt": "I forgot"})
    assert results == {
        "score": 0,
        "output": "No .ipynb file was found in the submission.",
        "tests": [],
    }
    results = submit(machine, {"broken.ipynb": "{oops"})
    assert results["score"] == 0 and "invalid JSON" in str(results["output"])


def test_the_zip_keeps_run_autograder_executable(machine: Path) -> None:
    zipped = next((machine.parent / "upload").glob("*.zip"))
    with zipfile.ZipFile(zipped) as archive:
        names = archive.namelist()
        assert archive.getinfo("run_autograder").external_attr >> 16 & 0o111
        assert archive.getinfo("setup.sh").external_attr >> 16 & 0o111
    assert not [n for n in names if n.startswith("source/")]
    assert "package/pyproject.toml" in names and "package/grader/engine.py" in names


def test_the_students_file_is_graded_whatever_its_folders_are_named(
    machine: Path, course: Path
) -> None:
    """A folder named with a line break made a line of `find`'s list that named the bundled
    solution, and `sort | head` graded that: full marks for a half-right notebook. A link
    to the solution did the same."""
    solution = next((machine / "source" / "solutions").glob("*.ipynb"))
    inside = Path("/autograder/source/solutions") / solution.name  # as the machine sees it
    forged = f"x\n/{str(inside).lstrip('/')}"
    half_right = submit(machine, {forged: DEMO / "bruno.ipynb"})
    expected = checkout_grade(course, DEMO / "bruno.ipynb")["score"]
    assert expected < 10 and half_right["score"] == pytest.approx(expected)
    shutil.rmtree(machine / "submission")
    (machine / "submission").mkdir()
    (machine / "submission" / "homework.ipynb").symlink_to(inside)
    ran = machine_run(machine, "/autograder/run_autograder", "/autograder")
    assert ran.returncode == 0, ran.stderr
    results = json.loads((machine / "results" / "results.json").read_text())
    assert results["score"] == 0 and "No .ipynb file" in results["output"]


def test_the_script_quotes_the_assignment_id(course: Path) -> None:
    """An assignment id is any YAML key; the script must not run it."""
    root = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="grader-gs-id-"))
    root.chmod(0o755)
    try:
        raw = repo_config_raw()
        weird = 'it\'s "$(touch pwned)"'
        raw["assignments"] = {weird: raw["assignments"]["self_attention"]}
        raw["sandbox"] = "auto"  # as the course fixture's: this machine cannot nest it
        (root / "course").mkdir()
        (root / "course" / "config.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
        machine = build_machine(load_config(root / "course" / "config.yaml"), weird, root)
        results = submit(machine, {"homework.ipynb": DEMO / "bruno.ipynb"})
        assert not list(root.rglob("pwned"))
        assert results["score"] == checkout_grade(course, DEMO / "bruno.ipynb")["score"]
    finally:
        shutil.rmtree(root)


def test_unsandboxed_machine_grades_nobody_when_the_course_requires_the_sandbox(
    machine: Path,
) -> None:
    config = machine / "source" / "config.yaml"
    kept = config.read_text()
    raw = yaml.safe_load(kept)
    raw["sandbox"] = "required"  # what export-gradescope writes when the course says nothing
    config.write_text(yaml.safe_dump(raw))
    try:
        results = submit(machine, {"bruno.ipynb": DEMO / "bruno.ipynb"})
    finally:
        config.write_text(kept)
    assert results["score"] == 0 and results["tests"] == []
    assert "sandbox" in results["output"], results["output"]
    # and the same machine grades as before once the course allows it
    assert submit(machine, {"bruno.ipynb": DEMO / "bruno.ipynb"})["score"] > 0


def test_setup_sh_updates_empty_package_lists_before_it_gives_up_on_bubblewrap(
    tmp_path: Path,
) -> None:
    # Without `apt-get update`, an image with empty package lists never got bubblewrap, in
    # silence: under `sandbox: required` every submission then scored 0.
    script = (REPO / "grader" / "templates" / "gradescope" / "setup.sh").read_text()
    block = script[script.index("if ! command -v bwrap") :]
    tools = tmp_path / "bin"
    tools.mkdir()
    log = tmp_path / "apt.log"
    fake = (  # an apt-get that can install only once its lists were updated
        "#!/bin/sh\n"
        f'echo "$*" >> {log}\n'
        'if [ "$1" = update ]; then touch ' + str(tmp_path / "lists") + "; exit 0; fi\n"
        f"[ -e {tmp_path / 'lists'} ] || exit 100\n"
    )
    (tools / "apt-get").write_text(fake)
    (tools / "apt-get").chmod(0o755)
    (tools / "touch").symlink_to(shutil.which("touch") or "/usr/bin/touch")
    done = subprocess.run(  # a PATH without bwrap, as on such an image
        ["/bin/bash", "-c", block], env={"PATH": str(tools)}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines() == [
        "install -y bubblewrap",
        "update",
        "install -y bubblewrap",
    ]
    assert done.stderr == ""
