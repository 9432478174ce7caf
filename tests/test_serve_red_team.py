"""What a red-team round found in `grader serve`: a roster that spells an id in another case
made a second account (and `--revoke` then revoked one of the two), a regrade redid only each
student's last assignment, a submission number past SQLite's integers was a server error, an
id `..` was accepted though no link can reach its page, and an upload sent in chunks was
told it was too large."""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from grader.batch.gradebook import Gradebook
from grader.batch.records import stored_roster
from grader.batch.roster import Student
from grader.cli import main
from grader.course.config import load_config
from grader.report import Report, TargetResult
from grader.serve.app import Service, make_app
from grader.serve.checks import Limits
from grader.serve.store import Store
from grader.serve.stored import View

from serving import csrf, issue, sign_in

REPO = Path(__file__).resolve().parents[1]


def _tokens(out: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["serve", "tokens", "--out", str(out), *args])
    return result.exit_code, result.stderr


def test_an_id_in_another_case_is_the_same_account_and_revoking_it_revokes_it(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text("id,name\nalice,Alice\n")
    second.write_text("id,name\nAlice,Alice L.\n")
    assert _tokens(out, "--roster", str(first))[0] == 0
    assert _tokens(out, "--roster", str(second))[0] == 0
    store = Store(out)
    try:
        people = store.people("student")
        assert [(p.id, p.name) for p in people] == [("alice", "Alice L.")]  # one account
        assert store.person("ALICE") == people[0]  # found as the roster finds ids
    finally:
        store.close()
    code, said = _tokens(out, "--revoke", "Alice")
    assert code == 0, said
    store = Store(out)
    try:
        assert store.revoked("alice")
    finally:
        store.close()


def test_revoking_revokes_every_account_an_older_grader_made_for_one_id(tmp_path: Path) -> None:
    store = Store(tmp_path / "out")
    try:
        store.issue([Student("alice", "Alice")], "student")
        with store._transaction() as db:  # the second account an older grader made
            db.execute("INSERT INTO people VALUES ('Alice', 'Alice', 'student', 'x')")
        revoked = store.revoke(["ALICE"])
        assert sorted(p.id for p in revoked) == ["Alice", "alice"]
        assert store.revoked("alice") and store.revoked("Alice")
    finally:
        store.close()


def _graded(store: Store, student: str, assignment: str) -> int:
    upload = store.accept(student, f"{assignment}.ipynb", f"{assignment} {time.time()}".encode())
    assert upload is not None
    assert [u.id for u in store.claim(1)] == [upload]
    view = View(assignment, "", 1.0, 1.0)
    assert store.finish(upload, 1.0, 1.0, "<html></html>", "", view)
    return upload


def test_a_regrade_redoes_each_students_latest_upload_of_every_assignment(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "out")
    try:
        issue(store)
        first = _graded(store, "alice", "self_attention")
        older = _graded(store, "alice", "masked_attention")
        latest = _graded(store, "alice", "masked_attention")
        assert store.regrade_latest() == 2
        status = {u.id: u.status for u in store.history("alice")}
        assert status == {first: "queued", older: "graded", latest: "queued"}
    finally:
        store.close()


@pytest.mark.parametrize("path", ["/submissions/{}", "/submissions/{}/status"])
def test_a_submission_number_past_the_databases_integers_is_no_such_submission(
    tmp_path: Path, path: str
) -> None:
    store = Store(tmp_path / "out")
    try:
        app = make_app(Service(store, Limits(), None))
        client = TestClient(app, follow_redirects=False)
        sign_in(client, issue(store)["alice"])
        for number in (2**63, 10**23):
            answer = client.get(path.format(number))
            assert answer.status_code == 404, answer.text[-300:]
            assert "There is no such submission." in answer.text
    finally:
        store.close()


@pytest.mark.parametrize("dots", [".", ".."])
def test_an_id_no_link_can_name_is_refused_before_any_token(tmp_path: Path, dots: str) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text(f"id,name\nalice,Alice\n{dots},Dots\n")
    code, said = _tokens(tmp_path / "out", "--roster", str(roster))
    assert code == 2
    assert said.strip() == f"Error: {roster} line 3: the id {dots!r} cannot be a student's"


def test_an_upload_sent_without_its_size_is_told_so_not_too_large(tmp_path: Path) -> None:
    store = Store(tmp_path / "out")
    try:
        app = make_app(Service(store, Limits(), None))
        client = TestClient(app, follow_redirects=False)
        form = sign_in(client, issue(store)["alice"])
        body = (
            b"--b\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n" + form.encode()
            + b"\r\n--b--\r\n"
        )  # fmt: skip

        def chunks():  # a generator: sent chunked, without a Content-Length
            yield body

        answer = client.post(
            "/upload",
            content=chunks(),
            headers={"content-type": "multipart/form-data; boundary=b"},
        )
        assert answer.status_code == 411, answer.text[-300:]
        assert "without its size" in answer.text and "too large" not in answer.text
        assert csrf(answer.text)  # the student's page, with its form
    finally:
        store.close()


def test_an_instructor_id_of_a_student_changes_no_token(tmp_path: Path) -> None:
    """The students' tokens were issued (their old links dead) before the instructor's
    clash was found, and no CSV was written to hand the new ones out."""
    out = tmp_path / "out"
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nalice,Alice\nbob,Bob\n")
    store = Store(out)
    try:
        old = {p.id: t for p, t in store.issue([Student("alice", "Alice")], "student")}
    finally:
        store.close()
    code, said = _tokens(out, "--roster", str(roster), "--instructor", "Bob")
    assert (
        code == 2 and said.strip() == "Error: Bob is a student, not an instructor: give another id"
    )
    code, said = _tokens(out, "--instructor", "ALICE")
    assert code == 2 and "ALICE is a student" in said
    store = Store(out)
    try:
        assert store.person_for_token(old["alice"]) is not None  # her link still works
        assert store.people("instructor") == [] and store.person("bob") is None
    finally:
        store.close()


def test_two_spellings_of_one_id_in_one_call_are_one_account(tmp_path: Path) -> None:
    store = Store(tmp_path / "out")
    try:
        store.issue([Student("Ada", "Ada"), Student("ada", "Ada L.")], "instructor")
        assert [(p.id, p.name) for p in store.people("instructor")] == [("Ada", "Ada L.")]
    finally:
        store.close()


def test_the_served_class_exports_every_roster_student_even_one_who_never_uploaded(
    tmp_path: Path,
) -> None:
    # The service kept no roster in its gradebook: `grader export --results OUT` listed only
    # those who uploaded, so an LMS import left the others' grades as they were.
    out = tmp_path / "out"
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text("id,name\nalice,Alice\n")
    second.write_text("id,name,email\nAlice,Alice L.,al@uni.edu\nbob,Bob,bob@uni.edu\n")
    assert _tokens(out, "--roster", str(first))[0] == 0
    assert _tokens(out, "--roster", str(second), "--student", "bob")[0] == 0
    config = load_config(REPO / "config.yaml")
    targets = tuple(
        TargetResult(t.name, "passed", t.points, t.points)
        for t in config.assignment("self_attention").targets
    )
    book = Gradebook(out / "gradebook.sqlite")
    try:  # alice's upload, graded as the service records it (under her account's id)
        book.record(
            "alice", out / "uploads" / "a", "h", "c", Report("self_attention", "a", targets)
        )
    finally:
        book.close()
    command = ["export", "--format", "csv", "--results", str(out), "--out", "-"]
    result = CliRunner().invoke(main, [*command, "-a", "self_attention", "--course", str(REPO)])
    assert result.exit_code == 0, result.stderr
    rows = {row["student"]: row for row in csv.DictReader(io.StringIO(result.stdout))}
    assert list(rows) == ["alice", "bob"]  # the roster's order, alice's account's spelling
    assert float(rows["alice"]["total"]) == sum(t.max_score for t in targets) > 0
    assert rows["alice"]["name"] == "Alice L." and rows["bob"]["problem"] == "no submission"


def _roster_ids(out: Path) -> list[str]:
    book = Gradebook(out / "gradebook.sqlite")
    try:
        return [s.id for s in stored_roster(book) or []]
    finally:
        book.close()


def test_a_token_for_one_student_from_a_partial_file_keeps_the_class(tmp_path: Path) -> None:
    # `--roster new.csv --student dave` replaced the class's roster with new.csv: every
    # graded student left out of it vanished from the exports, exit 0, nothing said.
    out = tmp_path / "out"
    whole, new = tmp_path / "roster.csv", tmp_path / "new.csv"
    whole.write_text("id,name\nalice,Alice\nbob,Bob\ncarol,Carol\n")
    new.write_text("id,name\ndave,Dave\nBOB,Bob B.\n")
    assert _tokens(out, "--roster", str(whole)) == (0, "")
    code, said = _tokens(out, "--roster", str(new), "--student", "dave")
    assert (code, said) == (0, "")
    assert _roster_ids(out) == ["alice", "bob", "carol", "dave"]  # added to, bob's row renewed
    # Without --student the file is the class: whom it leaves out is said, by name.
    code, said = _tokens(out, "--roster", str(new))
    assert code == 0
    assert _roster_ids(out) == ["dave", "bob"]
    assert "the class's roster now leaves out 2 students it had (alice, carol)" in said, said
    assert "their uploads are kept" in said
