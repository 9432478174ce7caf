"""The LTI 1.3 pages: the platform's login initiation and launch (lti.py does the checking
through PyLTI1p3), each ending in a redirect or a page saying why the sign-in was refused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from grader.course.service import LtiSettings
from grader.serve.pages import small_body
from grader.serve.service import Denied, Service
from grader.serve.store import Person

Page = Callable[..., Response]
SignIn = Callable[[Request, Person], Response]


def _lti_settings(service: Service) -> LtiSettings:
    settings = service.config.serve.lti if service.config is not None else None
    if settings is None:
        raise Denied(404, "This service takes no LTI launches (no serve: lti: in its config).")
    return settings


async def _lti_params(request: Request) -> dict[str, str]:
    params = dict(request.query_params)
    if request.method == "POST":
        small_body(request)
        form = await request.form(max_files=0, max_fields=20)
        params.update({k: v for k, v in form.items() if isinstance(v, str)})
    return params


def lti_routes(page: Page, signed_in_as: SignIn) -> list[Route]:
    """The platform's login initiation and launch, as routes; `page` renders the page that
    says why a sign-in was refused, `signed_in_as` starts the student's session."""

    def refused(exc: Exception) -> Response:
        message = f"{str(exc)[:1].upper()}{str(exc)[1:]}."
        return page("message.html.j2", 403, title="Sign-in refused", message=message)

    async def lti_login(request: Request) -> Response:
        """LTI 1.3 login initiation: back to the platform, with a state and a nonce."""
        from grader.serve import lti  # PyLTI1p3 only when a course uses it

        service: Service = request.app.state.service
        settings = _lti_settings(service)
        secure = service.secure_cookies or request.url.scheme == "https"
        params = lti.Params(await _lti_params(request), secure)
        cookies = lti.Cookies(request.cookies)
        try:
            url = await run_in_threadpool(lti.login, settings, service.store, params, cookies)
        except lti.Refused as exc:
            return refused(exc)
        response = RedirectResponse(url, 302)
        # The launch is the platform's cross-site POST: the state cookie must travel with it,
        # which over HTTPS needs SameSite=None (a browser drops that without Secure).
        for name, (value, seconds) in cookies.to_set.items():
            same: Literal["lax", "none"] = "none" if secure else "lax"
            response.set_cookie(
                name, value, max_age=seconds, httponly=True, samesite=same, secure=secure, path="/"
            )
        return response

    async def lti_launch(request: Request) -> Response:
        """LTI 1.3 launch: a signed id_token from the platform signs its roster student in."""
        from grader.serve import lti

        service: Service = request.app.state.service
        settings = _lti_settings(service)
        assert service.config is not None
        secure = service.secure_cookies or request.url.scheme == "https"
        params = lti.Params(await _lti_params(request), secure)
        cookies = lti.Cookies(request.cookies)
        course = service.config.path.parent
        try:
            student = await run_in_threadpool(
                lti.launch, settings, service.store, course, params, cookies
            )
        except lti.Refused as exc:
            return refused(exc)
        person = service.store.person(student)
        assert person is not None
        return signed_in_as(request, person)

    return [
        Route("/lti/login", lti_login, methods=["GET", "POST"]),
        Route("/lti/launch", lti_launch, methods=["POST"]),
    ]
