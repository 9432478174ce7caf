"""Sign-in tokens: random, shown once, stored only as a hash, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
import secrets

TOKEN_BYTES = 24


def new_token() -> str:
    """A fresh token (192 random bits, URL-safe: it also makes the personal link). Never one
    that starts with `-`: the tokens CSV would show it as `'-…` (a spreadsheet formula made
    harmless), and a token copied from there would not sign anyone in."""
    while (token := secrets.token_urlsafe(TOKEN_BYTES)).startswith("-"):
        pass
    return token


def token_hash(token: str) -> str:
    """What the store keeps of a token. The tokens are random and long, so a plain SHA-256
    is enough: there is no dictionary to try against it."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def same_hash(stored: str, token: str) -> bool:
    """Whether `token` is the one `stored` was made from, in time that does not depend on
    where they differ."""
    return hmac.compare_digest(stored.encode(), token_hash(token).encode())
