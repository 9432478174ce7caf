"""LTI 1.3 launches end to end against a simulated platform: its RSA key made here, its
public keys (JWKS) in the course folder, its id_tokens signed here. A valid launch signs in
the roster student it names; a bad signature, a wrong audience, a replayed launch, an unknown
deployment and a user not on the roster are refused with a page that says why."""

from __future__ import annotations

import html
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from starlette.testclient import TestClient

from grader.course.config import Config, load_config
from grader.serve.app import Service, make_app
from grader.serve.checks import Limits
from grader.serve.store import Store

from conftest import repo_config_raw
from serving import issue

ISSUER = "https://canvas.example.edu"
CLIENT = "10000000000042"
DEPLOYMENT = "7:deployment"
AUTHORIZE = "https://canvas.example.edu/api/lti/authorize_redirect"
LAUNCH = "http://testserver/lti/launch"
LTI = "https://purl.imsglobal.org/spec/lti/claim/"
DROP = object()  # a claim left out of the id_token


def key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class Platform:
    """The LMS side: its key, and the id_tokens it signs."""

    def __init__(self) -> None:
        self.key = key()

    def jwks(self) -> dict[str, Any]:
        public = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**public, "kid": "platform-1", "alg": "RS256", "use": "sig"}]}

    def id_token(self, nonce: str, signer: rsa.RSAPrivateKey | None = None, **claims: Any) -> str:
        now = int(time.time())
        body = {
            "iss": ISSUER,
            "aud": CLIENT,
            "sub": "canvas-user-17",
            "iat": now,
            "exp": now + 300,
            "nonce": nonce,
            "email": "alice@example.edu",
            "name": "Alice Liddell",
            LTI + "message_type": "LtiResourceLinkRequest",
            LTI + "version": "1.3.0",
            LTI + "deployment_id": DEPLOYMENT,
            LTI + "resource_link": {"id": "hw-1"},
            LTI + "roles": ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"],
            **claims,
        }
        body = {name: value for name, value in body.items() if value is not DROP}
        headers = {"kid": "platform-1"}
        return jwt.encode(body, signer or self.key, algorithm="RS256", headers=headers)


def course(tmp_path: Path, platform: Platform, match: str = "email") -> Config:
    raw = repo_config_raw()
    raw["serve"] = {
        "lti": {
            "issuer": ISSUER,
            "client_id": CLIENT,
            "deployment_ids": [DEPLOYMENT],
            "auth_login_url": AUTHORIZE,
            "launch_url": LAUNCH,
            "jwks_file": "platform-jwks.json",
            "match": match,
        }
    }
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "config.yaml").write_text(json.dumps(raw))
    (folder / "platform-jwks.json").write_text(json.dumps(platform.jwks()))
    (folder / "roster.csv").write_text(
        "id,name,email,lms_id\n"
        "alice,Alice Liddell,Alice@Example.edu,canvas-user-17\n"
        "bob,Bob Builder,bob@example.edu,canvas-user-18\n"
        "carol,Carol (no token yet),carol@example.edu,canvas-user-19\n"
    )
    return load_config(folder / "config.yaml")


class Served:
    def __init__(self, tmp_path: Path, match: str = "email") -> None:
        self.platform = Platform()
        self.store = Store(tmp_path / "out")
        issue(self.store)  # alice, bob (students) and ada (instructor); carol has no token
        config = course(tmp_path, self.platform, match)
        self.app = make_app(Service(self.store, Limits(min_interval=0), None, config=config))

    def login(self, client: TestClient) -> dict[str, str]:
        """The platform starts a login; the service sends the browser back to it."""
        answer = client.get(
            "/lti/login",
            params={"iss": ISSUER, "login_hint": "17", "target_link_uri": LAUNCH},
        )
        assert answer.status_code == 302, answer.text[:300]
        where = urlsplit(answer.headers["location"])
        assert f"{where.scheme}://{where.netloc}{where.path}" == AUTHORIZE
        query = {k: v[0] for k, v in parse_qs(where.query).items()}
        assert query["client_id"] == CLIENT and query["redirect_uri"] == LAUNCH
        return query

    def launch(self, client: TestClient, state: str, token: str) -> Any:
        return client.post("/lti/launch", data={"id_token": token, "state": state})


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    served = Served(tmp_path)
    yield served
    served.store.close()


def signed_in_as(client: TestClient) -> str:
    return client.get("/", follow_redirects=True).text


def test_a_valid_launch_signs_in_the_roster_student_by_email(served: Served) -> None:
    client = TestClient(served.app, follow_redirects=False)
    query = served.login(client)
    answer = served.launch(client, query["state"], served.platform.id_token(query["nonce"]))
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    page = signed_in_as(client)
    assert "Alice Liddell (alice)" in page and "Submit a notebook" in page


def test_a_launch_can_match_the_lms_id_instead(tmp_path: Path) -> None:
    served = Served(tmp_path, match="lms_id")
    client = TestClient(served.app, follow_redirects=False)
    query = served.login(client)
    token = served.platform.id_token(query["nonce"], sub="canvas-user-18", email="x@y.z")
    assert served.launch(client, query["state"], token).status_code == 303
    assert "Bob" in signed_in_as(client)
    served.store.close()


