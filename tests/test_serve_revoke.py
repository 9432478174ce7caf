"""`grader serve tokens --revoke ID`: a leaked link stops signing in and the sessions it
opened end, the uploads stay; `--roster … --student ID` then issues that student alone a new
one, the others' links working on."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from starlette.testclient import TestClient

from grader.cli import main
from grader.serve.app import Service, make_app
from grader.serve.checks import Limits
from grader.serve.store import Store

from serving import csrf, sign_in

NOTEBOOK = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


def _tokens(out: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["serve", "tokens", "--out", str(out), *args])


def _issued(result: Result) -> dict[str, str]:
    """Tokens by id, from the CSV the command printed."""
    rows = [line.split(",") for line in result.stdout.strip().splitlines()[1:]]
    return {row[0]: row[3] for row in rows}


def test_a_revoked_link_signs_nobody_in_and_its_sessions_end(tmp_path: Path) -> None:
    roster, out = tmp_path / "roster.csv", tmp_path / "out"
    roster.write_text("id,name\nalice,Alice\nbob,Bob\n")
    tokens = _issued(_tokens(out, "--roster", str(roster), "--instructor", "ada"))
    store = Store(out)
    try:
        app = make_app(Service(store, Limits(min_interval=0), None))
        alice, bob = (TestClient(app, follow_redirects=False) for _ in range(2))
        form = sign_in(alice, tokens["alice"])
        sent = {"notebook": ("a.ipynb", NOTEBOOK)}
        assert alice.post("/upload", data={"csrf": form}, files=sent).status_code == 303
        sign_in(bob, tokens["bob"])
        result = _tokens(out, "--revoke", "Alice")  # matched as the roster matches ids
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith("revoked alice (student)")
        assert alice.get(f"/t/{tokens['alice']}").status_code == 404
        typed = TestClient(app, follow_redirects=False)
        form = csrf(typed.get("/").text)  # the token typed in the sign-in form: not known
        assert (
            typed.post("/login", data={"csrf": form, "token": tokens["alice"]}).status_code == 401
        )
        assert "Sign out" not in alice.get("/").text  # her session ended
        assert "Bob (bob)" in bob.get("/").text  # nobody else's
        assert [u.student for u in store.history("alice")] == ["alice"]  # her upload stays
        # Her new link alone: bob's keeps working.
        again = _tokens(out, "--roster", str(roster), "--student", "alice")
        assert again.exit_code == 0 and list(_issued(again)) == ["alice"]
        sign_in(TestClient(app, follow_redirects=False), _issued(again)["alice"])
        sign_in(TestClient(app, follow_redirects=False), tokens["bob"])
    finally:
        store.close()


def test_revoking_an_unknown_id_is_one_line_and_revokes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    tokens = _issued(_tokens(out, "--instructor", "ada"))
    result = _tokens(out, "--revoke", "ada", "--revoke", "nobody")
    assert result.exit_code == 2 and result.stderr.startswith("Error: --revoke nobody: ")
    assert len(result.stderr.strip().splitlines()) == 1
    for mixed in (["--roster", "r.csv"], ["--instructor", "ada"], ["--student", "x"]):
        refused = _tokens(out, "--revoke", "ada", *mixed)
        assert refused.exit_code == 2 and "--revoke works alone" in refused.stderr
    missing = _tokens(out, "--instructor", "ada", "--student", "alice")
    assert missing.exit_code == 2 and "--student needs --roster" in missing.stderr
    store = Store(out)
    try:
        assert store.person_for_token(tokens["ada"]) is not None
    finally:
        store.close()


def test_a_student_not_on_the_roster_is_refused_and_nothing_issued(tmp_path: Path) -> None:
    roster, out = tmp_path / "roster.csv", tmp_path / "out"
    roster.write_text("id,name\nalice,Alice\n")
    tokens = _issued(_tokens(out, "--roster", str(roster)))
    result = _tokens(out, "--roster", str(roster), "--student", "mallory")
    assert (
        result.exit_code == 2 and result.stderr == "Error: --student mallory: not on the roster\n"
    )
    store = Store(out)
    try:
        assert store.person_for_token(tokens["alice"]) is not None
    finally:
        store.close()


def test_the_help_shows_how_to_revoke() -> None:
    shown = CliRunner().invoke(main, ["serve", "tokens", "--help"]).output
    assert "grader serve tokens --revoke alice" in shown and "--student alice" in shown


@pytest.mark.postgres
@pytest.mark.slow
def test_revoking_on_postgresql(tmp_path: Path, postgres_url: str) -> None:
    out, roster = tmp_path / "out", tmp_path / "roster.csv"
    roster.write_text("id,name\nalice,Alice\nbob,Bob\n")
    db = ["--db", postgres_url]
    tokens = _issued(_tokens(out, "--roster", str(roster), *db))
    assert _tokens(out, "--revoke", "alice", "--revoke", "bob", *db).exit_code == 0
    store = Store(out, postgres_url)
    try:
        assert store.person_for_token(tokens["alice"]) is None
        assert store.person_for_token(tokens["bob"]) is None  # two NULL tokens: both kept
        assert [p.id for p in store.people("student")] == ["alice", "bob"]
    finally:
        store.close()
