"""`grader serve` shows the semester: each upload's deadline, lateness and penalty; the
instructor's overrides and comments; and the hidden cases' feedback only once released
(the config's `serve: release_hidden`, or the instructor's button). Through Starlette's
TestClient, with uploads graded by hand (tests/test_serve_grading.py grades for real)."""

from __future__ import annotations

import html
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from grader.batch.gradebook import Gradebook
from grader.batch.records import save_roster
from grader.batch.roster import Student as RosterStudent
from grader.cli import main
from grader.course.config import Config, load_config
from grader.report import Finding, Report, TargetResult
from grader.serve.app import Service, make_app
from grader.serve.checks import Limits
from grader.serve.semester import (
    HIDDEN_LATER,
    graded_view,
    public_report,
    public_target,
    record_late,
)
from grader.serve.server import hold
from grader.serve.store import Store

from conftest import repo_config_raw
from serving import csrf, issue, sign_in

DAY = 86400.0


def course(tmp_path: Path, **serve: Any) -> Config:
    """The bundled course with self_attention due a day ago (10% per started day, capped at
    50%) and `softmax` graded on one public and two hidden cases."""
    raw = repo_config_raw()
    spec = raw["assignments"]["self_attention"]
    due = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() - DAY))
    spec.update(due=due, late={"percent": 10, "per": "day", "cap": 50})
    spec["targets"]["softmax"]["public_cases"] = 1
    raw["serve"] = serve
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "config.yaml").write_text(json.dumps(raw))
    return load_config(folder / "config.yaml")


def report(config: Config) -> Report:
    """A self_attention report: `softmax` passes its public case and fails a hidden one."""
    spec = config.assignment("self_attention")
    targets = []
    for t in spec.targets:
        if t.name == "softmax":
            outcomes = ("passed", "failed", "passed")
            targets.append(
                TargetResult(
                    t.name, "failed", 0.0, t.points, ("HIDDEN-CASE-DIAGNOSIS",), (), None,
                    2, 3, outcomes, public_cases=1,
                )
            )  # fmt: skip
        else:
            targets.append(TargetResult(t.name, "passed", t.points, t.points))
    return Report("self_attention", "alice.ipynb", tuple(targets))


class Served:
    """A served class with one graded upload of alice's, a day and a bit late."""

    def __init__(self, tmp_path: Path, config: Config) -> None:
        self.store = Store(tmp_path / "out")
        self.tokens = issue(self.store)
        self.app = make_app(Service(self.store, Limits(min_interval=0), None, config=config))
        self.config = config
        self.received = received = time.time()
        self.upload = self.store.accept("alice", "alice.ipynb", b"{}")
        assert self.upload is not None and self.store.claim(1)
        spec = config.assignment("self_attention")
        self.report = report(config)
        page, view = graded_view(
            config.path.parent, "alice", spec, self.report, None, received + 3600
        )
        score, most = self.report.score, self.report.max_score
        assert self.store.finish(self.upload, score, most, page, "", view)

    def client(self, who: str) -> tuple[TestClient, str]:
        client = TestClient(self.app, follow_redirects=False)
        return client, sign_in(client, self.tokens[who])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    served = Served(tmp_path, course(tmp_path))
    yield served
    served.store.close()


def test_the_public_report_scores_the_public_cases_and_keeps_the_hidden_diagnosis_back(
    tmp_path: Path,
) -> None:
    full = report(course(tmp_path))
    public = public_report(full)
    soft = next(t for t in public.targets if t.name == "softmax")
    points = next(t.max_score for t in full.targets if t.name == "softmax")
    assert soft.status == "passed" and soft.case_outcomes == ("passed",)
    assert soft.max_score == pytest.approx(points / 3) and soft.messages == ()
    assert public.max_score == pytest.approx(full.max_score - 2 * points / 3)
    assert HIDDEN_LATER in public.notes and HIDDEN_LATER not in full.notes


def test_all_or_nothing_the_public_view_is_the_same_whatever_the_hidden_cases_did() -> None:
    # partial_credit: false gave 0 points to a target whose public cases all passed when a
    # hidden one failed: the student's page told the hidden failure before the release (r50).
    views = []
    for hidden, score in ((("passed", "passed"), 3.0), (("passed", "failed"), 0.0)):
        outcomes = ("passed", *hidden)
        full = TargetResult(
            "softmax", "passed" if score else "failed", score, 3.0, cases_passed=3 - (not score),
            cases_total=3, case_outcomes=outcomes, public_cases=1, all_or_nothing=True,
        )  # fmt: skip
        public = public_target(full)
        views.append((public.status, public.score, public.max_score, public.messages))
    assert views[0] == views[1] == ("passed", 1.0, 1.0, ())


