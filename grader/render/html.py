"""HTML views of a report, from Jinja templates (autoescaped: student text stays text)."""

from __future__ import annotations

import re
from typing import Any

import jinja2
from markupsafe import Markup, escape

from grader.course.places import CellPlace, relabel
from grader.render.escape import printable
from grader.report import Location, Report, cases_line

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


_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")


def inline_markdown(text: str) -> Markup:
    """The Markdown the grader's messages use, as HTML: `code` and **bold**. The text is
    escaped first, so student text in it stays text."""
    safe = str(escape(printable(text)))
    return Markup(_BOLD.sub(r"<strong>\1</strong>", _CODE.sub(r"<code>\1</code>", safe)))


def render_check(
    report: Report,
    targets: tuple[Any, ...],
    saved: str,
    places: dict[int, CellPlace] | None = None,
) -> str:
    """The view of `grader.check()` in Jupyter: cells named as the notebook shows them
    (`places`, see grader.course.places), Markdown rendered, readable in light and dark."""
    known = places or {}

    def said(text: str) -> Markup:
        return inline_markdown(relabel(text, known))

    def where(location: Location) -> Markup:
        place = known.get(location.cell)
        if place is None:
            return said(location.describe())
        first = f" <code>{escape(printable(place.first_line))}</code>" if place.first_line else ""
        return Markup(f"{escape(place.label())}, line {location.line}{first}")

    return render_template(
        "check.html.j2",
        report=report,
        targets=targets,
        saved=saved,
        said=said,
        where=where,
        cases=cases_line(targets),
    )
