"""`grader serve`'s pages through Starlette's TestClient, no grading: sign-in, uploads, the
limits, and what each person may see. (tests/test_serve_grading.py grades for real.)"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.routing import Route
from starlette.testclient import TestClient

from grader.cli import main
from grader.errors import UsageError
from grader.render.escape import spreadsheet_cell
from grader.serve.app import Service, make_app
from grader.serve.checks import Limits, graded_as, uploaded_name
from grader.serve.roster import Student, read_roster
from grader.serve.store import Store
from grader.serve.tokens import new_token, token_hash

from conftest import REPO
from serving import CLASS, csrf, issue, sign_in

SOLUTION = (REPO / "solutions" / "self_attention.ipynb").read_bytes()
LIMITS = Limits(max_kb=256, max_attempts=3, min_interval=0)


class Class:
    """A served class: its store, tokens by id, and a client per person."""

    def __init__(self, out: Path, limits: Limits = LIMITS, secure: bool = False) -> None:
        self.store = Store(out)
        self.tokens = issue(self.store)
        self.app = make_app(Service(self.store, limits, None, secure))

    def client(self, base_url: str = "http://testserver") -> TestClient:
        return TestClient(self.app, base_url=base_url, follow_redirects=False)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Class]:
    served = Class(tmp_path / "out")
    yield served
    served.store.close()


def upload(client: TestClient, token: str, name: str = "mine.ipynb", data: bytes = SOLUTION):
    """Sign in as `token`'s student and upload."""
    form = sign_in(client, token)
    return client.post("/upload", data={"csrf": form}, files={"notebook": (name, data)})


def test_tokens_are_stored_hashed_and_a_new_one_replaces_the_old(served: Class) -> None:
    dump = "\n".join(served.store.db.raw.iterdump())
    for token in served.tokens.values():
        assert token not in dump and token_hash(token) in dump
    assert served.store.person_for_token(served.tokens["alice"]).id == "alice"  # type: ignore[union-attr]
    token = served.tokens["alice"]
    altered = token[:-1] + ("x" if token[-1] != "x" else "y")  # one in 64 tokens ends in x
    assert served.store.person_for_token(altered) is None
    old = served.tokens["alice"]
    ((_, new),) = served.store.issue(CLASS[:1], "student")
    assert served.store.person_for_token(old) is None
    assert served.store.person_for_token(new) is not None


def test_tokens_command_prints_a_link_per_person_and_reads_the_roster(tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name,email\nalice,Alice,a@x\n=cmd,Eve,e@x\n")
    assert [s.id for s in read_roster(roster)] == ["alice", "=cmd"]
    unclosed = tmp_path / "unclosed.csv"  # bo and cy were read into alice's name: no tokens
    unclosed.write_text('id,name\nalice,"Alice\nbo,Bo\ncy,Cy\n')
    with pytest.raises(UsageError) as refused:
        read_roster(unclosed)
    assert str(refused.value) == (
        f"{unclosed} line 4: a quote opened on line 2 is never closed"  # as the batch says
    )
    out = tmp_path / "out"
    args = ["serve", "tokens", "--roster", str(roster), "--instructor", "ada", "--out", str(out)]
    result = CliRunner().invoke(main, [*args, "--base-url", "https://grader.example.edu/"])
    assert result.exit_code == 0, result.output
    rows = result.stdout.strip().splitlines()
    assert rows[0] == "id,name,role,token,link" and len(rows) == 4
    assert rows[2].startswith("'=cmd,")  # no cell of the export is a spreadsheet formula
    ada = rows[3].split(",")
    assert ada[2] == "instructor" and ada[4] == f"https://grader.example.edu/t/{ada[3]}"
    store = Store(out)
    assert store.person_for_token(ada[3]) is not None
    store.close()
    bad = tmp_path / "bad.csv"
    bad.write_text("student,name\nalice,Alice\n")
    result = CliRunner().invoke(main, ["serve", "tokens", "--roster", str(bad), "--out", str(out)])
    assert result.exit_code == 2, result.stderr
    assert f"{bad} line 1: the roster needs the columns id, name (missing: id)" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "base_url",
    [
        "grader.example.edu",
        "https://",
        "ftp://grader.example.edu",
        "https://x.edu/?a=1",
        "https://x.edu:port",
        "http://[::1",
    ],
)
def test_a_base_url_no_browser_opens_is_refused_before_any_token_is_issued(
    tmp_path: Path, base_url: str
) -> None:
    """Links made from it would reach no one, and each issued token replaces the last."""
    out = tmp_path / "out"
    args = ["serve", "tokens", "--instructor", "ada", "--out", str(out), "--base-url", base_url]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        f"Error: --base-url {base_url!r}: give the address students open the service at, "
        "with http:// or https:// and a host, and no ? or # part (e.g. "
        "https://grader.example.edu or https://example.edu/grader)"
    ]
    assert not out.exists() or not any(out.iterdir())


