"""The web pages: sign-in, a student's uploads and feedback, the instructor's class view.

Every page is rendered on the server from the templates in templates/serve (autoescaped, as
every page of the grader); the only script is static/poll.js, which reloads a page when what
it shows has changed. Whatever names an upload in a URL is its number, and a student asking
for a number that is not theirs gets the same 404 as for one that does not exist.
"""

from __future__ import annotations

import contextlib
import hmac
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from typing import Any
from urllib.parse import quote

from markupsafe import escape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Route

from grader.render.html import render_template
from grader.serve.checks import refusal, uploaded_name
from grader.serve.headers import SecurityHeaders
from grader.serve.launch import lti_routes
from grader.serve.semester import adjust, describe_policy, instructor_notes, notes_html
from grader.serve.service import Denied as Denied
from grader.serve.service import Service as Service
from grader.serve.store import Person, Session

COOKIE = "grader_session"
Handler = Callable[[Request], Awaitable[Response]]


def when(stamp: float) -> str:
    """A time as the pages show it."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))


def _page(
    template: str, status: int = 200, session: Session | None = None, **context: Any
) -> HTMLResponse:
    context.setdefault("error", "")
    body = render_template(
        f"serve/{template}",
        person=session.person if session else None,
        csrf=session.csrf if session else "",
        when=when,
        **context,
    )
    return HTMLResponse(body, status_code=status)


def _session(request: Request) -> Session | None:
    service: Service = request.app.state.service
    key = request.cookies.get(COOKIE, "")
    return service.store.session(key) if key else None


def _set_cookie(request: Request, response: Response, key: str) -> Response:
    service: Service = request.app.state.service
    secure = service.secure_cookies or request.url.scheme == "https"
    response.set_cookie(COOKIE, key, httponly=True, samesite="lax", secure=secure, path="/")
    return response


def _signed_in(request: Request, role: str) -> tuple[Session, Person]:
    session = _session(request)
    if session is None or session.person is None:
        raise Denied(401, "Sign in first.")
    if session.person.role != role:
        raise Denied(403, "This page is not for you.")
    return session, session.person


async def _form(request: Request, session: Session | None, fields: int = 4) -> FormData:
    """The posted form, refused unless it carries the session's CSRF token."""
    form = await request.form(max_files=1, max_fields=fields)
    sent = form.get("csrf")
    if session is None or not isinstance(sent, str) or not _same(sent, session.csrf):
        raise Denied(403, "The form was out of date: reload the page and try again.")
    return form


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def _signed_in_as(request: Request, person: Person) -> Response:
    service: Service = request.app.state.service
    old = request.cookies.get(COOKIE, "")
    if old:
        service.store.end_session(old)
    # A fresh session at sign-in: a session id planted before it is worth nothing after.
    return _set_cookie(request, RedirectResponse("/", 303), service.store.new_session(person))


async def home(request: Request) -> Response:
    """The sign-in form, a student's page, or (instructor) the class."""
    service: Service = request.app.state.service
    session = _session(request)
    if session is None:
        key = service.store.new_session(None)
        session = service.store.session(key)
        return _set_cookie(request, _page("login.html.j2", session=session, title="Sign in"), key)
    if session.person is None:
        return _page("login.html.j2", session=session, title="Sign in")
    if session.person.role == "instructor":
        return RedirectResponse("/class", 303)
    return _student_page(service, session, session.person)


def _student_page(
    service: Service, session: Session, person: Person, error: str = "", status: int = 200
) -> Response:
    attempts, _ = service.store.attempts(person.id)
    return _page(
        "student.html.j2",
        status,
        session,
        title="Submit",
        error=error,
        limits=service.limits,
        attempts=attempts,
        deadlines=_deadlines(service),
        **_history(service, person.id, service.released()),
    )


def _deadlines(service: Service) -> list[tuple[str, str]]:
    """Each assignment with a due date: its title and the date with the late policy."""
    if service.config is None:
        return []
    found = []
    for spec in service.config.assignments.values():
        if spec.late is not None:
            found.append((spec.title or spec.id, describe_policy(spec.late)))
    return found


def _history(service: Service, student: str, whole: bool) -> dict[str, Any]:
    """A student's uploads, the score each shows (the public cases' until the release, for
    a student) and each one's lateness."""
    uploads = service.store.history(student)
    views = service.store.views(student)
    scores = {
        u.id: (u.score, u.max_score)
        if whole or u.id not in views
        else (views[u.id].public_score, views[u.id].public_max)
        for u in uploads
        if u.score is not None
    }
    late = {i: v.late_note for i, v in views.items() if v.late_note}
    return {"uploads": uploads, "scores": scores, "late": late, "partial": not whole}


async def login(request: Request) -> Response:
    """Sign in with a token typed in the form."""
    service: Service = request.app.state.service
    session = _session(request)
    form = await _form(request, session)
    token = form.get("token")
    person = service.store.person_for_token(token) if isinstance(token, str) else None
    if person is None:
        error = "That token is not known: check it, or ask your instructor for a new one."
        return _page("login.html.j2", 401, session, title="Sign in", error=error)
    return _signed_in_as(request, person)


