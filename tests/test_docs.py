"""The generated config reference: every key of the schema is described, the page is current."""

from __future__ import annotations

from grader.author.config_reference import missing_descriptions, render
from grader.course.schema import SCHEMA

from conftest import REPO

PAGE = REPO / "docs" / "config-reference.md"


def test_every_key_of_the_schema_has_a_description() -> None:
    assert missing_descriptions(SCHEMA) == []


def test_a_key_without_a_description_is_found() -> None:
    schema = {"properties": {"a": {"type": "object", "description": "x", "properties": {"b": {}}}}}
    assert missing_descriptions(schema) == ["a.b"]


def test_the_config_reference_is_current() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(SCHEMA), (
        "docs/config-reference.md is stale: run `make docs`"
    )


def test_the_reference_names_every_key() -> None:
    page = render(SCHEMA)
    for name in ("files", "preload", "public_cases", "sums_to_one", "sandbox", "rtol", "call"):
        assert f"`{name}`" in page or f".{name}`" in page


def test_every_key_of_the_config_reference_says_what_value_it_takes() -> None:
    """A key that takes one of several shapes (`anyOf`, a list of types) read "None" or
    "['number', 'boolean']" in the value column."""
    rows = [line for line in render().splitlines() if line.startswith("| `")]
    values = [row.split(" | ")[1] for row in rows]
    assert rows and not [v for v in values if v in ("None", "") or v.startswith("['")]
    assert "| `value` | a number or true or false |" in render()
