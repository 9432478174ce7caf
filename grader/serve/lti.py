"""Students sign in by an LTI 1.3 launch from their course's page in Canvas or Moodle, through
PyLTI1p3 (a maintained implementation of the standard), with the registration the config's
`serve: lti:` gives.

The platform first calls /lti/login (OIDC login initiation): the service answers with a
redirect back to the platform's authorisation URL, carrying a fresh state (also set as a
short-lived cookie) and a nonce (kept in the store). The platform then posts a signed
id_token to /lti/launch: PyLTI1p3 checks the state, the signature against the platform's
keys, the issuer, the audience (the client id), the deployment and the message; the nonce is
taken from the store as it is checked, so a launch replayed is refused. The launch's user is
then matched to a roster student by email or LMS id, and signed in as that student.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jwt
import requests
from pylti1p3.cookie import CookieService
from pylti1p3.exception import LtiException
from pylti1p3.launch_data_storage.base import LaunchDataStorage
from pylti1p3.message_launch import MessageLaunch
from pylti1p3.oidc_login import OIDCLogin
from pylti1p3.redirect import Redirect
from pylti1p3.request import Request as LtiRequest
from pylti1p3.service_connector import REQUESTS_USER_AGENT
from pylti1p3.session import SessionService
from pylti1p3.tool_config.dict import ToolConfDict

from grader.batch.roster import course_roster
from grader.course.service import LtiSettings
from grader.errors import GraderError
from grader.serve.store import Store

COOKIE_PREFIX = "lti1p3-"
LIS = "https://purl.imsglobal.org/spec/lti/claim/lis"
# For the platform's keys (jwks_url), fetched at each launch: a platform that does not answer
# refuses the launch instead of holding one of the few threads uploads are stored on.
KEYS_SECONDS = 10.0
# How far the platform's clock may be from ours when an id_token's exp and iat are checked.
LEEWAY_SECONDS = 60


class Refused(Exception):
    """A login or launch that does not sign anyone in; the sentence says why."""


# What a refusal by PyLTI1p3 means to the student who sees it, and what to do next: the
# library's own words (technical, but what an instructor searches for) follow in brackets.
_AGAIN = (
    "this sign-in expired, was already used, or your browser did not keep its cookie: open the "
    "assignment again from your course site (if it keeps happening, allow cookies for this site)"
)
_SETUP = "your course site and this grader are not set up to work together: tell your instructor"
_TOKEN = (
    "your course site's sign-in could not be verified: open the assignment again from your "
    "course site, and tell your instructor if it keeps happening"
)
_MEANINGS = (
    (("state", "nonce", "cookie", "launch data not found"), _AGAIN),
    (
        (
            "client id",
            "registration",
            "deployment",
            "issuer",
            '"iss"',
            "public key",
            "jwt kid",
            "invalid url",
            "launch url",
            "not found in settings",  # an `aud` (client id) this tool was not given
        ),
        _SETUP,
    ),
)


def plain_refusal(what: str, exc: BaseException) -> str:
    """`what` (the sign-in, the launch) was refused, in words a student can act on, with the
    library's own words in brackets for the instructor (one line, at most 200 characters)."""
    detail = " ".join(str(exc).split())[:200] or type(exc).__name__
    lowered = detail.lower()
    meaning = next((m for words, m in _MEANINGS if any(w in lowered for w in words)), _TOKEN)
    return f"{what} from your course site was refused: {meaning} ({detail})"


@dataclass
class Params(LtiRequest):
    """A request's parameters (query and form, read already) as PyLTI1p3 asks for them."""

    params: Mapping[str, str]
    secure: bool = False

    @property
    def session(self) -> None:
        """No framework session: the launch data are kept in the service's store."""
        return None

    def is_secure(self) -> bool:
        """Whether the request came over HTTPS."""
        return self.secure

    def get_param(self, key: str) -> str:
        """One parameter ("" when absent)."""
        return self.params.get(key, "")


@dataclass
class Cookies(CookieService):
    """The request's cookies, and those to set on the response."""

    sent: Mapping[str, str]
    to_set: dict[str, tuple[str, int]] = field(default_factory=dict)

    def get_cookie(self, name: str) -> str | None:
        """A cookie of this login's (PyLTI1p3's names, prefixed)."""
        return self.sent.get(COOKIE_PREFIX + name)

    def set_cookie(
        self, name: str, value: str | int, exp: int | None = 3600, **kwargs: Any
    ) -> None:
        """Set a cookie on the response, for `exp` seconds."""
        self.to_set[COOKIE_PREFIX + name] = (str(value), exp or 3600)


class StoreData(LaunchDataStorage[Any]):
    """PyLTI1p3's states, nonces and launches, in the service's store (JSON). A nonce is
    taken as it is checked: each is good for one launch."""

    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store

    def can_set_keys_expiration(self) -> bool:
        """Keys expire (the store drops them)."""
        return True

    def get_value(self, key: str) -> Any:
        """A kept value (None when absent or expired)."""
        found = self.store.lti_get(key)
        return json.loads(found) if found is not None else None

    def set_value(self, key: str, value: Any, exp: int | None = None) -> None:
        """Keep a value for `exp` seconds (a day when not said)."""
        self.store.lti_put(key, json.dumps(value), exp or 86400)

    def check_value(self, key: str) -> bool:
        """Whether a value is kept; a nonce is forgotten as it is checked."""
        return self.store.lti_get(key, take="-nonce-" in key) is not None