def test_sign_in_by_form_and_by_link_with_safe_cookies(served: Class) -> None:
    client = served.client()
    first = client.get("/")
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Secure" not in cookie
    form = csrf(first.text)
    wrong = client.post("/login", data={"csrf": form, "token": "guess"})
    assert wrong.status_code == 401 and "not known" in wrong.text
    planted = client.cookies["grader_session"]
    right = client.post("/login", data={"csrf": form, "token": served.tokens["alice"]})
    assert right.status_code == 303
    assert client.cookies["grader_session"] != planted  # a new session at sign-in
    assert "Alice Liddell" in client.get("/").text
    assert served.client().get("/t/not-a-token").status_code == 404
    behind_tls = served.client("https://testserver").get(f"/t/{served.tokens['bob']}")
    assert "Secure" in behind_tls.headers["set-cookie"]


def test_a_personal_link_signs_in_only_from_its_own_page_button(served: Class) -> None:
    # Login CSRF: a link (or an image) on another site must not sign a browser in as the
    # link's owner, whose account would then get the victim's uploads. The GET shows a page
    # whose button posts the token with this browser's CSRF token; the link stays valid.
    token = served.tokens["alice"]
    victim = served.client()
    confirm = victim.get(f"/t/{token}")
    assert confirm.status_code == 200 and "set-cookie" in confirm.headers
    assert "Alice Liddell" in confirm.text and 'action="/login"' in confirm.text
    assert f'name="token" value="{token}"' in confirm.text
    assert "Sign out" not in confirm.text and "Sign out" not in victim.get("/").text
    assert served.store.session(victim.cookies["grader_session"]).person is None  # type: ignore[union-attr]
    # The attacker's page posts the token without this browser's CSRF token: refused.
    forged = served.client().post("/login", data={"token": token})
    assert forged.status_code == 403
    crossed = victim.post(
        "/login", data={"csrf": csrf(served.client().get("/").text), "token": token}
    )
    assert crossed.status_code == 403
    assert "Sign out" not in victim.get("/").text
    answer = victim.post("/login", data={"csrf": csrf(confirm.text), "token": token})
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    assert "Alice Liddell (alice)" in victim.get("/").text
    # Signed in as someone else, a link still asks first, and says who is signed in.
    other = victim.get(f"/t/{served.tokens['bob']}")
    assert other.status_code == 200 and "Bob &lt;b&gt;Builder&lt;/b&gt;" in other.text
    assert "Alice Liddell (alice)" in victim.get("/").text
    assert served.client().get("/t/not-a-token").status_code == 404


