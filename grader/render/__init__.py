"""One module per output format; each turns a Report into text and knows nothing else."""

from collections.abc import Callable

from ..report import Report
from . import github, gradescope, junit, markdown
from . import json as json_format
from . import text as text_format

RENDERERS: dict[str, Callable[[Report], str]] = {
    "text": text_format.render,
    "json": json_format.render,
    "junit": junit.render,
    "github": github.render,
    "gradescope": gradescope.render,
    "markdown": markdown.render,
}
