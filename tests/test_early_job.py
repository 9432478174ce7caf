"""The next identical `grader check` sends its notebook to the worker the head start started,
before the grader has read its course (issue 19): the run is taken only when its job is byte
for byte the one the engine would send, and a notebook changed in between is run again from
what the engine reads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

# Run as `grader check` runs (grader/__main__.py), and say how many jobs the head start sent
# and how many the engine's workers wrote themselves (the course's code is cached by then).
SCRIPT = """
import json, sys
from pathlib import Path
from grader.run import head_start, workers
argv = sys.argv[1:]
head_start.start(argv)
change = Path(argv[1] + ".then")
if change.exists():  # the notebook changes after its job was sent
    head_start.send_job(argv)
    Path(argv[1]).write_bytes(change.read_bytes())
else:
    head_start.send_job(argv)
sent = len(head_start._JOBS)
written = []
real = workers._write_all
def counted(fd, data, deadline):
    if data:
        written.append(len(data))
    return real(fd, data, deadline)
workers._write_all = counted
from grader.cli import main
out = sys.stdout
sys.stdout = open("report.json", "w")
try:
    main(argv)
except SystemExit as done:
    code = done.code
sys.stdout.close()
out.write(json.dumps([sent, len(written), code]))
"""


def check(folder: Path, cache: Path, notebook: Path, *more: str) -> tuple[list[int], dict]:
    env = {**os.environ, "GRADER_CACHE_DIR": str(cache)}
    argv = ["check", str(notebook), "--course", str(REPO), "--format", "json", *more]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *argv], cwd=folder, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((folder / "report.json").read_text())
    report.pop("seconds", None)
    return json.loads(done.stdout), report


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shutil.copy(REPO / "demo" / "submissions" / "bruno.ipynb", tmp_path / "bruno.ipynb")
    return tmp_path


@pytest.mark.sandbox
def test_the_next_identical_check_runs_its_notebook_on_the_early_worker(folder: Path) -> None:
    cache, notebook = folder / "cache", folder / "bruno.ipynb"
    (sent, _, code), first = check(folder, cache, notebook)
    assert sent == 0 and code == 1  # bruno fails some targets
    [plan] = [p for p in cache.glob("head-start-*.json")]
    [asked] = json.loads(plan.read_text())
    assert asked["notebook_at"] == 1 and asked["job"]["plan"] == 0  # the cells alone
    (sent, written, code), again = check(folder, cache, notebook)
    assert (sent, written, code) == (1, 0, 1), "the engine sent the notebook's job again"
    assert again == first


@pytest.mark.sandbox
def test_a_notebook_changed_after_its_job_was_sent_is_graded_as_it_now_is(folder: Path) -> None:
    cache, notebook = folder / "cache", folder / "bruno.ipynb"
    other = REPO / "demo" / "submissions" / "ada.ipynb"
    check(folder, cache, notebook)  # the plan, with its job
    _, wanted = check(folder, folder / "another-cache", other)
    (notebook.parent / "bruno.ipynb.then").write_bytes(other.read_bytes())
    (sent, written, _), report = check(folder, cache, notebook)
    assert sent == 1 and written >= 1, "the stale job's run was taken"
    assert {k: v for k, v in report.items() if k != "submission"} == {
        k: v for k, v in wanted.items() if k != "submission"
    }


@pytest.mark.sandbox
def test_no_early_job_for_a_students_own_inputs(folder: Path) -> None:
    cache, notebook = folder / "cache", folder / "bruno.ipynb"
    check(folder, cache, notebook)
    check(folder, cache, notebook)
    (sent, _, _), _ = check(folder, cache, notebook, "--student", "s1")
    assert sent == 0
