"""BLAKE2b for the cache folder's keys and names, imported without hashlib: hashlib loads
OpenSSL's `_hashlib` (2-3 ms of every start, and of a sandboxed worker's), while CPython's
own BLAKE2 is a small module of its own. An interpreter built without it (configure's
--with-builtin-hashlib-hashes can leave it out) gets hashlib's, which is the same function."""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # no builtin BLAKE2 here: hashlib's (OpenSSL's) computes the same digests
    from hashlib import blake2b

__all__ = ["blake2b"]
