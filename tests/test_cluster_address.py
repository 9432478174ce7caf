"""`--cluster ADDRESS` where no Dask scheduler answers but something else does (a web
server, a port that takes connections and says nothing): one line, exit 2, in bounded time,
never a traceback nor a command that waits for ever; `grader serve --cluster` at an address
it cannot use says so on the terminal, not only on the class page."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from grader.batch import cluster as cluster_module
from grader.cli import main
from grader.course.config import Config
from grader.engine import require
from grader.serve.grading import Grading
from grader.serve.store import Store

from conftest import REPO
from serving import free_port, holding_server

DEMO = REPO / "demo" / "submissions"
WEB_ANSWER = b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\n\r\nInvalid HTTP request.\n"


def _serve(answer: bytes | None) -> Iterator[str]:
    """A server that sends `answer` to each connection and keeps it open (None: sends
    nothing); yields its tcp:// address."""
    with holding_server(answer) as port:
        yield f"tcp://127.0.0.1:{port}"


@pytest.fixture
def silent() -> Iterator[str]:
    yield from _serve(None)


@pytest.fixture
def web() -> Iterator[str]:
    yield from _serve(WEB_ANSWER * 4)


@pytest.mark.parametrize("kind", ["silent", "web"])
def test_an_address_where_no_scheduler_answers_is_one_line_in_bounded_time(
    kind: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    address = request.getfixturevalue(kind)
    monkeypatch.setattr(cluster_module, "CONNECT_SECONDS", 1.0)
    monkeypatch.setattr(cluster_module, "ANSWER_SECONDS", 2.0, raising=False)
    args = ["grade", str(DEMO), "--course", str(REPO), "--cluster", address]
    outcome: list[Result] = []
    worker = threading.Thread(target=lambda: outcome.append(CliRunner().invoke(main, args)))
    began = time.monotonic()
    worker.start()
    worker.join(30)  # the command's own bound is 2 s here: it must not wait for ever
    assert not worker.is_alive(), f"grade --cluster {address} still waits after 30 s"
    result = outcome[0]
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    assert errors[0].startswith(f"Error: --cluster {address}: "), errors[0]
    assert time.monotonic() - began < 30


@pytest.mark.slow
def test_a_service_whose_cluster_cannot_be_reached_says_so_on_the_terminal(
    tmp_path: Path, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster_module, "CONNECT_SECONDS", 1.0)
    address = f"tcp://127.0.0.1:{free_port()}"
    store = Store(tmp_path / "out")
    try:
        grading = Grading(config, store, require("auto"), jobs=1, cluster=address)
        said: list[str] = []
        grading.announce = said.append
        grading.start()
        assert grading.ready.wait(60)
        grading.stop(0)
        assert grading.failed.startswith("the grading workers could not start: --cluster")
        (line,) = said
        assert line.startswith(f"Error: the grading workers could not start: --cluster {address}")
        assert "uploads wait in the queue" in line and "\n" not in line
    finally:
        store.close()


def test_a_tls_address_without_certificates_says_which_settings_give_them(
    silent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # r46: docs/cluster.md advises tls://; without the client's certificates the command
    # said "what answers there is not a Dask scheduler (TypeError: TLS expects a ssl_context".
    monkeypatch.setattr(cluster_module, "CONNECT_SECONDS", 1.0)
    monkeypatch.setattr(cluster_module, "ANSWER_SECONDS", 5.0, raising=False)
    for name in ("CA_FILE", "CLIENT__CERT", "CLIENT__KEY"):
        monkeypatch.delenv(f"DASK_DISTRIBUTED__COMM__TLS__{name}", raising=False)
    address = silent.replace("tcp://", "tls://")
    args = ["grade", str(DEMO), "--course", str(REPO), "--cluster", address]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1, errors
    assert f"--cluster {address}: a tls:// scheduler needs this client's certificates" in errors[0]
    assert "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT" in errors[0]
