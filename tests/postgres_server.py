"""A real PostgreSQL server for the tests: Debian's `postgresql` binaries (initdb, pg_ctl),
a cluster made in a temporary folder, listening on a unix socket there only, stopped at the
end of the session. initdb refuses root: as root, the server runs as the ordinary user
`grader-ci` (made when missing, as tests/test_unprivileged.py does). No server, no pass: a
missing PostgreSQL fails the tests that need one, it never skips them."""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

USER = "grader-ci"
_names = itertools.count(1)


def binaries() -> Path:
    """The folder of initdb and pg_ctl: on the PATH, else Debian's newest under
    /usr/lib/postgresql; an AssertionError that says `make postgres` when neither is."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(os.path.realpath(found)).parent
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    assert versions, "PostgreSQL's initdb and pg_ctl are needed: run `make postgres`"
    return Path(versions[-1]).parent


class Server:
    """One PostgreSQL server, its data and socket in a temporary folder."""

    def __init__(self) -> None:
        self.bin = binaries()
        self.folder = Path(tempfile.mkdtemp(prefix="grader-pg-"))
        self.data = self.folder / "data"
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam(USER)
            except KeyError:
                subprocess.run(["useradd", "--create-home", "--shell", "/bin/false", USER])
                user = pwd.getpwnam(USER)
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            self.as_user = ["runuser", "-u", USER, "--"]
        self._run("initdb", "-D", str(self.data), "-U", "grader", "--auth=trust", "-E", "UTF8")
        options = f"-c listen_addresses='' -k {self.folder} -c fsync=off -c max_connections=200"
        log = str(self.folder / "server.log")
        self._run("pg_ctl", "start", "-w", "-t", "60", "-D", str(self.data), "-l", log,
                  "-o", options)  # fmt: skip

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run(
            [*self.as_user, str(self.bin / program), *args],
            capture_output=True,
            text=True,
            cwd=self.folder,
        )
        assert done.returncode == 0, f"{program} failed: {done.stdout}{done.stderr}"

    def url(self, database: str = "postgres") -> str:
        """The address of one of its databases, over the unix socket."""
        return f"postgresql:///{database}?host={self.folder}&user=grader"

    def new_database(self) -> str:
        """A fresh, empty database of its own; its address."""
        import psycopg

        name = f"test_{os.getpid()}_{next(_names)}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        """Stop the server (at once: nothing in it is kept) and remove its folder."""
        try:
            self._run("pg_ctl", "stop", "-m", "immediate", "-D", str(self.data))
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
