"""A student whose token was revoked (`grader serve tokens --revoke`) signs in by no route,
an LTI launch from the course site included, while still in roster.csv; a token issued to
them again lets them in again."""

from __future__ import annotations

import html
from pathlib import Path

from starlette.testclient import TestClient
from test_serve_lti import Served, signed_in_as

from grader.batch.roster import Student


def _launch(served: Served) -> tuple[int, str, str]:
    client = TestClient(served.app, follow_redirects=False)
    query = served.login(client)
    answer = served.launch(client, query["state"], served.platform.id_token(query["nonce"]))
    return answer.status_code, html.unescape(answer.text), signed_in_as(client)


def test_a_revoked_student_on_the_roster_cannot_sign_in_by_lti(tmp_path: Path) -> None:
    served = Served(tmp_path)
    try:
        served.store.revoke(["Alice"])  # ids match as the roster's do
        status, text, page = _launch(served)
        assert status == 403 and "Sign-in refused" in text
        assert "access to this service was revoked" in text
        assert "Submit a notebook" not in page
        served.store.issue([Student("alice", "Alice Liddell")], "student")
        status, _, page = _launch(served)
        assert status == 303 and "Alice Liddell (alice)" in page
    finally:
        served.store.close()
