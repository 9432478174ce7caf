"""HTML views of a report, from Jinja templates (autoescaped: student text stays text)."""

from __future__ import annotations

from typing import Any

import jinja2
from markupsafe import Markup

from grader.render.escape import printable
from grader.report import Report

# Symbols every common font has (emoji are missing on many servers and in headless browsers).
ICONS = {"passed": "✓", "failed": "✗", "error": "!", "missing": "?", "timeout": "!"}


def _finalize(value: Any) -> Any:
    """Every `{{ … }}` of a page: text loses controls and bidi overrides (autoescape alone
    keeps them, and they reorder or hide what the reader sees); markup the templates made
    themselves (Markup) is theirs and stays."""
    return printable(value) if isinstance(value, str) and not isinstance(value, Markup) else value


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("grader", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    auto_reload=False,  # templates ship with the package: no stat per page
    finalize=_finalize,
)


def render_template(name: str, **context: Any) -> str:
    """A page (or SVG) from templates/, student text in it made safe."""
    return _ENV.get_template(name).render(icons=ICONS, **context)


def render_check(report: Report, targets: tuple[Any, ...], saved: str) -> str:
    """The view of `grader.check()` in Jupyter."""
    return render_template("check.html.j2", report=report, targets=targets, saved=saved)
