"""course/mistakes.py: a catalogue is read from its source, never run (no child process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.course.mistakes import load_catalogue, parse_catalogue
from grader.errors import ConfigError

PATH = Path("catalogue.py")
CATALOGUE = """\
import numpy as np


@CATALOGUE.mistake("softmax", "wrong_axis", "normalises rows", hint="axis=0",
                   locate=r"axis\\s*=\\s*1")
def softmax__wrong_axis(x):
    return np.exp(x) / np.exp(x).sum(axis=1)


@other.decorator
def helper(x):
    return x


@CATALOGUE.mistake("scores", "no_scale", "forgets the scale", hint="divide by sqrt(D)",
                   requires="literal_divisor")
def scores__no_scale(q, k):
    return q @ k.T


@CATALOGUE.mistake("softmax", "no_shift", "does not subtract the max", hint=None)
def softmax__no_shift(x):
    return np.exp(x) / np.exp(x).sum(axis=0)
"""


def test_the_words_and_sources_are_read_in_order() -> None:
    catalogue = parse_catalogue(CATALOGUE, PATH)
    assert [(m.target, m.id, m.function) for m in catalogue.mistakes] == [
        ("softmax", "wrong_axis", "softmax__wrong_axis"),
        ("scores", "no_scale", "scores__no_scale"),
        ("softmax", "no_shift", "softmax__no_shift"),
    ]
    first, second, third = catalogue.mistakes
    assert (first.message, first.hint, first.locate, first.requires) == (
        "normalises rows",
        "axis=0",
        r"axis\s*=\s*1",
        None,
    )
    assert second.requires == "literal_divisor"
    assert third.hint is None
    # The variant's source runs from its `def` to its last line (decorators excluded).
    assert first.source == (
        "def softmax__wrong_axis(x):\n    return np.exp(x) / np.exp(x).sum(axis=1)"
    )
    assert [m.id for m in catalogue.for_target("softmax")] == ["wrong_axis", "no_shift"]
    assert catalogue.for_target("nothing") == []
    assert catalogue.source == CATALOGUE and catalogue.path == PATH


def test_an_empty_file_is_an_empty_catalogue() -> None:
    assert parse_catalogue("x = 1\n", PATH).mistakes == []


def mistake(arguments: str) -> str:
    return f"@CATALOGUE.mistake({arguments})\ndef f__m(x):\n    return x\n"


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ('"f", "m", hint="h"', "takes (target, mistake id, message)"),
        ('"f", "m", "msg", "extra", hint="h"', "takes (target, mistake id, message)"),
        ('"f", "m", "msg", hint="h", colour="red"', "takes (target, mistake id, message)"),
        ('"f", "m", "msg" + suffix, hint="h"', "must be literal strings"),
        ('"f", "m", 3, hint="h"', "must be strings"),
        ('"f", "m", "msg"', "needs a hint="),
        ('"f", "m", "msg", hint="h", requires="mutates"', "requires must be one of"),
    ],
)
def test_refusals_name_the_file_and_line(arguments: str, words: str) -> None:
    source = "# a catalogue\n\n" + mistake(arguments)
    with pytest.raises(ConfigError) as caught:
        parse_catalogue(source, PATH)
    assert words in str(caught.value)
    assert str(caught.value).startswith("mistake catalogue catalogue.py, line 4:")


def test_a_catalogue_that_does_not_parse_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"catalogue.py, line 2: does not parse"):
        parse_catalogue("x = 1\ndef broken(:\n", PATH)


def test_load_catalogue_reads_the_file(tmp_path: Path) -> None:
    path = tmp_path / "mistakes.py"
    path.write_text(mistake('"f", "m", "msg", hint="h"'), encoding="utf-8")
    assert [m.id for m in load_catalogue(path).mistakes] == ["m"]
    with pytest.raises(ConfigError, match="cannot read mistake catalogue"):
        load_catalogue(tmp_path / "missing.py")
