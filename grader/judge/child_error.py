"""The exception a child reported, in the words every message about it uses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from grader.run.wire import clean_text


def exception_text(error: Mapping[str, Any]) -> str:
    """`KeyError: 'x'` (or the type alone when there is no message), each part cleaned and
    cut to length: the child's words are the student's or the course's code's."""
    kind = clean_text(error.get("type"), 60)
    message = clean_text(error.get("message", ""), 300)
    return f"{kind}: {message}" if message else kind