@pytest.mark.parametrize(
    ("why", "words"),
    [
        ("signature", "Signature verification failed"),
        ("audience", "client_id=some-other-tool"),
        ("deployment", "Unable to find deployment"),
        ("unknown", "not on this course's roster"),
        ("no token yet", "not on this course's roster"),
        ("state", "State not found"),
        ("nonce", "Invalid Nonce"),
    ],
)
def test_a_bad_launch_is_refused_with_a_page_that_says_why(
    served: Served, why: str, words: str
) -> None:
    client = TestClient(served.app, follow_redirects=False)
    query = served.login(client)
    nonce, state, signer, claims = query["nonce"], query["state"], None, {}
    if why == "signature":
        signer = key()  # the platform's kid, someone else's key
    elif why == "audience":
        claims = {"aud": "some-other-tool"}
    elif why == "deployment":
        claims = {LTI + "deployment_id": "9:elsewhere"}
    elif why == "unknown":
        claims = {"email": "mallory@example.edu"}
    elif why == "no token yet":
        claims = {"email": "carol@example.edu"}
    elif why == "state":
        state = f"state-{uuid.uuid4()}"
    elif why == "nonce":
        nonce = uuid.uuid4().hex
    answer = served.launch(client, state, served.platform.id_token(nonce, signer, **claims))
    assert answer.status_code == 403 and words in html.unescape(answer.text), answer.text[-600:]
    assert "Sign-in refused" in answer.text
    assert "Submit a notebook" not in signed_in_as(client)


def test_a_replayed_launch_is_refused(served: Served) -> None:
    client = TestClient(served.app, follow_redirects=False)
    query = served.login(client)
    token = served.platform.id_token(query["nonce"])
    assert served.launch(client, query["state"], token).status_code == 303
    again = TestClient(served.app, follow_redirects=False, cookies=dict(client.cookies))
    replayed = served.launch(again, query["state"], token)
    assert replayed.status_code == 403 and "Invalid Nonce" in replayed.text


def test_a_course_without_lti_takes_no_launch(tmp_path: Path) -> None:
    store = Store(tmp_path / "out")
    app = make_app(Service(store, Limits(), None))
    answer = TestClient(app).post("/lti/launch", data={"id_token": "x", "state": "y"})
    assert answer.status_code == 404 and "no serve: lti:" in answer.text
    store.close()


@pytest.mark.parametrize(
    ("raw", "meaning"),
    [
        ("State not found", "open the assignment again"),
        ("Invalid Nonce", "open the assignment again"),
        ("Missing %s cookie lti1p3-state", "allow cookies"),
        ("Client id not registered for this issuer", "tell your instructor"),
        ("Unable to find deployment", "not set up to work together"),
        (  # a wrong `aud`: worded "could not be verified" (r48)
            "iss https://canvas.example.edu [client_id=some-other-tool] not found in settings",
            "not set up to work together",
        ),
        ("Can't decode id_token: Signature verification failed", "could not be verified"),
    ],
)
def test_a_refusal_says_what_to_do_and_keeps_the_library_words(raw: str, meaning: str) -> None:
    from grader.serve.lti import plain_refusal

    said = plain_refusal("the launch", Exception(raw))
    assert said.startswith("the launch from your course site was refused: ")
    assert meaning in said and f"({raw})" in said and "\n" not in said


def test_a_refusal_page_tells_the_student_to_open_the_assignment_again(served: Served) -> None:
    client = TestClient(served.app, follow_redirects=False)
    query = served.login(client)
    token = served.platform.id_token(query["nonce"])
    answer = served.launch(client, f"state-{uuid.uuid4()}", token)
    shown = html.unescape(answer.text)
    assert answer.status_code == 403 and "open the assignment again from your course site" in shown


@pytest.mark.parametrize(
    ("claims", "words"),
    [
        ({"exp": DROP}, 'missing the "exp" claim'),
        ({"iat": DROP}, 'missing the "iat" claim'),
        ({"exp": -3600}, "expired"),
        ({"iat": 3600, "exp": 7200}, "not yet valid"),
    ],
)
def test_an_id_token_without_a_live_exp_and_iat_is_refused(
    served: Served, claims: dict[str, Any], words: str
) -> None:
    # OIDC core 3.1.3.7 (which LTI 1.3 follows): exp and iat are required, the current
    # time must be before exp, and a token issued in the future is not believed.
    client = TestClient(served.app, follow_redirects=False)
    query = served.login(client)
    now = int(time.time())
    timed = {k: v if v is DROP else now + v for k, v in claims.items()}
    answer = served.launch(
        client, query["state"], served.platform.id_token(query["nonce"], **timed)
    )
    assert answer.status_code == 403 and words in html.unescape(answer.text), answer.text[-600:]
    assert "Submit a notebook" not in signed_in_as(client)


def test_a_platform_clock_a_little_off_is_forgiven(served: Served) -> None:
    from grader.serve.lti import LEEWAY_SECONDS

    client = TestClient(served.app, follow_redirects=False)
    query = served.login(client)
    now = int(time.time())
    skew = LEEWAY_SECONDS // 2  # a platform's clock ahead of ours, its token short-lived
    claims = {"iat": now + skew, "exp": now - skew + 5}
    answer = served.launch(
        client, query["state"], served.platform.id_token(query["nonce"], **claims)
    )
    assert answer.status_code == 303, answer.text[-600:]


def test_a_launch_whose_browser_kept_no_cookie_gets_the_open_it_again_page(
    served: Served,
) -> None:
    # The login's cookie dropped (a browser that blocks a third party's): the library raised
    # as the launch was made, outside the refusal's try, and the student got a bare 500.
    client = TestClient(served.app, follow_redirects=False, raise_server_exceptions=False)
    query = served.login(client)
    client.cookies.clear()
    answer = served.launch(client, query["state"], served.platform.id_token(query["nonce"]))
    said = html.unescape(answer.text)
    assert answer.status_code == 403 and "Sign-in refused" in said, said[-600:]
    assert "open the assignment again" in said and "allow cookies" in said, said[-600:]
