"""What every page of the service shares: rendering a template, the session cookie, who is
signed in, the CSRF-checked form, and a student's uploads as the pages list them."""

from __future__ import annotations

import hmac
import time
from typing import Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from grader.render.html import render_template
from grader.serve.service import Denied, Service
from grader.serve.store import Person, Session

COOKIE = "grader_session"


def when(stamp: float) -> str:
    """A time as the pages show it."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))


def page(
    template: str, status: int = 200, session: Session | None = None, **context: Any
) -> HTMLResponse:
    """A template of templates/serve rendered as a response, with who is signed in and the
    session's CSRF token."""
    context.setdefault("error", "")
    body = render_template(
        f"serve/{template}",
        person=session.person if session else None,
        csrf=session.csrf if session else "",
        when=when,
        **context,
    )
    return HTMLResponse(body, status_code=status)


def session_of(request: Request) -> Session | None:
    """The session the request's cookie names, None without one (or an unknown one)."""
    service: Service = request.app.state.service
    key = request.cookies.get(COOKIE, "")
    return service.store.session(key) if key else None


def set_cookie(request: Request, response: Response, key: str) -> Response:
    """`response` setting the session cookie (HttpOnly, SameSite=Lax, Secure over HTTPS)."""
    service: Service = request.app.state.service
    secure = service.secure_cookies or request.url.scheme == "https"
    response.set_cookie(COOKIE, key, httponly=True, samesite="lax", secure=secure, path="/")
    return response


def signed_in(request: Request, role: str) -> tuple[Session, Person]:
    """The session and person signed in with `role`; Denied (401 or 403) otherwise."""
    session = session_of(request)
    if session is None or session.person is None:
        raise Denied(401, "Sign in first.")
    if session.person.role != role:
        raise Denied(403, "This page is not for you.")
    return session, session.person


# A form's body: a comment of 2,000 characters, a CSRF token, an LTI launch's id_token.
FORM_BYTES = 64 * 1024


def small_body(request: Request, most: int = FORM_BYTES) -> None:
    """Refuse (411, 413) a body of unknown size or over `most` bytes before a byte of it is
    read: anyone, signed in or not, could make the server spool gigabytes to disk."""
    size = request.headers.get("content-length", "")
    if not size.isdigit():
        raise Denied(411, "The form came without its size (Content-Length): send it from the page.")
    if int(size) > most:
        raise Denied(413, f"The form is too large: at most {most // 1024} KB.")


async def form_of(
    request: Request, session: Session | None, fields: int = 4, most: int | None = FORM_BYTES
) -> FormData:
    """The posted form, refused unless it carries the session's CSRF token (and, unless
    `most` is None, as the upload checks its own, when its body is over `most` bytes)."""
    if session is None:  # no token to match: refused before the body is read
        raise Denied(403, "The form was out of date: reload the page and try again.")
    if most is not None:
        small_body(request, most)
    form = await request.form(max_files=1, max_fields=fields)
    sent = form.get("csrf")
    if not isinstance(sent, str) or not same(sent, session.csrf):
        raise Denied(403, "The form was out of date: reload the page and try again.")
    return form


def same(a: str, b: str) -> bool:
    """Whether two secrets are equal, compared in constant time."""
    return hmac.compare_digest(a.encode(), b.encode())


def signed_in_as(request: Request, person: Person) -> Response:
    """A redirect home in a fresh session for `person` (the old one is ended)."""
    service: Service = request.app.state.service
    old = request.cookies.get(COOKIE, "")
    if old:
        service.store.end_session(old)
    # A fresh session at sign-in: a session id planted before it is worth nothing after.
    return set_cookie(request, RedirectResponse("/", 303), service.store.new_session(person))


def history(service: Service, student: str, whole: bool) -> dict[str, Any]:
    """A student's uploads, the score each shows (the public cases' until the release, for
    a student; after its late penalty, with the autograded points beside) and each one's
    lateness."""
    uploads = service.store.history(student)
    views = service.store.views(student)
    scores: dict[int, tuple[float, float, float | None]] = {}
    for u in uploads:
        if u.score is None or u.max_score is None:
            continue
        view = views.get(u.id)
        if whole or view is None:
            score, most = u.score, u.max_score
        else:
            score, most = view.public_score, view.public_max
        scores[u.id] = counted(score, most, view.late_percent if view else 0.0)
    late = {i: v.late_note for i, v in views.items() if v.late_note}
    partial = not whole and service.hidden()
    # "(public cases)" only on an upload whose assignment holds hidden ones (r48 S2)
    public_only = {
        u.id
        for u in uploads
        if partial and (v := views.get(u.id)) is not None and v.public_max != u.max_score
    }
    assignment_of = {i: v.assignment for i, v in views.items()}
    return {
        "uploads": uploads,
        "scores": scores,
        "late": late,
        "partial": partial,
        "public_only": public_only,
        "assignment_of": assignment_of,
    }


def counted(score: float, most: float, late_percent: float) -> tuple[float, float, float | None]:
    """(points that count, out of, the autograded points where a late penalty took some)."""
    if late_percent <= 0:
        return score, most, None
    return round(score * (1 - late_percent / 100), 6), most, score