async def link(request: Request) -> Response:
    """Sign in with a personal link (/t/TOKEN)."""
    service: Service = request.app.state.service
    person = service.store.person_for_token(request.path_params["token"])
    if person is None:
        message = "This link is not valid (any more): ask your instructor for a new one."
        return _page("message.html.j2", 404, title="Unknown link", message=message)
    return _signed_in_as(request, person)


async def logout(request: Request) -> Response:
    """Sign out."""
    service: Service = request.app.state.service
    await _form(request, _session(request))
    service.store.end_session(request.cookies.get(COOKIE, ""))
    response = RedirectResponse("/", 303)
    response.delete_cookie(COOKIE, path="/")
    return response


async def upload(request: Request) -> Response:
    """Accept a student's notebook: checked, stored, queued, then on to its page."""
    service: Service = request.app.state.service
    session, person = _signed_in(request, "student")
    limits = service.limits
    size = request.headers.get("content-length", "")
    if not size.isdigit() or int(size) > limits.max_bytes + limits.form_overhead:
        error = f"The file is too large: at most {limits.max_kb} KB."
        return _student_page(service, session, person, error, 413)
    form = await _form(request, session)
    sent = form.get("notebook")
    if not isinstance(sent, UploadFile):
        return _student_page(service, session, person, "Choose a notebook to upload.", 400)
    name = uploaded_name(sent.filename or "")
    data = await sent.read(limits.max_bytes + 1)
    problem = await run_in_threadpool(refusal, service.store, person.id, name, data, limits)
    if problem is not None:
        status, message = problem
        return _student_page(service, session, person, message, status)
    accept = service.store.accept
    upload_id = await run_in_threadpool(
        accept, person.id, name, data, limits.max_attempts, limits.min_interval
    )
    if upload_id is None:  # another upload of theirs came in meanwhile
        message = "You reached the attempt or rate limit: reload the page to see your attempts."
        return _student_page(service, session, person, message, 429)
    if service.grading is not None:
        service.grading.wake()
    return RedirectResponse(f"/submissions/{upload_id}", 303)


def _visible_upload(request: Request) -> tuple[Session, int]:
    """The upload in the URL, if this session may see it (its student, or an instructor)."""
    service: Service = request.app.state.service
    session = _session(request)
    if session is None or session.person is None:
        raise Denied(401, "Sign in first.")
    found = service.store.upload(request.path_params["upload"])
    person = session.person
    if found is None or (person.role != "instructor" and found.student != person.id):
        raise Denied(404, "There is no such submission.")
    return session, found.id


async def submission(request: Request) -> Response:
    """An upload's feedback page when graded, else where it stands (reloaded when it moves)."""
    service: Service = request.app.state.service
    session, upload_id = _visible_upload(request)
    found = service.store.upload(upload_id)
    assert found is not None
    if found.status == "graded":
        view = service.store.view(upload_id)
        whole = session.person is not None and session.person.role == "instructor"
        if view is not None and not whole and not service.released():
            page = view.public_page  # the hidden cases' feedback waits for the release
        else:
            page = service.store.page(upload_id) or ""
        stamp = escape(when(found.received_at))
        back = f'<nav><a href="/">← back</a> · submission {found.id}, {stamp}</nav>\n'
        if view is not None:
            lines = await run_in_threadpool(
                instructor_notes, service.store.out, found.student, view.assignment
            )
            back += notes_html(lines)
        return HTMLResponse(page.replace("<body>\n", f"<body>\n{back}", 1))
    return _page("waiting.html.j2", session=session, title="Submission", upload=found)


async def submission_state(request: Request) -> Response:
    """Where an upload stands, for poll.js."""
    service: Service = request.app.state.service
    _, upload_id = _visible_upload(request)
    found = service.store.upload(upload_id)
    assert found is not None
    return JSONResponse({"state": found.status})


def _class_state(service: Service) -> str:
    counts = service.store.counts()
    return ",".join(f"{k}={counts[k]}" for k in sorted(counts)) + f";{service.store.last_id()}"


async def class_view(request: Request) -> Response:
    """The instructor's live view: each student's attempts, last status and score."""
    service: Service = request.app.state.service
    session, _ = _signed_in(request, "instructor")
    latest = service.store.latest()
    grading = service.grading
    people = service.store.people("student")
    # Quoted whole: an id with a slash in it stays one segment of the URL.
    links = {s.id: f"/class/students/{quote(s.id, safe='')}" for s in people}
    return _page(
        "class.html.j2",
        session=session,
        title="Class",
        students=people,
        links=links,
        latest=latest,
        attempts=service.store.attempt_counts(),
        counts=service.store.counts(),
        state=_class_state(service),
        failed=grading.failed if grading else "",
        released=service.released(),
        configured=service.config is not None and service.config.serve.release_hidden,
    )


