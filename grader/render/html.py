"""HTML views of a report, from Jinja templates (autoescaped: student text stays text)."""

from __future__ import annotations

import contextlib
import hashlib
import re
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from grader.course.blake import blake2b
from grader.course.cache_home import cache_dir, private, used
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


class _CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """Templates compiled once per grader version, kept in the user's cache folder (a batch
    compiled its three pages on every start: about 80 ms). Jinja checks each one against its
    template's source; a folder that cannot be read or written only means compiling again."""

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        """Jinja's key for the template, stamped with this module's source and jinja's
        version: escaping and `finalize` are compiled into a page, so a page compiled under
        other settings (another grader at the same path) is never reused."""
        return hashlib.sha1(
            f"{_STAMP}|{super().get_cache_key(name, filename)}".encode()
        ).hexdigest()

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        """The compiled template, when a readable one is there."""
        with contextlib.suppress(OSError, EOFError, ValueError):
            super().load_bytecode(bucket)
            if bucket.code is not None:  # read: kept by the cache's pruning
                used(Path(self._get_cache_filename(bucket)), keep_mtime=True)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        """Keep the compiled template for the next start, if the folder can be written."""
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


_STAMP = blake2b(
    Path(__file__).read_bytes() + jinja2.__version__.encode(), digest_size=16
).hexdigest()


def _compiled_templates() -> jinja2.BytecodeCache | None:
    folder = cache_dir()
    if folder is None:
        return None
    try:
        (folder / "templates").mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    if not private(folder / "templates"):  # jinja unpickles what it finds there
        return None
    return _CompiledTemplates(str(folder / "templates"))


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("grader", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    auto_reload=False,  # templates ship with the package: no stat per page
    finalize=_finalize,
    bytecode_cache=_compiled_templates(),
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
        line = f", line {location.line}" if location.line > 0 else ""
        return Markup(f"{escape(place.label())}{line}{first}")

    return render_template(
        "check.html.j2",
        report=report,
        targets=targets,
        saved=saved,
        said=said,
        where=where,
        cases=cases_line(targets),
    )
