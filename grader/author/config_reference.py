"""Write docs/config-reference.md from the schema of config.yaml, so the two cannot drift.

`python -m grader.author.config_reference > docs/config-reference.md` (or `make docs`);
tests/test_docs.py fails when the page is stale or a key of the schema has no description.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from grader.course.schema import SCHEMA, TYPE_WORDS

Schema = Mapping[str, Any]

HEADER = """\
# config.yaml reference

<!-- Generated from grader/course/schema.py by `make docs`; do not edit by hand. -->

A course is the folder of its `config.yaml`: named (`--course DIR`, `--config FILE`,
`$GRADER_COURSE` or `$GRADER_CONFIG`) or found from the working folder upward, as git finds
`.git` ([instructor.md](instructor.md#which-course-is-graded)). Paths in it are relative to
the folder that holds it. An unknown key, a value of the wrong kind or a missing required key
is a one-line error naming the key path (exit 2). How to write a course:
[course-author.md](course-author.md).
"""


def _ref_name(node: Schema) -> str | None:
    ref = node.get("$ref")
    return str(ref).rsplit("/", 1)[-1] if ref else None


def kind(node: Schema) -> str:
    """The value a key takes, in a few words (a shape of `$defs` becomes a link)."""
    if (name := _ref_name(node)) is not None:
        return f"[{name}](#{name.replace('_', '-')})"
    if "const" in node:
        return f"`{node['const']}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{v}`" for v in node["enum"])
    if node.get("type") == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"mapping of name → {kind(node['additionalProperties'])}"
    if "anyOf" in node:  # each shape it may take, in the schema's order
        return " or ".join(kind(choice) for choice in node["anyOf"])
    if isinstance(node.get("type"), list):
        return " or ".join(kind({**node, "type": one}) for one in node["type"])
    words = TYPE_WORDS.get(str(node.get("type")), str(node.get("type")))
    if node.get("type") == "array" and "items" in node:
        item = TYPE_WORDS.get(str(node["items"].get("type")), "a value")
        words += f" of {item.removeprefix('a ')}s"
    if "minimum" in node:
        words += f" ≥ {node['minimum']}"
    if "exclusiveMinimum" in node:
        words += f" > {node['exclusiveMinimum']}"
    return words


def _keys(node: Schema) -> Iterator[tuple[str, Schema]]:
    yield from node.get("properties", {}).items()


def missing_descriptions(schema: Schema = SCHEMA) -> list[str]:
    """The keys (and shapes under `$defs`) whose schema has no description."""
    missing: list[str] = []

    def visit(node: Schema, path: str) -> None:
        if not node.get("description"):
            missing.append(path)
        for key, child in _keys(node):
            visit(child, f"{path}.{key}" if path else key)

    for key, child in _keys(schema):
        visit(child, key)
    for name, shape in schema.get("$defs", {}).items():
        visit(shape, f"$defs.{name}")
    return missing


def _table(node: Schema, placeholder: str) -> list[str]:
    required = set(node.get("required", ()))
    rows = ["| key | value | description |", "|---|---|---|"]
    for key, child in _keys(node):
        need = " **(required)**" if key in required else ""
        text = " ".join(str(child.get("description", "")).split()).replace("|", "\\|")
        rows.append(f"| `{placeholder}{key}` | {kind(child)} | {text}{need} |")
    return rows


def _shapes(schema: Schema) -> list[tuple[str, Schema]]:
    """The shapes under `$defs`, outermost first: the schema writes a shape before the
    shapes that use it, a reader wants an assignment before its targets' tolerances."""
    return list(reversed(schema.get("$defs", {}).items()))


def render(schema: Schema = SCHEMA) -> str:
    """The whole reference page, as Markdown."""
    out = [HEADER, "## Top level", "", *_table(schema, ""), ""]
    for key, child in _keys(schema):
        if "properties" in child:
            out += [f"## `{key}`", "", child["description"], "", *_table(child, f"{key}."), ""]
    for name, shape in _shapes(schema):
        out += [f"## {name}", "", " ".join(str(shape["description"]).split()), ""]
        if "properties" in shape:
            out += [*_table(shape, ""), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def main() -> None:
    """Print the reference page to stdout."""
    print(render(), end="")


if __name__ == "__main__":
    main()