def test_a_failed_public_case_shows_no_line_of_a_hidden_case() -> None:
    hidden_line = "case 3 (N=5): expected -2.00527, got 0.1"
    target = TargetResult(
        "standardize",
        "failed",
        0.0,
        3.0,
        cases_total=3,
        cases_passed=0,
        case_outcomes=("failed", "failed", "failed"),
        public_cases=1,
        mistakes=("variance_without_eps",),
        findings=(
            Finding("summary", "3 of 3 cases failed"),
            Finding("case", hidden_line),
            Finding("mistake", "divides by the variance", mistake="variance_without_eps"),
        ),
        messages=("3 of 3 cases failed", hidden_line, "divides by the variance"),
    )
    public = public_target(target)
    assert public.messages == ("1 of 1 public case failed", "divides by the variance")
    assert [f.kind for f in public.findings] == ["summary", "mistake"]
    assert public.max_score == pytest.approx(1.0) and public.cases_total == 1


@pytest.mark.parametrize(
    ("outcomes", "status"),
    [
        (("failed", "timeout", "passed"), "failed"),
        (("error", "timeout", "failed"), "error"),
        (("timeout", "passed", "passed"), "timeout"),
        (("failed", "error", "error"), "failed"),
    ],
)
def test_the_status_word_is_the_public_cases_own(outcomes: tuple[str, ...], status: str) -> None:
    # r48 F1: a function failing its public case that looped only on a hidden one showed
    # "timeout" (else "failed"): one upload per bit of a hidden input, before the release.
    whole = "timeout" if "timeout" in outcomes else "failed"
    ran_out = "fix `helper` first: `f` calls it, and `helper` never finished; stuck at line 2"
    target = TargetResult(
        "f", whole, 0.0, 3.0, cases_total=3, cases_passed=outcomes.count("passed"),
        case_outcomes=outcomes, public_cases=1,
        findings=(Finding("summary", "2 of 3 cases failed"), Finding("callee", ran_out)),
    )  # fmt: skip
    public = public_target(target)
    assert public.status == status
    assert (ran_out in public.messages) == (status == "timeout"), public.messages


def test_a_student_reads_public_feedback_until_the_instructor_releases_the_hidden_cases(
    served: Served,
) -> None:
    student, _ = served.client("alice")
    before = student.get(f"/submissions/{served.upload}").text
    assert "graded later" in before and "HIDDEN-CASE-DIAGNOSIS" not in before
    home = student.get("/").text
    public = public_report(served.report)
    view = served.store.view(served.upload)
    assert view is not None and view.late_percent == 20  # a day and an hour late
    counted = public.score * 0.8
    shown = f"{counted:g} / {public.max_score:g} <small>(autograded {public.score:g})</small>"
    assert f"{shown} (public cases)" in home and 'id="hidden-later"' in home
    assert view is not None and (view.public_score, view.public_max) == (
        public.score,
        public.max_score,
    )
    instructor, _ = served.client("ada")
    assert "HIDDEN-CASE-DIAGNOSIS" in instructor.get(f"/submissions/{served.upload}").text
    # Only an instructor can release; a student's try is refused.
    assert (
        student.post("/class/release", data={"csrf": csrf(home), "release": "1"}).status_code == 403
    )
    page = instructor.get("/class").text
    assert (
        instructor.post("/class/release", data={"csrf": csrf(page), "release": "1"}).status_code
        == 303
    )
    after = student.get(f"/submissions/{served.upload}").text
    assert "HIDDEN-CASE-DIAGNOSIS" in after and "graded later" not in after
    assert "(public cases)" not in student.get("/").text


def test_the_config_can_release_the_hidden_cases_from_the_start(tmp_path: Path) -> None:
    served = Served(tmp_path, course(tmp_path, release_hidden=True))
    student, _ = served.client("alice")
    assert "HIDDEN-CASE-DIAGNOSIS" in student.get(f"/submissions/{served.upload}").text
    served.store.close()


def test_the_deadline_lateness_and_penalty_are_on_the_students_pages(served: Served) -> None:
    student, _ = served.client("alice")
    home = student.get("/").text
    assert 'id="deadlines"' in home and "10% off per day late, at most 50%" in home
    assert "after the due date" in home and "late penalty 20%" in home  # a day and an hour
    page = student.get(f"/submissions/{served.upload}").text
    assert "Late:" in page and "late penalty 20%" in page


