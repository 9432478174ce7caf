"""The web application: sign-in, a student's uploads and feedback (here), the instructor's
pages (instructor.py) and the LTI launch (launch.py), on the helpers of pages.py.

Every page is rendered on the server from the templates in templates/serve (autoescaped, as
every page of the grader); the only script is static/poll.js, which reloads a page when what
it shows has changed. Whatever names an upload in a URL is its number, and a student asking
for a number that is not theirs gets the same 404 as for one that does not exist.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from importlib import resources

from markupsafe import escape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from grader.batch.lateness import matched_hours
from grader.serve.checks import refusal, uploaded_name
from grader.serve.headers import SecurityHeaders
from grader.serve.instructor import instructor_routes
from grader.serve.launch import lti_routes
from grader.serve.pages import (
    COOKIE,
    form_of,
    history,
    page,
    session_of,
    set_cookie,
    signed_in,
    signed_in_as,
    when,
)
from grader.serve.semester import (
    describe_policy,
    instructor_notes,
    kept_rule,
    notes_html,
    now_rule,
    read_extensions,
)
from grader.serve.service import Denied as Denied
from grader.serve.service import Service as Service
from grader.serve.store import Person, Session


async def home(request: Request) -> Response:
    """The sign-in form, a student's page, or (instructor) the class."""
    service: Service = request.app.state.service
    session = session_of(request)
    if session is None:
        key = service.store.new_session(None)
        session = service.store.session(key)
        return set_cookie(request, page("login.html.j2", session=session, title="Sign in"), key)
    if session.person is None:
        return page("login.html.j2", session=session, title="Sign in")
    if session.person.role == "instructor":
        return RedirectResponse("/class", 303)
    return _student_page(service, session, session.person)


def _student_page(
    service: Service, session: Session, person: Person, error: str = "", status: int = 200
) -> Response:
    attempts, _ = service.store.attempts(person.id)
    return page(
        "student.html.j2",
        status,
        session,
        title="Submit",
        error=error,
        limits=service.limits,
        attempts=attempts,
        deadlines=_deadlines(service, person.id),
        **history(service, person.id, service.released()),
    )


def _deadlines(service: Service, student: str) -> list[tuple[str, str, str]]:
    """Each assignment with a due date or `keep: best`: its title, the date with the late
    policy (moved by the student's extension, read now as each upload reads it) and which
    upload counts, and what an upload made now costs ("" when nothing)."""
    if service.config is None:
        return []
    specs = [
        s for s in service.config.assignments.values() if s.late is not None or s.keep == "best"
    ]
    if not specs:
        return []
    hours = read_extensions(service.config.path.parent).hours
    extension = matched_hours(hours, [student]).get(student, 0.0)
    now = datetime.now(UTC)
    said = []
    for spec in specs:
        rule = [describe_policy(spec.late, extension)] if spec.late is not None else []
        rule.append(kept_rule(spec.keep))
        said.append((spec.title or spec.id, "; ".join(rule), now_rule(spec, extension, now)))
    return said


async def login(request: Request) -> Response:
    """Sign in with a token typed in the form."""
    service: Service = request.app.state.service
    session = session_of(request)
    form = await form_of(request, session)
    token = form.get("token")
    person = service.store.person_for_token(token) if isinstance(token, str) else None
    if person is None:
        error = "That token is not known: check it, or ask your instructor for a new one."
        return page("login.html.j2", 401, session, title="Sign in", error=error)
    return signed_in_as(request, person)


async def link(request: Request) -> Response:
    """A personal link (/t/TOKEN): a page whose button signs in as its owner (a POST to
    /login, with this browser's CSRF token). The GET alone signs no one in: a link or an
    image on another site must not sign a browser into someone else's account."""
    service: Service = request.app.state.service
    token = request.path_params["token"]
    owner = service.store.person_for_token(token)
    if owner is None:
        message = "This link is not valid (any more): ask your instructor for a new one."
        return page("message.html.j2", 404, title="Unknown link", message=message)
    session = session_of(request)
    key = None
    if session is None:
        key = service.store.new_session(None)
        session = service.store.session(key)
    shown = page("link.html.j2", session=session, title="Sign in", owner=owner, token=token)
    return set_cookie(request, shown, key) if key else shown


async def logout(request: Request) -> Response:
    """Sign out."""
    service: Service = request.app.state.service
    await form_of(request, session_of(request))
    service.store.end_session(request.cookies.get(COOKIE, ""))
    response = RedirectResponse("/", 303)
    response.delete_cookie(COOKIE, path="/")
    return response


async def upload(request: Request) -> Response:
    """Accept a student's notebook: checked, stored, queued, then on to its page."""
    service: Service = request.app.state.service
    session, person = signed_in(request, "student")
    limits = service.limits
    size = request.headers.get("content-length", "")
    if not size.isdigit():  # sent in chunks: its size is not known before it is read
        error = "The upload came without its size (Content-Length): send it from the form."
        return _student_page(service, session, person, error, 411)
    if int(size) > limits.max_bytes + limits.form_overhead:
        error = f"The file is too large: at most {limits.max_kb} KB."
        return _student_page(service, session, person, error, 413)
    form = await form_of(request, session, most=None)  # its size checked above
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
    session = session_of(request)
    if session is None or session.person is None:
        raise Denied(401, "Sign in first.")
    number = request.path_params["upload"]
    found = service.store.upload(number) if number < 1 << 63 else None  # SQLite's integers
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
        hidden = view is not None and not whole and not service.released()
        if view is not None and hidden:
            body = view.public_page  # the hidden cases' feedback waits for the release
        else:
            body = service.store.page(upload_id) or ""
        stamp = escape(when(found.received_at))
        back = f'<nav><a href="/">← back</a> · submission {found.id}, {stamp}</nav>\n'
        if view is not None:
            lines = await run_in_threadpool(
                instructor_notes,
                service.store.gradebook(),
                found.student,
                view.assignment,
                not hidden,
            )
            back += notes_html(lines)
        return HTMLResponse(body.replace("<body>\n", f"<body>\n{back}", 1))
    return page("waiting.html.j2", session=session, title="Submission", upload=found)


async def submission_state(request: Request) -> Response:
    """Where an upload stands, for poll.js."""
    service: Service = request.app.state.service
    _, upload_id = _visible_upload(request)
    found = service.store.upload(upload_id)
    assert found is not None
    return JSONResponse({"state": found.status})


POLL_JS = resources.files("grader").joinpath("templates/serve/poll.js").read_bytes()


async def poll_js(request: Request) -> Response:
    """The pages' one script."""
    return Response(POLL_JS, media_type="text/javascript")


async def no_icon(request: Request) -> Response:
    """No favicon (a browser asks for one on every page; a 404 would be a console error)."""
    return Response(status_code=204)


# A refused request's page title: a form filled wrongly is no question of rights.
TITLES = {400: "Not done", 404: "Not found", 411: "Form refused", 413: "Form refused"}


async def _denied(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Denied)
    if exc.status == 401:
        return RedirectResponse("/", 303)
    session = session_of(request)
    title = TITLES.get(exc.status, "Not allowed")
    return page("message.html.j2", exc.status, session, title=title, message=str(exc))


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
        *instructor_routes(),
        *lti_routes(page, signed_in_as),
        Route("/static/poll.js", poll_js),
        Route("/favicon.ico", no_icon),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={Denied: _denied})
    app.state.service = service
    app.add_middleware(SecurityHeaders)
    return app
