"""A worker started as the sandbox starts it (`python -I -S`, the package and the site folders
on its path) runs a notebook's job without the modules only the grader's side or a worker
without the sandbox uses: paths (pathlib, with urllib.parse), the magics' rewriting (the
grader neutralises the cells before it sends them), and the temporary folder and copies of
a child without the sandbox (tempfile, shutil, with bz2 and lzma). Each one is CPU of the
worker's start, which `grader check` waits for on a machine of few cores."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

from grader.course.cases import build_cases
from grader.course.config import load_config
from grader.course.notebook import load_submission
from grader.run.bwrap import BOOT, _package_dirs
from grader.run.pipes import encode_message, read_message

from conftest import REPO

NOT_IN_A_SANDBOXED_WORKER = (
    "pathlib",
    "urllib.parse",
    "shlex",
    "grader.course.ipython",
    "tempfile",
    "shutil",
    "bz2",
    "lzma",
)


def _modules_of_a_worker(job: bytes) -> list[str]:
    """The modules of NOT_IN_A_SANDBOXED_WORKER that a worker's interpreter holds once it
    has imported what it starts and runs a job with, and unpickled the job (cells, plan)."""
    script = BOOT.replace(
        "from grader.run.worker import main; main()",
        "import json, pickle\n"
        "import grader.run.worker, grader.run.warmup, grader.run.sandbox, grader.run.child\n"
        "cells, plan = pickle.loads(sys.stdin.buffer.read())\n"
        "assert cells[0].source and plan[0][1][0].args\n"
        f"print(json.dumps(sorted(m for m in {NOT_IN_A_SANDBOXED_WORKER!r}"
        " if m in sys.modules)))",
    )
    assert script != BOOT
    paths = [str(REPO), *_package_dirs()]
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script, *paths],
        cwd="/",
        input=job,
        capture_output=True,
        check=True,
    )
    found: list[str] = json.loads(done.stdout)
    return found


def test_a_sandboxed_workers_job_loads_no_paths_magics_or_temporary_folders() -> None:
    assignment = load_config(REPO / "config.yaml").assignment("self_attention")
    cells = load_submission(REPO / "demo" / "submissions" / "bruno.ipynb").cells
    job = pickle.dumps((list(cells), build_cases(assignment).plan(assignment)))
    assert _modules_of_a_worker(job) == []


def test_a_worker_for_one_notebook_has_numpys_generator_loaded_when_ready() -> None:
    """The child seeds numpy.random before the notebook's first cell: a worker started
    without a warm-up (`grader check`'s) loads it before it says ready, not its child after
    the fork, where the import would be part of the notebook's run."""
    worker = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", BOOT, str(REPO), *_package_dirs()],
        cwd="/",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert worker.stdin and worker.stdout
    try:
        plans = pickle.dumps([])
        init = {"kind": "init", "preload": [], "size": len(plans), "warm": False}
        worker.stdin.write(encode_message(init) + plans)
        worker.stdin.flush()
        assert read_message(worker.stdout.fileno())["kind"] == "ready"
        with open(f"/proc/{worker.pid}/maps") as maps:
            loaded = maps.read()
        assert "numpy/random/mtrand" in loaded
    finally:
        worker.stdin.close()
        worker.wait(timeout=30)
