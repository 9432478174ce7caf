"""The sandbox's file system: a fresh /tmp that still holds the Python the grader runs on,
when that Python is installed under /tmp (as a CI job's checkout may be)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from grader import isolation


def _look_around(prefix: Path, secret: Path, via_worker: bool) -> dict[str, object]:
    """In a forked process: enter the sandbox as `grader` would, then report what is there."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - reported through the pipe
        try:
            os.close(read_fd)
            sys.prefix = str(prefix)  # as if the interpreter were installed there
            if via_worker:
                isolation.enter_worker((), f"test-{os.getpid()}")
                isolation.before_fork()
                if os.fork():
                    os._exit(0)  # the worker; its child goes on, like a student's
                isolation.enter_child()
            else:
                isolation.enter(())
            seen: dict[str, object] = {
                "module": (prefix / "lib" / "marker.py").read_text(),
                "secret": secret.exists(),
            }
            try:
                (prefix / "lib" / "planted.py").write_text("x = 1\n")
                seen["writable"] = True
            except OSError:
                seen["writable"] = False
            os.write(write_fd, json.dumps(seen).encode())
        except BaseException as exc:
            os.write(write_fd, json.dumps({"error": repr(exc)}).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks = []
    while chunk := os.read(read_fd, 4096):
        chunks.append(chunk)
    os.close(read_fd)
    os.waitpid(pid, 0)
    isolation.remove_worker_cgroups("test")
    answer: dict[str, object] = json.loads(b"".join(chunks) or b"{}")
    return answer


@pytest.mark.parametrize("via_worker", [False, True], ids=["check", "batch"])
def test_a_python_installed_under_tmp_stays_importable(tmp_path: Path, via_worker: bool) -> None:
    assert isolation.available(), "the sandbox is needed here: run as root (CI does)"
    assert str(tmp_path.resolve()).startswith("/tmp/")
    prefix = tmp_path / "venv"
    (prefix / "lib").mkdir(parents=True)
    (prefix / "lib" / "marker.py").write_text("VALUE = 42\n")
    secret = tmp_path / "left-by-someone.txt"
    secret.write_text("not for students")
    seen = _look_around(prefix, secret, via_worker)
    assert seen == {"module": "VALUE = 42\n", "secret": False, "writable": False}
    assert not (prefix / "lib" / "planted.py").exists()
