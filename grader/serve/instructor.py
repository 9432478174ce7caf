"""The instructor's pages: the live class view, a student's attempts, overrides and comments,
the release of the hidden cases' feedback, and a regrade of the class."""

from __future__ import annotations

import math
import re
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from grader.errors import UsageError
from grader.serve.pages import counted, form_of, history, page, signed_in
from grader.serve.semester import adjust, clear, in_force, overridden_totals
from grader.serve.service import Denied, Service


def _class_state(service: Service) -> str:
    counts = service.store.counts()
    return ",".join(f"{k}={counts[k]}" for k in sorted(counts)) + f";{service.store.last_id()}"


async def class_view(request: Request) -> Response:
    """The instructor's live view: each student's attempts, last status and score."""
    service: Service = request.app.state.service
    session, _ = signed_in(request, "instructor")
    latest = service.store.latest()
    late = service.store.late_percents()
    scores = {
        student: counted(u.score, u.max_score, late.get(u.id, 0.0))
        for student, u in latest.items()
        if u.score is not None and u.max_score is not None
    }
    grading = service.grading
    people = service.store.people("student")
    assignment_of = service.store.assignments()
    overridden = overridden_totals(
        service.store.gradebook(),
        {s: assignment_of[u.id] for s, u in latest.items() if u.id in assignment_of},
    )
    # Quoted whole: an id with a slash in it stays one segment of the URL.
    links = {s.id: f"/class/students/{quote(s.id, safe='')}" for s in people}
    return page(
        "class.html.j2",
        session=session,
        title="Class",
        students=people,
        links=links,
        latest=latest,
        scores=scores,
        assignment_of=assignment_of,
        overridden=overridden,
        hidden=service.hidden(),
        attempts=service.store.attempt_counts(),
        counts=service.store.counts(),
        state=_class_state(service),
        failed="; ".join(filter(None, (grading.failed, grading.extensions, grading.busy)))
        if grading
        else "",
        released=service.released(),
        configured=service.config is not None and service.config.serve.release_hidden,
    )


async def class_state(request: Request) -> Response:
    """What the class view shows has changed when this has (for poll.js)."""
    service: Service = request.app.state.service
    signed_in(request, "instructor")
    return JSONResponse({"state": _class_state(service)})


async def student_history(request: Request) -> Response:
    """One student's attempts, for the instructor."""
    service: Service = request.app.state.service
    session, _ = signed_in(request, "instructor")
    student = service.store.person(request.path_params["student"])
    if student is None or student.role != "student":
        raise Denied(404, "There is no such student.")
    assignments = _graded_assignments(service, student.id)
    return page(
        "person.html.j2",
        session=session,
        title=student.id,
        student=student,
        assignments=assignments,
        in_force=await run_in_threadpool(
            in_force, service.store.gradebook(), student.id, assignments, service.config
        ),
        targets=_targets(service),
        adjust_url=f"/class/students/{quote(student.id, safe='')}/adjust",
        **history(service, student.id, True),
    )


def _graded_assignments(service: Service, student: str) -> list[str]:
    """The assignments a student has a graded upload of, newest first."""
    return list(
        dict.fromkeys(
            v.assignment for _, v in sorted(service.store.views(student).items(), reverse=True)
        )
    )


def _targets(service: Service) -> dict[str, list[str]]:
    """Each assignment's target names (what an override may set)."""
    if service.config is None:
        return {}
    return {a.id: [t.name for t in a.targets] for a in service.config.assignments.values()}