async def class_state(request: Request) -> Response:
    """What the class view shows has changed when this has (for poll.js)."""
    service: Service = request.app.state.service
    _signed_in(request, "instructor")
    return JSONResponse({"state": _class_state(service)})


async def student_history(request: Request) -> Response:
    """One student's attempts, for the instructor."""
    service: Service = request.app.state.service
    session, _ = _signed_in(request, "instructor")
    student = service.store.person(request.path_params["student"])
    if student is None or student.role != "student":
        raise Denied(404, "There is no such student.")
    return _page(
        "person.html.j2",
        session=session,
        title=student.id,
        student=student,
        assignments=_graded_assignments(service, student.id),
        targets=_targets(service),
        adjust_url=f"/class/students/{quote(student.id, safe='')}/adjust",
        **_history(service, student.id, True),
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
    session, instructor = _signed_in(request, "instructor")
    form = await _form(request, session, fields=6)
    student = service.store.person(request.path_params["student"])
    if student is None or student.role != "student":
        raise Denied(404, "There is no such student.")
    values = {
        k: str(form.get(k) or "").strip() for k in ("assignment", "target", "points", "comment")
    }
    problem = _adjust_problem(service, student.id, values)
    if problem:
        raise Denied(400, problem)
    points = float(values["points"]) if values["points"] else None
    await run_in_threadpool(
        adjust,
        service.store.out,
        student.id,
        values["assignment"],
        values["target"],
        points,
        values["comment"],
        instructor.id,
    )
    return RedirectResponse(f"/class/students/{quote(student.id, safe='')}", 303)


def _adjust_problem(service: Service, student: str, values: dict[str, str]) -> str:
    """Why an override or comment cannot be made ("" when it can)."""
    if values["assignment"] not in _graded_assignments(service, student):
        return "Choose an assignment this student has a graded upload of."
    targets = _targets(service).get(values["assignment"])
    if values["target"] and targets is not None and values["target"] not in targets:
        return f"{values['target']} is not a target of {values['assignment']}."
    if not values["points"]:
        return "" if values["comment"] else "Give points to set, or a comment."
    try:
        points = float(values["points"])
    except ValueError:
        return f"{values['points']!r} is not a number of points."
    return "" if math.isfinite(points) and points >= 0 else "Points are a number ≥ 0."


async def release(request: Request) -> Response:
    """Release the hidden cases' feedback to every student (or take it back)."""
    service: Service = request.app.state.service
    session, _ = _signed_in(request, "instructor")
    form = await _form(request, session)
    service.store.release_hidden(form.get("release") == "1")
    return RedirectResponse("/class", 303)


async def regrade(request: Request) -> Response:
    """Queue every student's latest upload again."""
    service: Service = request.app.state.service
    session, _ = _signed_in(request, "instructor")
    await _form(request, session)
    service.store.regrade_latest()
    if service.grading is not None:
        service.grading.wake()
    return RedirectResponse("/class", 303)


POLL_JS = resources.files("grader").joinpath("templates/serve/poll.js").read_bytes()


async def poll_js(request: Request) -> Response:
    """The pages' one script."""
    return Response(POLL_JS, media_type="text/javascript")


async def no_icon(request: Request) -> Response:
    """No favicon (a browser asks for one on every page; a 404 would be a console error)."""
    return Response(status_code=204)


async def _denied(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Denied)
    if exc.status == 401:
        return RedirectResponse("/", 303)
    session = _session(request)
    title = "Not found" if exc.status == 404 else "Not allowed"
    return _page("message.html.j2", exc.status, session, title=title, message=str(exc))


def make_app(service: Service) -> Starlette:
    """The service's ASGI application. The grader (if any) starts and stops with it."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if service.grading is not None:
            service.grading.start()
        try:
            yield
        finally:
            if service.grading is not None:
                await run_in_threadpool(service.grading.stop, service.grace)
                left = service.store.counts()
                waiting = left.get("queued", 0) + left.get("running", 0)
                print(f"stopped; {waiting} uploads wait for the next start", flush=True)

    routes = [
        Route("/", home),
        Route("/login", login, methods=["POST"]),
        Route("/t/{token}", link),
        Route("/logout", logout, methods=["POST"]),
        Route("/upload", upload, methods=["POST"]),
        Route("/submissions/{upload:int}", submission),
        Route("/submissions/{upload:int}/status", submission_state),
        Route("/class", class_view),
        Route("/class/state", class_state),
        Route("/class/students/{student:path}/adjust", adjust_student, methods=["POST"]),
        Route("/class/students/{student:path}", student_history),
        Route("/class/release", release, methods=["POST"]),
        Route("/class/regrade", regrade, methods=["POST"]),
        *lti_routes(_page, _signed_in_as),
        Route("/static/poll.js", poll_js),
        Route("/favicon.ico", no_icon),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={Denied: _denied})
    app.state.service = service
    app.add_middleware(SecurityHeaders)
    return app
