"""BLAKE2b for the cache folder's keys and names, imported without hashlib: hashlib loads
OpenSSL's `_hashlib` (2-3 ms of every start, and of a sandboxed worker's), while CPython's
own BLAKE2 is a small module of its own.

An interpreter built without it (configure's --with-builtin-hashlib-hashes can leave it out)
has no BLAKE2 at all: hashlib takes BLAKE2 from `_blake2` only, never from OpenSSL. There
`blake2b` is a stand-in with the same interface (data, `digest_size`, update, digest,
hexdigest) over SHA-512, the digest size mixed in and the digest cut to it. Its digests are
other values than BLAKE2b's, which is fine for what this module serves: keys and names of
files in the user's own cache folder and digests compared within one installation, never a
value written for another machine to check."""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["blake2b"]


class _Sha512Stand:
    """blake2b(data, digest_size=N) where the interpreter has no BLAKE2: SHA-512 of the size
    (one byte) then the data, cut to N bytes."""

    def __init__(self, data: bytes = b"", *, digest_size: int = 64) -> None:
        if not 1 <= digest_size <= 64:
            raise ValueError("digest_size must be between 1 and 64")
        self.digest_size = digest_size
        self._hash = _sha512(bytes([digest_size]))
        self._hash.update(data)

    def update(self, data: bytes) -> None:
        self._hash.update(data)

    def digest(self) -> bytes:
        return self._hash.digest()[: self.digest_size]

    def hexdigest(self) -> str:
        return self.digest().hex()


if TYPE_CHECKING:  # the interface both offer, as typeshed writes it
    from hashlib import blake2b
    from hashlib import sha512 as _sha512
else:
    try:
        from _blake2 import blake2b
    except ImportError:  # no BLAKE2 in this interpreter (hashlib has none either)
        # SHA-512 bound now, from its own module where there is one: hashlib, imported
        # later inside a sandboxed child, would log its missing BLAKE2 into the student's
        # captured output.
        try:
            from _sha2 import sha512 as _sha512  # Python 3.12 and later
        except ImportError:
            try:
                from _sha512 import sha512 as _sha512  # Python 3.11
            except ImportError:
                from hashlib import sha512 as _sha512
        blake2b = _Sha512Stand