class Redirector(Redirect[str]):
    """Where the login sends the browser (the app makes the response)."""

    def __init__(self, location: str) -> None:
        self.location = location

    def do_redirect(self) -> str:
        """The URL."""
        return self.location

    def do_js_redirect(self) -> str:
        """The URL (no script: the page sends a plain redirect)."""
        return self.location

    def set_redirect_url(self, location: str) -> None:
        """Change the URL."""
        self.location = location

    def get_redirect_url(self) -> str:
        """The URL."""
        return self.location


class Login(OIDCLogin[Params, ToolConfDict, SessionService, Cookies, str]):
    """OIDC login initiation."""

    def get_redirect(self, url: str) -> Redirect[str]:
        """A redirect to `url`."""
        return Redirector(url)


class KeysSession(requests.Session):
    """PyLTI1p3's HTTP session for the platform's keys, with a time limit (it gives none)."""

    def request(self, *args: Any, **kwargs: Any) -> requests.Response:
        """A request that gives up after KEYS_SECONDS without an answer."""
        kwargs.setdefault("timeout", KEYS_SECONDS)
        return super().request(*args, **kwargs)


class Launch(MessageLaunch[Params, ToolConfDict, SessionService, Cookies]):
    """A message launch."""

    def _get_request_param(self, key: str) -> str:
        return self._request.get_param(key)

    def validate_jwt_signature(self) -> Launch:
        """The id_token's signature, and its times as OIDC core 3.1.3.7 asks (LTI 1.3 follows
        it): exp and iat are required, exp not past and iat not ahead, give or take
        LEEWAY_SECONDS (PyLTI1p3 alone accepts a token without exp, good for ever)."""
        public_key, algorithm = self.get_public_key()
        try:
            jwt.decode(
                self._get_id_token(),
                public_key,
                algorithms=[algorithm],
                leeway=LEEWAY_SECONDS,
                options={"verify_aud": False, "require": ["exp", "iat"]},  # aud: checked apart
            )
        except jwt.InvalidTokenError as exc:
            raise LtiException(f"Can't decode id_token: {exc}") from exc
        return self


def tool_config(settings: LtiSettings) -> ToolConfDict:
    """PyLTI1p3's view of the registration; GraderError when the key file cannot be read."""
    keys = None
    if settings.jwks_file is not None:
        try:
            keys = json.loads(settings.jwks_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise GraderError(f"{settings.jwks_file}: the platform's keys ({exc})") from None
    entry: Any = {
        "default": True,
        "client_id": settings.client_id,
        "auth_login_url": settings.auth_login_url,
        "auth_token_url": settings.auth_token_url or settings.auth_login_url,
        "key_set_url": settings.jwks_url or None,
        "key_set": keys,
        "deployment_ids": list(settings.deployment_ids),
    }
    return ToolConfDict({settings.issuer: [entry]})


def login(settings: LtiSettings, store: Store, params: Params, cookies: Cookies) -> str:
    """The platform's authorisation URL to send the browser to; Refused with why not."""
    sessions = SessionService(params)
    start = Login(params, tool_config(settings), sessions, cookies, StoreData(store))
    try:
        return str(start.redirect(settings.launch_url))
    except Exception as exc:  # as for a launch
        raise Refused(plain_refusal("the sign-in", exc)) from None


def launch(
    settings: LtiSettings, store: Store, course: Path, params: Params, cookies: Cookies
) -> str:
    """The id of the roster student a valid launch signs in; Refused with why not."""
    sessions = SessionService(params)
    data = StoreData(store)
    sessions.set_data_storage(data)
    keys = KeysSession()
    keys.headers["User-Agent"] = REQUESTS_USER_AGENT
    try:
        # made here, inside: without the login's cookie (a browser that blocks a third
        # party's) the library raises already as the launch is made (r48 F3: a bare 500)
        message = Launch(params, tool_config(settings), sessions, cookies, data, keys)
        claims = message.get_launch_data()
    # PyLTI1p3 raises plain Exception too, for a client id its registrations lack: whatever
    # stops the library's checks refuses the launch.
    except Exception as exc:
        raise Refused(plain_refusal("the launch", exc)) from None
    student = roster_student(settings, store, course, claims)
    if student is None:
        who = claims.get("email") if settings.match == "email" else claims.get("sub")
        raise Refused(
            f"you ({who or 'no ' + settings.match}) are not on this course's roster: "
            "ask your instructor to add you"
        )
    return student


def roster_student(
    settings: LtiSettings, store: Store, course: Path, claims: Mapping[str, Any]
) -> str | None:
    """The roster student (with a token issued, so known to the service) a launch's user is.
    The course's roster.csv is read at each launch: a student added counts at once. A
    student whose token was revoked is Refused, until a token is issued to them again."""
    try:
        roster = course_roster(course) or []
    except GraderError as exc:
        raise Refused(f"the course's roster cannot be read: {exc}") from None
    if settings.match == "email":
        email = str(claims.get("email") or "").strip().lower()
        found = [s for s in roster if email and s.email.strip().lower() == email]
    else:
        lis = claims.get(LIS)  # an object by the standard: anything else names no one
        sourced = lis.get("person_sourcedid") if isinstance(lis, dict) else None
        ids = {str(claims.get("sub") or ""), str(sourced or "")}
        found = [s for s in roster if s.lms_id and s.lms_id in ids - {""}]
    if len(found) != 1:
        return None
    person = store.person(found[0].id)
    if person is None or person.role != "student":
        return None
    if store.revoked(person.id):  # `grader serve tokens --revoke`: no route signs them in
        raise Refused("your access to this service was revoked: ask your instructor to restore it")
    return person.id