def _past_cutoff(tmp_path: Path, keep: str) -> Config:
    """The course of `course`, its cut-off an hour ago, keeping the student's `keep` upload."""
    config = course(tmp_path)
    raw = json.loads(config.path.read_text())
    spec = raw["assignments"]["self_attention"]
    spec["late"]["cutoff"] = time.strftime(
        "%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() - 3600)
    )
    spec["keep"] = keep
    config.path.write_text(json.dumps(raw))
    return load_config(config.path)


@pytest.mark.parametrize(
    ("keep", "said"),
    [
        ("latest", "an upload now scores 0 (it replaces your grade)"),
        ("best", "an upload now scores 0 (your best upload still counts)"),
    ],
)
def test_the_form_warns_what_an_upload_past_the_cut_off_does(
    tmp_path: Path, keep: str, said: str
) -> None:
    # An upload after the cut-off was accepted and, as the latest, replaced an on-time grade
    # with 0, with nothing on the form to say so before the attempt was spent (r48 F4).
    served = Served(tmp_path, _past_cutoff(tmp_path, keep))
    try:
        student, _ = served.client("alice")
        home = html.unescape(student.get("/").text)
        assert f"the cut-off has passed: {said}" in home
        assert f"your {keep} upload counts" in home
    finally:
        served.store.close()


def test_the_form_says_what_an_upload_past_the_due_date_costs(served: Served) -> None:
    student, _ = served.client("alice")
    home = html.unescape(student.get("/").text)
    # due a day and a moment ago, 10% per started day: an upload now is 2 days late
    assert "past the due date: an upload now loses 20% (as your latest, it is the one" in home
    assert "cut-off has passed" not in home


def test_an_override_above_its_maximum_is_said_on_the_instructors_page(served: Served) -> None:
    instructor, _ = served.client("ada")
    page = instructor.get("/class/students/alice").text
    form = {"csrf": csrf(page), "assignment": "self_attention", "target": "softmax"}
    for points in ("999999999", "0.5"):
        sent = instructor.post("/class/students/alice/adjust", data={**form, "points": points})
        assert sent.status_code == 303
        shown = html.unescape(instructor.get("/class/students/alice").text)
        most = served.config.assignment("self_attention").target("softmax").points
        above = f"(note: softmax set to 1e+09, above its maximum of {most:g})"
        assert (above in shown) == (points == "999999999"), shown


def test_an_instructors_override_and_comment_reach_only_that_student(served: Served) -> None:
    instructor, _ = served.client("ada")
    page = instructor.get("/class/students/alice").text
    form = {"csrf": csrf(page), "assignment": "self_attention", "target": "softmax"}
    sent = instructor.post(
        "/class/students/alice/adjust", data={**form, "points": "2.5", "comment": "<b>x</b>"}
    )
    assert sent.status_code == 303
    note = {**form, "target": "", "points": "", "comment": "see me after class"}
    assert instructor.post("/class/students/alice/adjust", data=note).status_code == 303
    student, _ = served.client("alice")
    shown = student.get(f"/submissions/{served.upload}").text
    assert "softmax set to 2.5 by ada" in shown and "see me after class" in shown
    assert "&lt;b&gt;x&lt;/b&gt;" in shown and "<b>x</b>" not in shown
    for bad in ({"points": "-1"}, {"points": "lots"}, {"target": "nope", "points": "1"}, {}):
        answer = instructor.post("/class/students/alice/adjust", data={**form, "points": "", **bad})
        assert answer.status_code == 400, bad
        # r40: a form filled wrongly was titled "Not allowed", as if the instructor had no right
        assert "<h1>Not done</h1>" in answer.text and "Not allowed" not in answer.text
    negative = instructor.post("/class/students/alice/adjust", data={**form, "points": "-1"})
    assert "points are a number at least 0" in html.unescape(negative.text)
    # Points as a person writes them: float() also took `1_000`, `1e308` (twice: an infinite
    # total) and ` inf`; and the form's 2,000-character comment limit is held here too.
    for points in ("1_000", "1e308", "inf", "0x10", "1.5.0"):
        answer = instructor.post("/class/students/alice/adjust", data={**form, "points": points})
        assert answer.status_code == 400 and "is not a number of points" in answer.text, points
    long = {**form, "points": "", "comment": "x" * 2001}
    answer = instructor.post("/class/students/alice/adjust", data=long)
    assert answer.status_code == 400 and "at most 2,000 characters" in answer.text
    # A student cannot set points, for themselves or anyone.
    mine = csrf(student.get("/").text)
    tried = student.post("/class/students/alice/adjust", data={**form, "csrf": mine, "points": "9"})
    assert tried.status_code == 403 and "<h1>Not allowed</h1>" in tried.text
    bob, _ = served.client("bob")
    assert bob.get(f"/submissions/{served.upload}").status_code == 404


