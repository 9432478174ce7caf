"""A worker imports only what it runs notebooks with: the cases it is sent unpickle without
the config's machinery (the config, its schema, the declared inputs), the code cells come
without the report's types, and the wire's digest without OpenSSL; together some 35 ms of
every worker's start, which `grader check` waits for."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO

NOT_IN_A_WORKER = (
    "grader.course.config",
    "grader.course.declared",
    "grader.course.inputs",
    "grader.course.schema",
    "grader.judge",
    "grader.report",  # the report's types: judging's, not the worker's
    "hashlib",  # OpenSSL, loaded for nothing: the wire's digest is blake2b
    "yaml",
    "click",
)


def test_a_worker_and_the_cases_it_is_sent_import_none_of_the_config() -> None:
    script = (
        "import json, pickle, sys\n"
        "import grader.run.worker, grader.run.warmup, grader.run.child, grader.run.sandbox\n"
        "plan = pickle.loads(sys.stdin.buffer.read())\n"
        "assert plan[0][1][0].args\n"
        f"print(json.dumps(sorted(m for m in {NOT_IN_A_WORKER!r} if m in sys.modules)))"
    )
    sent = subprocess.run(
        [
            sys.executable,
            "-c",
            "import pickle, sys; from pathlib import Path\n"
            "from grader.course.config import load_config\n"
            "from grader.course.cases import build_cases\n"
            "a = load_config(Path('config.yaml')).assignment('self_attention')\n"
            "sys.stdout.buffer.write(pickle.dumps(build_cases(a).plan(a)))",
        ],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, input=sent, capture_output=True, check=True
    )
    assert json.loads(done.stdout) == []