def test_every_form_carries_a_csrf_token_and_every_post_checks_it(served: Class) -> None:
    student, teacher = served.client(), served.client()
    sign_in(student, served.tokens["alice"])
    sign_in(teacher, served.tokens["ada"])
    pages = [student.get("/").text, teacher.get("/class").text, served.client().get("/").text]
    forms = [f for page in pages for f in re.findall(r"<form.*?</form>", page, re.S)]
    assert len(forms) == 6  # sign in; upload, sign out; release, regrade, sign out
    assert all(re.search(r'name="csrf" value="[^"]{20,}"', f) for f in forms)
    posts = {r.path for r in served.app.routes if isinstance(r, Route) and "POST" in r.methods}
    # The LMS posts the LTI login and launch cross-site: a signed id_token, the state cookie
    # and a nonce taken once guard them instead (tests/test_serve_lti.py).
    posts -= {"/lti/login", "/lti/launch"}
    adjust = "/class/students/{student:path}/adjust"
    assert posts == {"/login", "/logout", "/upload", "/class/regrade", "/class/release", adjust}
    for client in (student, teacher):
        for path in posts:
            for token in ({}, {"csrf": "forged-token-value-of-a-good-length"}):
                answer = client.post(path, data={**token, "token": served.tokens["alice"]})
                assert answer.status_code in (403, 303 if path == "/upload" else 403), path
                assert answer.status_code != 303 or answer.headers["location"] == "/"
    assert served.store.last_id() == 0 and served.store.counts() == {}


def test_an_upload_is_on_disk_and_queued_before_the_answer(served: Class) -> None:
    client = served.client()
    answer = upload(client, served.tokens["alice"], "../../evil<script>.ipynb")
    assert answer.status_code == 303 and answer.headers["location"] == "/submissions/1"
    found = served.store.upload(1)
    assert found is not None and found.status == "queued" and found.student == "alice"
    assert found.filename == "evil<script>.ipynb"  # shown, escaped; never a path
    blob = served.store.out / "uploads" / found.content_hash
    assert blob.read_bytes() == SOLUTION
    assert sorted(p.name for p in served.store.out.iterdir()) == [
        "serve.sqlite",
        "serve.sqlite-shm",
        "serve.sqlite-wal",
        "uploads",
    ]
    page = client.get("/submissions/1").text
    assert "evil&lt;script&gt;.ipynb" in page and "<script>." not in page
    assert '<script src="/static/poll.js"' in page
    assert re.findall(r"<script(?![^>]*\bsrc=)", page) == []  # no inline script at all
    assert client.get("/submissions/1/status").json() == {"state": "queued"}
    history = client.get("/").text
    assert 'href="/submissions/1"' in history and "queued" in history


def test_every_page_sends_the_security_headers(served: Class) -> None:
    client = served.client()
    sign_in(client, served.tokens["alice"])
    for path in ("/", "/submissions/99", "/static/poll.js", "/nowhere"):
        headers = client.get(path).headers
        policy = headers["content-security-policy"]
        assert "script-src 'self';" in policy and "default-src 'none'" in policy
        assert "frame-ancestors 'none'" in policy
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"


def _graded(store: Store, upload_id: int, secret: str) -> None:
    """Mark an upload graded, with a page holding `secret`, as the grading thread would."""
    (claimed,) = store.claim(1)
    assert claimed.id == upload_id
    assert store.finish(upload_id, 3.0, 10.0, f"<html><body>\n{secret}</body></html>", "")


def test_a_student_sees_only_their_own_submissions_on_every_route(served: Class) -> None:
    alice, bob, nobody = served.client(), served.client(), served.client()
    assert upload(alice, served.tokens["alice"]).status_code == 303
    _graded(served.store, 1, "ALICE-SECRET-FEEDBACK")
    assert "ALICE-SECRET-FEEDBACK" in alice.get("/submissions/1").text
    form = sign_in(bob, served.tokens["bob"])
    missing = bob.get("/submissions/424242")
    values = {"upload": "1", "student": "alice", "token": "x"}
    tried = 0
    # Signing out last: bob stays signed in for every other route.
    for route in sorted(served.app.routes, key=lambda r: getattr(r, "path", "") == "/logout"):
        assert isinstance(route, Route)
        path = route.path
        for name, value in values.items():
            for kind in (":int", ":path", ""):
                path = path.replace(f"{{{name}{kind}}}", value)
        for client, who in ((bob, "bob"), (nobody, "nobody")):
            method = "POST" if "POST" in route.methods else "GET"
            answer = client.request(method, path, data={"csrf": form})
            tried += 1
            assert "ALICE-SECRET-FEEDBACK" not in answer.text, (who, path)
            assert "Alice Liddell" not in answer.text, (who, path)
            if "{upload" in route.path and who == "bob":
                assert answer.status_code == 404 and answer.text == missing.text, path
            if route.path.startswith("/class"):
                assert answer.status_code in (403, 303), path  # 303: to the sign-in page
    assert tried == 2 * len(served.app.routes)
    assert served.store.upload(1).status == "graded"  # type: ignore[union-attr]
    assert [u.id for u in served.store.history("bob")] == []


