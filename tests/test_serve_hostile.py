"""`grader serve` against what a careless instructor or a hostile student sends: a tokens
export that must never lose the last one, a token pasted with spaces around it, and a
launch whose claims are not of the form the standard gives."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient
from test_serve_lti import Served

from grader.cli import main
from grader.cli.common import _output_file
from grader.errors import UsageError
from grader.serve.app import Service, make_app
from grader.serve.checks import Limits
from grader.serve.lti import LIS
from grader.serve.store import Store

from serving import csrf, issue


def _tokens(tmp_path: Path, *args: str) -> tuple[int, str]:
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["serve", "tokens", "--out", str(out), *args])
    return result.exit_code, result.stderr


def test_a_refused_roster_leaves_the_last_tokens_export_as_it_was(tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nalice,Alice\nbob,Bob\n")
    export = tmp_path / "tokens.csv"
    code, said = _tokens(tmp_path, "--roster", str(roster), "--export", str(export))
    assert code == 0 and "wrote 2 tokens" in said
    issued = export.read_bytes()
    rows = issued.decode().splitlines()
    assert rows[0] == "id,name,role,token,link" and len(rows) == 3
    bad = tmp_path / "bad.csv"
    bad.write_text("student,name\nalice,Alice\n")
    code, said = _tokens(tmp_path, "--roster", str(bad), "--export", str(export))
    assert code == 2 and f"{bad} line 1: the roster needs the columns id, name" in said
    assert export.read_bytes() == issued  # the only copy of the tokens is still there
    store = Store(tmp_path / "out")
    try:
        token = rows[1].split(",")[3]
        assert store.person_for_token(token) is not None
    finally:
        store.close()


def test_an_export_it_cannot_write_is_one_line_and_issues_nothing(tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nalice,Alice\n")
    export = tmp_path / "tokens.csv"
    assert _tokens(tmp_path, "--roster", str(roster), "--export", str(export))[0] == 0
    token = export.read_text().splitlines()[1].split(",")[3]
    for where in (tmp_path / "roster.csv" / "t.csv", tmp_path / "roster.csv" / "in" / "t.csv"):
        code, said = _tokens(tmp_path, "--roster", str(roster), "--export", str(where))
        # The same line as every command that writes a file says for the same folder.
        with pytest.raises(UsageError) as shared:
            _output_file(where, "--export")
        assert code == 2 and said == f"Error: {shared.value}\n"
        assert said.startswith(f"Error: --export {where}: ")
    store = Store(tmp_path / "out")
    try:
        assert store.person_for_token(token) is not None  # the old token still signs in
    finally:
        store.close()


def test_an_export_into_a_missing_folder_makes_it_as_every_export_does(tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nalice,Alice\n")
    export = tmp_path / "staff" / "2026" / "tokens.csv"
    code, said = _tokens(tmp_path, "--roster", str(roster), "--export", str(export))
    assert code == 0 and "wrote 1 tokens" in said
    assert export.read_text().splitlines()[0] == "id,name,role,token,link"


def test_a_token_pasted_with_spaces_around_it_signs_in(tmp_path: Path) -> None:
    store = Store(tmp_path / "out")
    try:
        app = make_app(Service(store, Limits(), None))
        tokens = issue(store)
        for pasted in (f" {tokens['alice']} ", f"{tokens['alice']}\r\n", f"\t{tokens['alice']}"):
            client = TestClient(app, follow_redirects=False)
            form = csrf(client.get("/").text)
            answer = client.post("/login", data={"csrf": form, "token": pasted})
            assert answer.status_code == 303, answer.text[-300:]
            assert "Alice Liddell" in client.get("/").text
        client = TestClient(app, follow_redirects=False)
        confirm = client.get(f"/t/{tokens['bob']}%20")
        assert confirm.status_code == 200 and "Bob" in confirm.text
        sent = {"csrf": csrf(confirm.text), "token": f"{tokens['bob']} "}
        assert client.post("/login", data=sent).status_code == 303
        inner = tokens["alice"][:5] + " " + tokens["alice"][5:]
        form = csrf(client.get("/").text)
        assert client.post("/login", data={"csrf": form, "token": inner}).status_code == 401
    finally:
        store.close()


@pytest.mark.parametrize("lis", ["canvas-user-17", ["canvas-user-17"], None, 17])
def test_a_launch_whose_lis_claim_is_no_object_is_refused_with_a_page(
    tmp_path: Path, lis: object
) -> None:
    served = Served(tmp_path, match="lms_id")
    try:
        client = TestClient(served.app, follow_redirects=False)
        query = served.login(client)
        claims = {"sub": "someone-else", LIS: lis}
        token = served.platform.id_token(query["nonce"], **claims)
        answer = served.launch(client, query["state"], token)
        assert answer.status_code == 403, answer.text[-300:]
        assert "not on this course's roster" in html.unescape(answer.text)
    finally:
        served.store.close()


@pytest.mark.parametrize(
    "twin", ["Alice", "ALICE", "alice ", "e\u0301ve"], ids=["case", "upper", "space", "nfd"]
)
def test_ids_that_differ_only_in_case_or_unicode_form_are_one_student(
    tmp_path: Path, twin: str
) -> None:
    first = "\u00e9ve" if twin.startswith("e\u0301") else "alice"
    roster = tmp_path / "roster.csv"
    roster.write_text(f"id,name\n{first},One\n{twin},Two\n", encoding="utf-8")
    code, said = _tokens(tmp_path, "--roster", str(roster))
    assert code == 2, said
    assert f"{roster} line 3: the id {twin.strip()!r} is already on line 2" in said, said
    assert len(said.strip().splitlines()) == 1
