"""The `serve:` section of config.yaml: what `grader serve` allows each student (the largest
upload, the number of attempts, the least time between two) and whether the students see
their hidden cases' feedback yet. Command-line options override the limits."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from grader.errors import ConfigError


@dataclass(frozen=True)
class LtiSettings:
    """One LMS platform's registration of the service (config `serve: lti:`)."""

    issuer: str
    client_id: str
    deployment_ids: tuple[str, ...]
    auth_login_url: str
    launch_url: str
    auth_token_url: str = ""
    jwks_url: str = ""
    jwks_file: Path | None = None
    match: Literal["email", "lms_id"] = "email"


@dataclass(frozen=True)
class ServeSettings:
    """The service's limits per student and the hidden cases' release (config `serve:`)."""

    max_kb: int = 2048
    max_attempts: int = 100
    min_interval: float = 10.0
    release_hidden: bool = False
    lti: LtiSettings | None = None


def serve_settings(raw: Mapping[str, Any], course: Path) -> ServeSettings:
    """The settings a validated config's `serve:` section gives (defaults for what it leaves
    out); `course`: the folder a `jwks_file` is relative to."""
    section = raw.get("serve", {})
    default = ServeSettings()
    return ServeSettings(
        max_kb=int(section.get("max_kb", default.max_kb)),
        max_attempts=int(section.get("max_attempts", default.max_attempts)),
        min_interval=float(section.get("min_interval", default.min_interval)),
        release_hidden=bool(section.get("release_hidden", default.release_hidden)),
        lti=_lti(section["lti"], course) if "lti" in section else None,
    )


def _lti(raw: Mapping[str, Any], course: Path) -> LtiSettings:
    if "jwks_url" not in raw and "jwks_file" not in raw:
        raise ConfigError("serve.lti: give the platform's keys, as jwks_url or jwks_file")
    return LtiSettings(
        issuer=raw["issuer"],
        client_id=raw["client_id"],
        deployment_ids=tuple(raw["deployment_ids"]),
        auth_login_url=raw["auth_login_url"],
        launch_url=raw["launch_url"],
        auth_token_url=raw.get("auth_token_url", ""),
        jwks_url=raw.get("jwks_url", ""),
        jwks_file=course / raw["jwks_file"] if "jwks_file" in raw else None,
        match=raw.get("match", "email"),
    )
