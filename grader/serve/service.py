"""What every page of the service works with: the service's parts, and the refusal a
handler raises (the app turns it into a page or a redirect to sign in)."""

from __future__ import annotations

from dataclasses import dataclass

from grader.course.config import Config
from grader.serve.checks import Limits
from grader.serve.grading import Grading
from grader.serve.store import Store


@dataclass
class Service:
    """What the pages work with: the store, the limits, and the grader (None: uploads only
    wait in the queue, as while the workers start)."""

    store: Store
    limits: Limits
    grading: Grading | None = None
    secure_cookies: bool = False
    grace: float = 10.0
    config: Config | None = None  # the course: deadlines, targets, the hidden cases' release

    def hidden(self) -> bool:
        """Whether the course has hidden cases (without a config: as if it had)."""
        return self.config is None or any(a.hidden for a in self.config.assignments.values())

    def released(self) -> bool:
        """Whether students see their hidden cases' feedback: the config's `serve:
        release_hidden`, or the instructor's button."""
        configured = self.config is not None and self.config.serve.release_hidden
        return configured or self.store.released()


class Denied(Exception):
    """The request may not do this (no session, wrong role, bad CSRF token)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