def test_upload_limits_size_kind_attempts_and_rate(tmp_path: Path) -> None:
    served = Class(tmp_path / "out", Limits(max_kb=64, max_attempts=2, min_interval=0))
    client = served.client()
    token = served.tokens["alice"]
    big = upload(client, token, data=b" " * (65 * 1024))
    assert big.status_code == 413 and "at most 64 KB" in big.text
    assert upload(client, token, "notes.txt", SOLUTION[:1000]).status_code == 400
    assert upload(client, token, "a.ipynb", b"").status_code == 400
    small = (REPO / "exercises" / "self_attention.ipynb").read_bytes()
    assert [upload(client, token, data=small).status_code for _ in range(3)] == [303, 303, 429]
    assert "all 2 attempts" in upload(client, token, data=small).text
    slow = Class(tmp_path / "slow", Limits(max_kb=64, max_attempts=9, min_interval=60))
    client = slow.client()
    codes = [upload(client, slow.tokens["bob"], data=small).status_code for _ in range(2)]
    assert codes == [303, 429]
    assert [u.id for u in slow.store.history("bob")] == [1]


def test_a_notebook_bomb_is_refused_and_the_service_keeps_serving(served: Class) -> None:
    client = served.client()
    nested = b'{"cells": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    started = time.monotonic()
    answer = upload(client, served.tokens["alice"], data=nested)
    assert answer.status_code == 400 and "cannot be graded" in answer.text
    cells = {"cells": [{"cell_type": "code", "source": "x = 1\n", "metadata": {}}] * 50_000}
    wide = json.dumps({**cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()
    assert len(wide) > LIMITS.max_bytes  # huge: refused on its size, before it is read
    assert upload(client, served.tokens["alice"], data=wide).status_code == 413
    assert time.monotonic() - started < 10
    assert upload(client, served.tokens["alice"]).status_code == 303
    assert [u.status for u in served.store.history("alice")] == ["queued"]


def test_instructor_sees_the_class_each_history_and_regrades(served: Class) -> None:
    for student in ("alice", "bob"):
        assert upload(served.client(), served.tokens[student]).status_code == 303
    _graded(served.store, 1, "alice's page")
    teacher = served.client()
    form = sign_in(teacher, served.tokens["ada"])
    page = teacher.get("/class").text
    assert "Alice Liddell" in page and "Bob &lt;b&gt;Builder&lt;/b&gt;" in page
    assert "3 / 10" in page and "queued" in page
    state = teacher.get("/class/state").json()["state"]
    assert "alice's page" in teacher.get("/submissions/1").text  # an instructor sees all
    history = teacher.get("/class/students/alice").text
    assert 'href="/submissions/1"' in history and "/submissions/2" not in history
    assert teacher.get("/class/students/ada").status_code == 404
    served.store.issue([Student("x/../y", "Slashed")], "student")
    assert 'href="/class/students/x/../y"' not in teacher.get("/class").text
    assert "Slashed" in teacher.get("/class/students/x%2F..%2Fy").text
    assert teacher.post("/class/regrade", data={"csrf": form}).status_code == 303
    assert served.store.upload(1).status == "queued"  # type: ignore[union-attr]
    assert teacher.get("/class/state").json()["state"] != state
    db = sqlite3.connect(served.store.out / "serve.sqlite")
    assert db.execute("SELECT COUNT(*) FROM uploads").fetchone() == (2,)


def test_serve_without_a_sandbox_refuses_to_start_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from grader.run import bwrap

    monkeypatch.setattr(bwrap, "support", lambda: bwrap.Support(False, "simulated"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["serve", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert (
        result.stderr.startswith("Error: the sandbox is required") and "simulated" in result.stderr
    )
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()  # nothing started, nothing written


def test_the_attempt_limit_holds_for_uploads_at_the_same_moment(tmp_path: Path) -> None:
    store = Store(tmp_path / "out")
    issue(store)
    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(lambda n: store.accept("alice", "a.ipynb", SOLUTION, 3), range(16)))
    assert sorted(i for i in ids if i is not None) == [1, 2, 3] and ids.count(None) == 13
    assert store.accept("bob", "b.ipynb", SOLUTION, 9, min_interval=60) == 4
    assert store.accept("bob", "b.ipynb", SOLUTION, 9, min_interval=60) is None
    # The refused ones' bytes are not kept: each was written (and synced) before the limit
    # was checked, so one student's refused uploads could fill the disk.
    refused = [store.accept("bob", f"{n}.ipynb", SOLUTION + b" " * n, 9, 60) for n in range(9)]
    assert refused == [None] * 9
    kept = sorted(p.name for p in (tmp_path / "out" / "uploads").iterdir())
    assert kept == [hashlib.sha256(SOLUTION).hexdigest()]
    store.close()


def test_an_upload_is_read_as_a_script_or_a_notebook_the_same_way_when_graded() -> None:
    assert graded_as("Mine.PY") == Path("Mine.PY.py")
    assert graded_as("hw.py") == Path("hw.py") and graded_as("hw.ipynb") == Path("hw.ipynb")
    assert graded_as("hw.IPYNB") == Path("hw.IPYNB.ipynb")
    assert uploaded_name("C:\\Users\\eve\\..\\hw.ipynb") == "hw.ipynb"
    assert uploaded_name("a/b/\x1b[2Jx.ipynb").endswith("x.ipynb") and "\x1b" not in uploaded_name(
        "\x1b.py"
    )


def test_a_token_is_never_changed_by_the_tokens_csv() -> None:
    # One token in 64 started with `-`; the CSV made it `'-…`, which signs nobody in.
    tokens = [new_token() for _ in range(3000)]
    assert len(set(tokens)) == len(tokens)
    assert all(spreadsheet_cell(token) == token for token in tokens)


def test_a_form_body_over_64_kb_is_refused_before_it_is_read(served: Class) -> None:
    # Only /upload checked its size: a 1.5 GB POST to /login, cookie or not, was spooled
    # to disk in full before the CSRF check answered 403.
    client = served.client()
    form = sign_in(client, served.tokens["alice"])
    padding = "x" * (70 * 1024)
    answer = client.post("/logout", data={"csrf": form, "padding": padding})
    assert answer.status_code == 413 and "The form is too large: at most 64 KB." in answer.text
    assert "Alice Liddell" in client.get("/").text  # not signed out
    assert client.post("/logout", data={"csrf": form}).status_code == 303  # a usual form
    stranger = served.client()
    assert stranger.post("/login", data={"csrf": "x", "padding": padding}).status_code == 403


def test_an_upload_whose_write_fails_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A full disk at a deadline's rush: each failed upload left a hidden partial file behind.
    store = Store(tmp_path / "out")
    issue(store)

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("grader.serve.uploads.os.fsync", full)
    with pytest.raises(OSError, match="No space left"):
        store.accept("alice", "a.ipynb", b"{}")
    monkeypatch.undo()
    assert list((tmp_path / "out" / "uploads").iterdir()) == []
    assert store.accept("alice", "a.ipynb", b"{}") is not None
    store.close()
