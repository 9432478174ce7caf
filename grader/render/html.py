"""HTML views of a report, from Jinja templates (autoescaped: student text stays text)."""

from __future__ import annotations

from typing import Any

import jinja2

from ..report import Report

# Symbols every common font has (emoji are missing on many servers and in headless browsers).
ICONS = {"passed": "✓", "failed": "✗", "error": "!", "missing": "?", "timeout": "!"}

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("grader", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    auto_reload=False,  # templates ship with the package: no stat per page
)


def render_template(name: str, **context: Any) -> str:
    return _ENV.get_template(name).render(icons=ICONS, **context)


def render_check(report: Report, targets: tuple[Any, ...], saved: str) -> str:
    return render_template("check.html.j2", report=report, targets=targets, saved=saved)