def test_the_instructor_sees_the_overrides_in_force_and_clears_one(served: Served) -> None:
    # r40: the form could set an override but not take one back, and the student's page
    # for the instructor did not list the overrides in force.
    instructor, _ = served.client("ada")
    page = instructor.get("/class/students/alice").text
    assert 'id="in-force"' not in page
    form = {"csrf": csrf(page), "assignment": "self_attention", "target": "softmax"}
    sent = instructor.post("/class/students/alice/adjust", data={**form, "points": "2.5"})
    assert sent.status_code == 303
    page = instructor.get("/class/students/alice").text
    assert 'id="in-force"' in page and "self_attention: softmax set to 2.5 by ada" in page
    cleared = instructor.post("/class/students/alice/adjust", data={**form, "clear": "1"})
    assert cleared.status_code == 303
    page = instructor.get("/class/students/alice").text
    assert "softmax set to 2.5" not in page
    student, _ = served.client("alice")
    assert "softmax set to 2.5" not in student.get(f"/submissions/{served.upload}").text
    again = instructor.post("/class/students/alice/adjust", data={**form, "clear": "1"})
    assert again.status_code == 400
    assert "alice has no override of softmax in self_attention to clear" in html.unescape(
        again.text
    )


def test_a_feedback_page_says_the_total_an_override_makes(served: Served) -> None:
    """The page kept from grading shows the grader's points; an override later put only its
    own line above them (r40: "softmax set to 2.5" over a page of 0 / 1): the total that
    counts now comes first, as the exports have it (late penalty applied)."""
    # the gradebook holds the upload's report and lateness, as grading.py records them
    book = Gradebook(served.store.gradebook())
    try:
        book.record("alice", Path("alice.ipynb"), "content", "settings", served.report)
        spec = served.config.assignment("self_attention")
        record_late(book, served.config.path.parent, "alice", spec, served.received + 3600)
        book.flush()
    finally:
        book.close()
    instructor, _ = served.client("ada")
    student, _ = served.client("alice")
    before = student.get(f"/submissions/{served.upload}").text
    assert "Your grade for this assignment is now" not in before  # nothing changed by hand
    page = instructor.get("/class/students/alice").text
    form = {"csrf": csrf(page), "assignment": "self_attention", "target": "softmax"}
    sent = instructor.post("/class/students/alice/adjust", data={**form, "points": "2.5"})
    assert sent.status_code == 303
    full = served.report
    others = sum(t.score for t in full.targets if t.name != "softmax")
    total = round((others + 2.5) * 0.8, 6)  # a day and an hour late: 20%
    said = f"Your grade for this assignment is now {total:g} of {full.max_score:g} points"
    # r48 F2: before the hidden cases' release the total would show what they gave
    unreleased = student.get(f"/submissions/{served.upload}").text
    assert "softmax set to 2.5 by ada" in unreleased
    assert "Your grade for this assignment is now" not in unreleased
    assert said in instructor.get(f"/submissions/{served.upload}").text
    released = {"csrf": csrf(instructor.get("/class").text), "release": "1"}
    assert instructor.post("/class/release", data=released).status_code == 303
    shown = student.get(f"/submissions/{served.upload}").text
    assert said in shown
    assert shown.index(said) < shown.index("softmax set to 2.5 by ada")
    # r40: the class page still showed the autograded points after the penalty
    row = f"{total:g} / {full.max_score:g} <small>(with your override; autograded {full.score:g})"
    assert row in instructor.get("/class").text


def test_pages_show_the_points_that_count_after_the_late_penalty(served: Served) -> None:
    # The class page and the history showed the autograded score of a late upload, as if
    # the penalty the feedback page states did not apply.
    full = served.report
    instructor, _ = served.client("ada")
    row = f"{full.score * 0.8:g} / {full.max_score:g} <small>(autograded {full.score:g}, late)"
    assert row in instructor.get("/class").text
    history = instructor.get("/class/students/alice").text
    assert f"{full.score * 0.8:g} / {full.max_score:g} <small>(autograded {full.score:g})" in (
        history
    )
    assert "time from the moment grader serve received the upload" in history


