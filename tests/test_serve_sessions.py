"""The service's sessions stay bounded whatever is sent: a flood of requests without a cookie
(each would start a sign-in form's session) keeps at most `ANONYMOUS_LIMIT` of them, the
oldest going first; one person signing in again and again keeps at most
`SESSIONS_PER_PERSON`; and what the pruning reads is indexed."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from grader.serve import store as store_module
from grader.serve.app import Service, make_app
from grader.serve.checks import Limits
from grader.serve.store import Store

from serving import csrf, issue, sign_in


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path / "out")
    yield store
    store.close()


def _sessions(store: Store, anonymous: bool) -> int:
    where = "person IS NULL" if anonymous else "person IS NOT NULL"
    return int(store.db.execute(f"SELECT COUNT(*) FROM sessions WHERE {where}").fetchone()[0])


def test_a_flood_without_cookies_keeps_a_bounded_number_of_sessions(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "ANONYMOUS_LIMIT", 20)
    tokens = issue(store)
    app = make_app(Service(store, Limits(), None))
    first = TestClient(app, follow_redirects=False)
    stale = csrf(first.get("/").text)
    for _ in range(5 * store_module.ANONYMOUS_LIMIT):
        assert TestClient(app).get("/").status_code == 200  # a fresh client: no cookie
        assert _sessions(store, anonymous=True) <= store_module.ANONYMOUS_LIMIT
    assert _sessions(store, anonymous=True) == store_module.ANONYMOUS_LIMIT
    # The oldest forms went first: the first page's form is out of date (reload it).
    answer = first.post("/login", data={"csrf": stale, "token": tokens["alice"]})
    assert answer.status_code == 403 and "reload the page" in answer.text
    # Whoever loaded the page after the flood signs in as ever.
    late = TestClient(app, follow_redirects=False)
    sign_in(late, tokens["alice"])
    assert "Alice Liddell (alice)" in late.get("/").text


def test_signing_in_again_and_again_keeps_a_bounded_number_per_person(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "SESSIONS_PER_PERSON", 4)
    tokens = issue(store)
    app = make_app(Service(store, Limits(), None))
    clients = [TestClient(app, follow_redirects=False) for _ in range(12)]
    for client in clients:
        sign_in(client, tokens["alice"])
        sign_in(TestClient(app, follow_redirects=False), tokens["bob"])
    assert _sessions(store, anonymous=False) == 2 * store_module.SESSIONS_PER_PERSON
    newest = clients[-store_module.SESSIONS_PER_PERSON :]
    assert all("Alice Liddell (alice)" in c.get("/").text for c in newest)
    assert "Alice Liddell" not in clients[0].get("/").text  # the oldest was signed out


def test_a_sign_in_form_left_past_its_hour_is_out_of_date(store: Store) -> None:
    key = store.new_session(None)
    assert store.session(key) is not None
    with store.db.transaction() as db:
        db.execute(
            "UPDATE sessions SET created = ?", (time.time() - store_module.ANONYMOUS_SECONDS - 1,)
        )
    assert store.session(key) is None  # as if it had been pruned already


@pytest.mark.parametrize(
    "statement",
    [
        "_SESSIONS_EXPIRED",
        "_SESSIONS_ANONYMOUS_CUTOFF",
        "_SESSIONS_PERSON_CUTOFF",
        "_LTI_EXPIRED",
        "_LTI_CUTOFF",
    ],
)
def test_what_the_pruning_reads_is_indexed(store: Store, statement: str) -> None:
    sql = getattr(store_module, statement)
    table = "lti" if "LTI" in statement else "sessions"
    arguments = (0.0,) * sql.count("?")
    rows = store.db.raw.execute(f"EXPLAIN QUERY PLAN {sql}", arguments).fetchall()
    reads = [str(row[-1]) for row in rows if table in str(row[-1])]
    # SQLite says SCAN TABLE for a whole-table read, SEARCH or SCAN … USING INDEX else.
    assert reads and all("INDEX" in read for read in reads), reads


def test_a_flood_of_lti_logins_keeps_a_bounded_number_of_states(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_serve_lti import Served

    monkeypatch.setattr(store_module, "LTI_LIMIT", 10)
    served = Served(tmp_path)
    try:
        for _ in range(30):  # anyone may start a login: each keeps a state and a nonce
            served.login(TestClient(served.app, follow_redirects=False))
            count = served.store.db.execute("SELECT COUNT(*) FROM lti").fetchone()[0]
            assert count <= store_module.LTI_LIMIT
        client = TestClient(served.app, follow_redirects=False)
        query = served.login(client)  # a student's own, after the flood, still launches
        token = served.platform.id_token(query["nonce"])
        assert served.launch(client, query["state"], token).status_code == 303
    finally:
        served.store.close()


@pytest.mark.postgres
@pytest.mark.slow
def test_the_limits_hold_on_postgresql(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "ANONYMOUS_LIMIT", 5)
    monkeypatch.setattr(store_module, "SESSIONS_PER_PERSON", 3)
    shared = Store(tmp_path / "out", postgres_url)
    try:
        issue(shared)
        alice = shared.person("alice")
        anonymous = [shared.new_session(None) for _ in range(12)]
        signed = [shared.new_session(alice) for _ in range(7)]
        assert _sessions(shared, anonymous=True) == 5
        assert _sessions(shared, anonymous=False) == 3
        assert [shared.session(k) is not None for k in anonymous] == [False] * 7 + [True] * 5
        assert [shared.session(k) is not None for k in signed] == [False] * 4 + [True] * 3
    finally:
        shared.close()
