"""One module per output format; each turns a Report into text and knows nothing else."""

from collections.abc import Callable

from grader.render import classroom, github, gradescope, junit, markdown
from grader.render import json as json_format
from grader.render import text as text_format
from grader.report import Report

RENDERERS: dict[str, Callable[[Report], str]] = {
    "text": text_format.render,
    "json": json_format.render,
    "junit": junit.render,
    "github": github.render,
    "gradescope": gradescope.render,
    "markdown": markdown.render,
    "classroom": classroom.render,
}
