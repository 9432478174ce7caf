"""An LTI launch whose platform does not answer for its keys (jwks_url) is refused with a
page within a bounded time: it never holds a thread of the service for ever (the threads the
uploads are checked and stored on are the same, and few)."""

from __future__ import annotations

import html
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from test_serve_lti import Served

import grader.serve.lti as lti_module
from grader.course.config import load_config

from serving import holding_server


@pytest.fixture
def silent_url() -> Iterator[str]:
    """An http:// URL whose server takes the connection and never answers."""
    with holding_server() as port:
        yield f"http://127.0.0.1:{port}/jwks"


def test_a_platform_that_never_answers_for_its_keys_is_a_refusal_in_bounded_time(
    tmp_path: Path, silent_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lti_module, "KEYS_SECONDS", 1.0, raising=False)
    served = Served(tmp_path)
    try:
        folder = tmp_path / "course"
        raw = json.loads((folder / "config.yaml").read_text())
        del raw["serve"]["lti"]["jwks_file"]
        raw["serve"]["lti"]["jwks_url"] = silent_url
        (folder / "config.yaml").write_text(json.dumps(raw))
        served.app.state.service.config = load_config(folder / "config.yaml")
        client = TestClient(served.app, follow_redirects=False)
        query = served.login(client)
        token = served.platform.id_token(query["nonce"])
        answers: list[object] = []
        began = time.monotonic()
        launching = threading.Thread(
            target=lambda: answers.append(served.launch(client, query["state"], token)),
            daemon=True,
        )
        launching.start()
        launching.join(20)
        assert not launching.is_alive(), "the launch still waits for the platform's keys"
        answer = answers[0]
        assert time.monotonic() - began < 20
        text = html.unescape(answer.text)  # type: ignore[attr-defined]
        assert answer.status_code == 403 and "Sign-in refused" in text  # type: ignore[attr-defined]
        assert silent_url in text
    finally:
        served.store.close()
