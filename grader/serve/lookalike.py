"""Ids that look alike on a page though they differ: a Cyrillic or Greek letter shaped as a
Latin one (`а` for `a`), a fullwidth or other compatibility form (`ａ`), an invisible
character (a zero-width space). Two such student ids would be two accounts that the class
page shows the same, so the roster that holds both is refused (grader/serve/roster.py), as
a new id that looks like one issued already (grader/serve/store.py).

`skeleton` is a form of Unicode TR39's: the compatibility form (NFKC), case folded, the
invisible format characters left out, and the characters of other scripts that look like a
Latin letter or a digit read as that one. Which look alike is Unicode's confusables list, as
the confusable_homoglyphs package holds it (the `serve` extra), with the hand-picked choices of
`_AS_LATIN` first where a character looks like more than one (`і`: `i`, not `l`) or the list
pairs only its capital (Cyrillic `н`, read as its capital `Н`). Only characters outside ASCII
are ever read as others, so two ASCII ids never look alike here (`s101` and `sl01` are two
students, as they always were); accented letters are themselves (`josé` is not `jose`).
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable

# Lower case only: ids are case folded first (Cyrillic `А`, Greek `Α` become `а`, `α`).
_AS_LATIN = str.maketrans(
    {
        # Cyrillic
        "а": "a",
        "в": "b",
        "с": "c",
        "ԁ": "d",
        "е": "e",
        "һ": "h",
        "н": "h",
        "і": "i",
        "ј": "j",
        "к": "k",
        "ӏ": "l",
        "м": "m",
        "о": "o",
        "р": "p",
        "ԛ": "q",
        "ѕ": "s",
        "т": "t",
        "ѵ": "v",
        "ԝ": "w",
        "х": "x",
        "у": "y",
        # Greek
        "α": "a",
        "β": "b",
        "ε": "e",
        "η": "h",
        "ι": "i",
        "κ": "k",
        "μ": "m",
        "ν": "v",
        "ο": "o",
        "ρ": "p",
        "τ": "t",
        "υ": "y",
        "χ": "x",
        "ζ": "z",
    }
)


@functools.cache
def _as_ascii() -> dict[int, str]:
    """Each character outside ASCII (case folded) that Unicode's confusables list pairs with
    ASCII letters or digits, and the one it is read as: `_AS_LATIN`'s choice, else the only
    one, else a letter before a digit and then the first in order."""
    from confusable_homoglyphs.confusables import confusables_data

    looks: dict[str, set[str]] = {}
    for character, homoglyphs in confusables_data.items():
        folded = unicodedata.normalize("NFKC", character).casefold()
        if len(folded) != 1 or folded.isascii():
            continue
        for homoglyph in homoglyphs:
            other = str(homoglyph["c"]).casefold()
            if len(other) == 1 and other.isascii() and other.isalnum():
                looks.setdefault(folded, set()).add(other)
    table = {ord(c): min(them, key=lambda o: (o.isdigit(), o)) for c, them in looks.items()}
    return {**table, **_AS_LATIN}


def skeleton(text: str) -> str:
    """What `text` looks like: two ids of the same skeleton cannot be told apart on a page."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    shown = "".join(c for c in folded if unicodedata.category(c) != "Cf")
    return unicodedata.normalize("NFKC", shown.translate(_as_ascii()))


def look_alike(ids: Iterable[str]) -> tuple[str, str] | None:
    """The first two different ids (in their order) of the same skeleton, if any."""
    seen: dict[str, str] = {}
    for one in ids:
        other = seen.setdefault(skeleton(one), one)
        if other != one:
            return other, one
    return None


def described(pair: tuple[str, str]) -> str:
    """Two ids that look alike, in words that show how they differ (escaped as Python does)."""
    first, second = pair
    return (
        f"ids {first!a} and {second!a} look alike (a letter of another script, a "
        "compatibility form or an invisible character): give one of them another id"
    )
