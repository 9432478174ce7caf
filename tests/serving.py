"""Helpers for the service's tests: a class with tokens, a signed-in client, a form's CSRF
token, and a `grader serve` started as a process on a free port."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from starlette.testclient import TestClient

from grader.serve.roster import Student
from grader.serve.store import Store

CLASS = [Student("alice", "Alice Liddell"), Student("bob", "Bob <b>Builder</b>")]


def issue(store: Store) -> dict[str, str]:
    """Tokens for CLASS and an instructor `ada`, by id."""
    issued = store.issue(CLASS, "student") + store.issue([Student("ada", "Ada")], "instructor")
    return {person.id: token for person, token in issued}


def csrf(page: str) -> str:
    """The CSRF token a page's forms carry."""
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, page[:500]
    return found.group(1)


def sign_in(client: TestClient | httpx.Client, token: str) -> str:
    """Sign in with the personal link and its page's button; returns the CSRF token of the
    page it lands on."""
    confirm = client.get(f"/t/{token}")
    assert confirm.status_code == 200, confirm.text[:300]
    data = {"csrf": csrf(confirm.text), "token": token}
    page = client.post("/login", data=data, follow_redirects=True)
    assert page.status_code == 200, page.text[:300]
    return csrf(page.text)


def free_port() -> int:
    """A port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(out: Path, port: int, *extra: str) -> subprocess.Popen[bytes]:
    """`grader serve` on 127.0.0.1:port, once it answers."""
    command = [sys.executable, "-m", "grader", "serve", "--out", str(out), "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--jobs", "1", "--min-interval", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stdout.read().decode() if process.stdout else ""
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return process
        except httpx.TransportError:
            time.sleep(0.1)
    stop(process, signal.SIGKILL)
    raise AssertionError("grader serve did not answer within a minute")


def stop(process: subprocess.Popen[bytes], how: int = signal.SIGTERM) -> int:
    """Signal the server (only the server: the workers must go with it on their own)."""
    if process.poll() is None:
        process.send_signal(how)
    return process.wait(timeout=60)


@contextmanager
def holding_server(answer: bytes | None = None) -> Iterator[int]:
    """A TCP server on a free port of 127.0.0.1 that sends `answer` to each connection and
    keeps it open (None: sends nothing, ever); yields its port."""
    listening = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listening.settimeout(0.1)
        while not stop.is_set():
            try:
                connection, _ = listening.accept()
            except TimeoutError:
                continue
            held.append(connection)
            if answer is not None:
                connection.sendall(answer)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listening.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        listening.close()