def test_the_class_page_and_histories_name_the_assignment_of_each_upload(
    served: Served,
) -> None:
    # A service serving several assignments showed a last score without saying of which.
    instructor, _ = served.client("ada")
    cell = '<td class="assignment">self_attention</td>'
    assert cell in instructor.get("/class").text
    assert cell in instructor.get("/class/students/alice").text
    student, _ = served.client("alice")
    assert cell in student.get("/").text


def test_a_course_without_hidden_cases_says_so_and_offers_no_release(tmp_path: Path) -> None:
    config = course(tmp_path)
    raw = repo_config_raw()  # the bundled course: every case public
    (config.path.parent / "config.yaml").write_text(json.dumps(raw))
    served = Served(tmp_path, load_config(config.path))
    try:
        instructor, _ = served.client("ada")
        page = instructor.get("/class").text
        assert "no hidden cases" in page and 'id="release"' not in page
        student, _ = served.client("alice")
        home = student.get("/").text
        assert "(public cases)" not in home and 'id="hidden-later"' not in home
    finally:
        served.store.close()


def test_grader_override_on_a_served_folder_writes_no_files_that_go_stale(
    served: Served, tmp_path: Path
) -> None:
    """r40: `grader override` on a service's folder wrote grades.csv, report.html and a
    feedback page there, stale at the next upload (the service's pages read the gradebook),
    and told of a student not on its roster to run `grader grade`."""
    out = tmp_path / "out"
    lock = hold(out, None)
    assert lock is not None
    book = Gradebook(served.store.gradebook())  # as the service's grading records an upload
    book.record("alice", Path("alice.ipynb"), "c0ffee", "settings", served.report)
    book.flush()
    book.close()
    instructor, _ = served.client("ada")
    page = instructor.get("/class/students/alice").text
    form = {"csrf": csrf(page), "assignment": "self_attention", "target": "softmax"}
    assert (
        instructor.post("/class/students/alice/adjust", data={**form, "points": "1"}).status_code
        == 303
    )
    where = [
        "-a",
        "self_attention",
        "--results",
        str(out),
        "--course",
        str(served.config.path.parent),
    ]
    done = CliRunner().invoke(main, ["override", "alice", "softmax", "--points", "2.5", *where])
    assert done.exit_code == 0, done.output
    assert f"{out} is a grader serve folder: its pages show this now" in done.output
    assert not {"grades.csv", "report.html", "feedback"} & {p.name for p in out.iterdir()}
    student, _ = served.client("alice")
    assert "softmax set to 2.5 by" in student.get(f"/submissions/{served.upload}").text
    unknown = CliRunner().invoke(main, ["comment", "zed", "hello", *where])
    assert unknown.exit_code == 2
    assert f"zed: no upload of theirs has been graded by the service in {out}" in unknown.output
    book = Gradebook(served.store.gradebook())
    save_roster(book, [RosterStudent("alice", "Alice")])  # as `grader serve tokens --roster`
    book.close()
    unknown = CliRunner().invoke(main, ["comment", "zed", "hello", *where])
    assert "zed: no such student on the service's roster (add them" in unknown.output
    assert "grader grade" not in unknown.output
    lock.close()


def test_public_cases_is_said_only_of_an_upload_whose_assignment_hides_some(
    served: Served,
) -> None:
    # r48 S2: every upload read "(public cases)" once any assignment of the course had
    # hidden cases, an upload of one without any too.
    whole = Report(
        "self_attention",
        "alice.ipynb",
        tuple(
            TargetResult(t.name, "passed", t.max_score, t.max_score) for t in served.report.targets
        ),
    )
    second = served.store.accept("alice", "alice.ipynb", b"{ }")
    assert second is not None and served.store.claim(1)
    spec = served.config.assignment("self_attention")
    page, view = graded_view(served.config.path.parent, "alice", spec, whole, None, time.time())
    assert view.public_max == whole.max_score  # nothing hidden in this one's report
    assert served.store.finish(second, whole.score, whole.max_score, page, "", view)
    student, _ = served.client("alice")
    rows = [r for r in student.get("/").text.split("<tr") if "/submissions/" in r]
    marked = {str(served.upload): False, str(second): False}
    for row in rows:
        for number in marked:
            if f'/submissions/{number}"' in row:
                marked[number] = "(public cases)" in row
    assert marked == {str(served.upload): True, str(second): False}, rows