async def adjust_student(request: Request) -> Response:
    """An instructor's override (points, optionally of one target) or comment for a student:
    kept in the served class's gradebook, shown on the student's feedback pages."""
    service: Service = request.app.state.service
    session, instructor = signed_in(request, "instructor")
    form = await form_of(request, session, fields=6)
    student = service.store.person(request.path_params["student"])
    if student is None or student.role != "student":
        raise Denied(404, "There is no such student.")
    values = {
        k: str(form.get(k) or "").strip() for k in ("assignment", "target", "points", "comment")
    }
    if form.get("clear") == "1":  # the form's second button: the grader's points count again
        return await _clear(service, student.id, values)
    problem = _adjust_problem(service, student.id, values)
    if problem:
        raise Denied(400, problem)
    points = float(values["points"]) if values["points"] else None
    try:
        await run_in_threadpool(
            adjust,
            service.store.gradebook(),
            student.id,
            values["assignment"],
            values["target"],
            points,
            values["comment"],
            instructor.id,
        )
    except UsageError as refused:  # a total that would be no finite number
        raise Denied(400, str(refused)) from None
    return RedirectResponse(f"/class/students/{quote(student.id, safe='')}", 303)


async def _clear(service: Service, student: str, values: dict[str, str]) -> Response:
    """Remove an override (the assignment's and target's of the form), as `grader override
    --clear` does; a 400 page when there is none to clear."""
    if values["assignment"] not in _graded_assignments(service, student):
        raise Denied(400, "Choose an assignment this student has a graded upload of.")
    found = await run_in_threadpool(
        clear, service.store.gradebook(), student, values["assignment"], values["target"]
    )
    if not found:
        what = values["target"] or "the total"
        raise Denied(
            400, f"{student} has no override of {what} in {values['assignment']} to clear."
        )
    return RedirectResponse(f"/class/students/{quote(student, safe='')}", 303)


MOST_COMMENT = 2000
POINTS = re.compile(r"^\d{1,9}(?:\.\d{1,6})?$")


def _adjust_problem(service: Service, student: str, values: dict[str, str]) -> str:
    """Why an override or comment cannot be made ("" when it can)."""
    if values["assignment"] not in _graded_assignments(service, student):
        return "Choose an assignment this student has a graded upload of."
    targets = _targets(service).get(values["assignment"])
    if values["target"] and targets is not None and values["target"] not in targets:
        return f"{values['target']} is not a target of {values['assignment']}."
    if len(values["comment"]) > MOST_COMMENT:  # the form's maxlength, held here too
        return f"A comment is at most {MOST_COMMENT:,} characters."
    if not values["points"]:
        return "" if values["comment"] else "Give points to set, or a comment."
    if values["points"].strip().startswith("-"):
        return f"{values['points']!r}: points are a number at least 0 (e.g. 0, 7 or 7.5)."
    if not POINTS.match(values["points"]):  # float() takes `1_000`, ` inf`, `1e3`
        return f"{values['points']!r} is not a number of points (e.g. 7 or 7.5)."
    points = float(values["points"])
    return "" if math.isfinite(points) and points >= 0 else "Points are a number ≥ 0."


async def release(request: Request) -> Response:
    """Release the hidden cases' feedback to every student (or take it back)."""
    service: Service = request.app.state.service
    session, _ = signed_in(request, "instructor")
    form = await form_of(request, session)
    service.store.release_hidden(form.get("release") == "1")
    return RedirectResponse("/class", 303)


async def regrade(request: Request) -> Response:
    """Queue every student's latest upload again (every graded one of an assignment that
    keeps the best)."""
    service: Service = request.app.state.service
    session, _ = signed_in(request, "instructor")
    await form_of(request, session)
    config = service.config
    best = [s.id for s in config.assignments.values() if s.keep == "best"] if config else []
    service.store.regrade_latest(best)
    if service.grading is not None:
        service.grading.wake()
    return RedirectResponse("/class", 303)


def instructor_routes() -> list[Route]:
    """The instructor's routes (every handler refuses anyone but an instructor)."""
    return [
        Route("/class", class_view),
        Route("/class/state", class_state),
        Route("/class/students/{student:path}/adjust", adjust_student, methods=["POST"]),
        Route("/class/students/{student:path}", student_history),
        Route("/class/release", release, methods=["POST"]),
        Route("/class/regrade", regrade, methods=["POST"]),
    ]
