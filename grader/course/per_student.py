"""Per-student inputs (`per_student_inputs: true`): each student's public cases come from a
seed derived by HMAC-SHA256 from their id and a course secret, so no two students see the
same public values; the hidden cases keep the assignment's seed, the same for everyone.

The secret comes from $GRADER_COURSE_SECRET, else the file the config names
(`secret_file:`); it is never written anywhere: only seeds derived from it are used.
"""

from __future__ import annotations

import os
from dataclasses import replace

from grader.course.config import AssignmentSpec, Config
from grader.errors import ConfigError

SECRET_ENV = "GRADER_COURSE_SECRET"


def course_secret(config: Config) -> bytes:
    """The course secret: $GRADER_COURSE_SECRET, else the config's `secret_file:`;
    ConfigError (exit 2) when neither gives one."""
    if secret := os.environ.get(SECRET_ENV, "").strip():
        return secret.encode()
    if config.secret_file is not None:
        try:
            text = config.secret_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(
                f"cannot read the course secret file {config.secret_file}: "
                f"{getattr(exc, 'strerror', None) or exc}"
            ) from None
        if text:
            return text.encode()
    raise ConfigError(
        f"per-student inputs need a course secret: set ${SECRET_ENV} or name a file with "
        f"`secret_file:` in {config.path}"
    )


def needs_secret(config: Config, assignments: list[AssignmentSpec] | None = None) -> bool:
    """Whether any of these assignments (default: all of the course's) has per-student inputs."""
    specs = config.assignments.values() if assignments is None else assignments
    return any(spec.per_student_inputs for spec in specs)


def derive_seed(secret: bytes, assignment_id: str, student: str) -> int:
    """A student's public-case seed: HMAC-SHA256 of the assignment and student ids under the
    course secret, as a 63-bit integer (the secret cannot be recovered from it)."""
    import hashlib  # only with per-student inputs: hmac and OpenSSL are 1-3 ms of a start
    import hmac

    message = f"{assignment_id}\0{student}".encode()
    digest = hmac.new(secret, message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def for_student(spec: AssignmentSpec, student: str, secret: bytes | None) -> AssignmentSpec:
    """The assignment as `student` is graded on it: with their own public seed when it has
    per-student inputs (a secret is then required), else unchanged."""
    if not spec.per_student_inputs:
        return spec
    if secret is None:
        raise ConfigError(
            f"assignment {spec.id} has per-student inputs: the course secret is needed"
        )
    return replace(spec, public_seed=derive_seed(secret, spec.id, student))


def settings_tag(secret: bytes | None) -> str:
    """What the gradebook's settings add for a course secret (so a new secret regrades):
    a keyed digest that does not reveal it; empty without one."""
    if secret is None:
        return ""
    import hashlib
    import hmac

    return ":" + hmac.new(secret, b"grader settings", hashlib.sha256).hexdigest()[:16]
