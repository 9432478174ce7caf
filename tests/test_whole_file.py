"""Every file a batch writes appears whole or not at all: a write cut short (a full disk, a
file-size limit, Ctrl-C, a SIGKILL) leaves the older complete file, or none, and no temporary;
and a rerun rewrites a kept student's page that a killed grader left missing or cut off."""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from grader.batch import classreport, lms, standing
from grader.batch.grade import grade_batch
from grader.batch.gradebook import Gradebook
from grader.course.config import Config, load_config
from grader.render import feedback, whole_file
from grader.render.formats import CLASS_FORMATS, GRADES_FORMATS
from grader.report import Report

from conftest import REPO

DEMO = REPO / "demo" / "submissions"
OLD = b"the old file, whole\n"
LIMIT = 64  # bytes: more than OLD, less than any page or table


@pytest.fixture(scope="module")
def config() -> Config:
    return load_config(REPO / "config.yaml")


@pytest.fixture(scope="module")
def graded(config: Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo class graded once: its class folder and OUT, side by side."""
    root = tmp_path_factory.mktemp("graded")
    shutil.copytree(DEMO, root / "class")
    grade_batch(root / "class", config, root / "out", "self_attention", jobs=2)
    return root


@pytest.fixture
def out(graded: Path, tmp_path: Path) -> Path:
    """A copy of the graded OUT folder of one's own."""
    shutil.copytree(graded / "out", tmp_path / "out")
    return tmp_path / "out"


@contextlib.contextmanager
def file_size_limit() -> Iterator[Callable[[], None]]:
    """A switch that makes this process's writes past LIMIT bytes of a file fail (EFBIG, as a
    full disk fails them), from when it is pulled until the block ends."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the error, not the signal

    def pull() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, hard))

    try:
        yield pull
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)


def then(pull: Callable[[], None], render: Callable[..., Any]) -> Callable[..., Any]:
    """`render`, after which the limit holds: reading the gradebook is done, writing is not."""

    def rendered(*args: Any, **kwargs: Any) -> Any:
        text = render(*args, **kwargs)
        pull()
        return text

    return rendered


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(whole_file.PREFIX))


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    kept = tmp_path / "kept.txt"
    kept.write_bytes(OLD)
    new = tmp_path / "new.txt"
    with file_size_limit() as pull:
        pull()
        for path in (kept, new):
            with pytest.raises(OSError) as failed:
                whole_file.write_bytes(path, b"x" * (4 * LIMIT))
            assert failed.value.errno == errno.EFBIG
    assert kept.read_bytes() == OLD
    assert not new.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt"]


def test_ctrl_c_mid_write_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = tmp_path / "kept.txt"
    kept.write_bytes(OLD)
    real_write = os.write

    def interrupted(fd: int, data: Any) -> int:
        real_write(fd, bytes(data[:3]))
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        whole_file.write_bytes(kept, b"a new and longer file\n")
    monkeypatch.undo()
    assert kept.read_bytes() == OLD
    assert leftovers(tmp_path) == []


def test_every_class_file_is_written_whole(
    config: Config, out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A feedback page, grades.csv, report.html and an LMS export, each cut short by a
    file-size limit: the old file stays as it was, whole, and no temporary is left."""
    spec = config.assignment("self_attention")
    book = Gradebook(out / "gradebook.sqlite")
    rows = standing.from_gradebook(book, spec.id)
    book.close()
    report = next(r.report for r in rows if r.report is not None)
    export = out / "exports" / "canvas.csv"
    export.parent.mkdir()
    writers: dict[Path, Callable[[Callable[[], None]], object]] = {
        out / "feedback" / "ada.html": lambda pull: (
            monkeypatch.setattr(feedback, "feedback_page", then(pull, feedback.feedback_page)),
            feedback.write_feedback(out, "ada", report, None),
        ),
        out / "grades.csv": lambda pull: (
            monkeypatch.setitem(
                GRADES_FORMATS,
                "csv",
                SimpleNamespace(render=then(pull, GRADES_FORMATS["csv"].render)),
            ),
            standing.write_grades(rows, [t.name for t in spec.targets], 10.0, out / "grades.csv"),
        ),
        out / "report.html": lambda pull: (
            monkeypatch.setitem(
                CLASS_FORMATS,
                "html",
                SimpleNamespace(render=then(pull, CLASS_FORMATS["html"].render)),
            ),
            classreport.write_report(out, spec.id),
        ),
        export: lambda pull: (
            monkeypatch.setattr(lms, "render", then(pull, lms.render)),
            lms.export(out, config, "canvas", export, spec.id),
        ),
    }
    for path, write in writers.items():
        path.write_bytes(OLD)
        with file_size_limit() as pull, pytest.raises(OSError) as failed:
            write(pull)
        monkeypatch.undo()
        assert failed.value.errno == errno.EFBIG, path
        assert path.read_bytes() == OLD, path
        assert leftovers(path.parent) == [], path


def test_a_replaced_file_keeps_its_mode_and_a_link_is_written_through(tmp_path: Path) -> None:
    private = tmp_path / "grades.csv"
    private.write_bytes(OLD)
    private.chmod(0o600)
    whole_file.write_text(private, "student,score\r\nada,3\r\n", newline="")
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert private.read_bytes() == b"student,score\r\nada,3\r\n"

    elsewhere = tmp_path / "shared"
    elsewhere.mkdir()
    (elsewhere / "report.html").write_bytes(OLD)
    link = tmp_path / "report.html"
    link.symlink_to(elsewhere / "report.html")
    whole_file.write_bytes(link, b"<html></html>")
    assert link.is_symlink()
    assert (elsewhere / "report.html").read_bytes() == b"<html></html>"
    assert leftovers(tmp_path) == leftovers(elsewhere) == []


def test_text_line_ends_are_those_of_pathlib(tmp_path: Path) -> None:
    text = "a\nb\r\nc ✓\n"
    for newline in (None, "", "\n", "\r\n", "\r"):
        whole_file.write_text(tmp_path / "ours", text, newline=newline)
        (tmp_path / "theirs").write_text(text, encoding="utf-8", newline=newline)
        assert (tmp_path / "ours").read_bytes() == (tmp_path / "theirs").read_bytes(), newline


def test_page_is_whole_only_when_it_ends_as_pages_end(tmp_path: Path) -> None:
    page = feedback.feedback_page("ada", Report("self_attention", "ada.ipynb", ()), None)
    data = page.encode("utf-8")
    path = tmp_path / "ada.html"
    assert not feedback.page_is_whole(path)
    path.write_bytes(data)
    assert feedback.page_is_whole(path)
    for cut in (0, 3, len(data) // 2, len(data) - 1):
        path.write_bytes(data[:cut])
        assert not feedback.page_is_whole(path), cut


def test_a_rerun_rewrites_a_kept_students_cut_off_page(
    config: Config, graded: Path, out: Path
) -> None:
    """A page cut off by a grader killed mid-write (before pages were written whole): its
    student is kept from the gradebook, and the page is written again, whole."""
    whole = (out / "feedback" / "bruno.html").read_bytes()
    (out / "feedback" / "bruno.html").write_bytes(whole[: len(whole) // 2])
    (out / "feedback" / "chen.html").unlink()
    batch = grade_batch(graded / "class", config, out, "self_attention", jobs=2)
    assert batch.skipped >= 2  # bruno and chen were kept, not graded again
    assert (out / "feedback" / "bruno.html").read_bytes() == whole
    assert (out / "feedback" / "chen.html").read_bytes() == (
        graded / "out" / "feedback" / "chen.html"
    ).read_bytes()


# `grader grade` that writes half of its first feedback page, then is killed (SIGKILL).
KILLED_MID_PAGE = textwrap.dedent(
    """
    import os, signal, sys
    real_open, real_write, mine = os.open, os.write, set()
    def spy_open(path, flags, *args, **kwargs):
        fd = real_open(path, flags, *args, **kwargs)
        if "feedback" in str(path) and not mine:
            mine.add(fd)
        return fd
    def spy_write(fd, data):
        if fd in mine:
            real_write(fd, bytes(data[: len(data) // 2]))
            os.kill(os.getpid(), signal.SIGKILL)
        return real_write(fd, data)
    os.open, os.write = spy_open, spy_write
    from grader.batch import gradebook
    gradebook.GROUP_SECONDS = 0  # each grade is in the gradebook before its page is written
    from grader.cli import main
    sys.argv = ["grader", "grade", *sys.argv[1:]]
    main()
    """
)


@pytest.mark.slow
def test_a_batch_killed_mid_page_leaves_no_cut_page_and_a_rerun_completes_it(
    graded: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    command = [str(graded / "class"), "--out", str(out), "-j", "2", "-a", "self_attention"]
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_MID_PAGE, *command], capture_output=True, check=False
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        recorded = {r[0] for r in db.execute("SELECT student FROM submissions")}
    assert recorded  # the killed page's student is in the gradebook: a rerun keeps them
    pages = [p for p in (out / "feedback").glob("*.html")]
    assert all(feedback.page_is_whole(p) for p in pages), [p.name for p in pages]
    assert leftovers(out / "feedback")  # the killed page's temporary: no handler ran
    subprocess.run(
        [sys.executable, "-m", "grader", "grade", *command], capture_output=True, check=False
    )
    assert leftovers(out) == leftovers(out / "feedback") == []  # the rerun swept it
    expected = graded / "out" / "feedback"
    written = sorted(p.name for p in (out / "feedback").glob("*.html"))
    assert written == sorted(p.name for p in expected.glob("*.html"))
    for name in written:
        assert (out / "feedback" / name).read_bytes() == (expected / name).read_bytes(), name


def test_a_page_holding_the_same_bytes_is_not_written_again(tmp_path: Path) -> None:
    """A rerun renders a kept student's page again (their lateness may have changed): the
    same bytes are left where they are, other bytes replace them, whole."""
    report = Report("self_attention", "ada.ipynb", ())
    page = feedback.write_feedback(tmp_path, "ada", report, None)
    first = page.stat().st_ino
    feedback.write_feedback(tmp_path, "ada", report, None)
    assert page.stat().st_ino == first  # not written: the same file
    noted = Report("self_attention", "ada.ipynb", (), notes=("handed in 2 hours late",))
    feedback.write_feedback(tmp_path, "ada", noted, None)
    assert page.stat().st_ino != first  # a new file renamed onto the page
    assert page.read_bytes() == feedback.feedback_page("ada", noted, None).encode("utf-8")
    same_size = page.read_bytes()[:-1] + b"!"
    whole_file.write_bytes(page, same_size)
    assert page.read_bytes() == same_size
    assert whole_file.holds(page, same_size)
    assert not whole_file.holds(page, same_size[:-1])
    assert not whole_file.holds(page, same_size + b"\n")
    assert not whole_file.holds(tmp_path / "absent.html", b"")


def test_what_is_not_a_file_is_written_in_place_never_replaced(tmp_path: Path) -> None:
    """`--out /dev/null`, a named pipe another program reads, or a link to one: written to as
    `open` writes to them. A rename would put a file where the device or pipe was (as root,
    a regular file in place of /dev/null)."""
    pipe = tmp_path / "grades.csv"
    os.mkfifo(pipe)
    reader = subprocess.Popen(["cat", str(pipe)], stdout=subprocess.PIPE)
    whole_file.write_text(pipe, "student,score\nada,3\n")
    assert reader.communicate(timeout=30)[0] == b"student,score\nada,3\n"
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)

    link = tmp_path / "report.html"
    link.symlink_to(os.devnull)
    whole_file.write_bytes(link, b"<html></html>")
    assert link.is_symlink() and stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert leftovers(tmp_path) == []
    if os.geteuid() == 0:  # a device of our own: the one test root may replace by mistake
        (tmp_path / "dev").mkdir()
        null = tmp_path / "dev" / "null"
        os.mknod(null, 0o666 | stat.S_IFCHR, os.stat(os.devnull).st_rdev)
        whole_file.write_text(null, "student,score\n")
        assert stat.S_ISCHR(os.lstat(null).st_mode)
        assert leftovers(tmp_path / "dev") == []


def _as_ordinary_user(work: Callable[[], None]) -> int:
    """Run `work` in a child that is an ordinary user (nobody, when this run is root's): its
    exit status, 0 when `work` returned, 1 when it raised."""
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        status = 1
        try:
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            work()
            status = 0
        finally:
            os._exit(status)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_a_file_the_user_may_not_write_is_refused_as_open_refuses_it() -> None:
    """`chmod a-w grades.csv` kept an ordinary user's grader from writing over it (open
    raised PermissionError); the rename needs only the folder, so it is refused as before."""
    folder = Path(tempfile.mkdtemp(prefix="whole-file-"))  # not tmp_path: private to root
    try:
        folder.chmod(0o777)
        frozen = folder / "grades.csv"
        frozen.write_bytes(OLD)
        frozen.chmod(0o444)

        def overwrite() -> None:
            with pytest.raises(PermissionError) as refused:
                whole_file.write_text(frozen, "student,score\nada,3\n")
            assert refused.value.filename == str(frozen)

        assert _as_ordinary_user(overwrite) == 0
        assert frozen.read_bytes() == OLD and leftovers(folder) == []
        assert stat.S_IMODE(frozen.stat().st_mode) == 0o444
    finally:
        shutil.rmtree(folder)


def test_a_link_to_a_deleted_file_is_written_in_place(tmp_path: Path) -> None:
    """`--out /dev/stdout` with the output sent to a file that was since deleted: the link
    (/proc/self/fd/N) names no path of its target, so it is written to as `open` writes."""
    held = tmp_path / "captured"
    with held.open("w+b") as stream:
        held.unlink()
        link = tmp_path / "stdout"
        link.symlink_to(f"/proc/self/fd/{stream.fileno()}")
        whole_file.write_bytes(link, b"student,score\n")
        stream.seek(0)
        assert stream.read() == b"student,score\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stdout"]


def test_a_link_to_a_folder_is_not_replaced(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    link = tmp_path / "report.html"
    link.symlink_to(tmp_path / "folder")
    with pytest.raises(IsADirectoryError):
        whole_file.write_bytes(link, b"<html></html>")
    assert link.is_symlink() and leftovers(tmp_path) == leftovers(tmp_path / "folder") == []


def test_a_folder_the_user_may_not_write_in_is_named_by_the_file_asked_for() -> None:
    """The error names the file asked for, as `open` names it (an instructor reads `cannot
    write OUT/grades.csv`), never the temporary name it was to be written under."""
    folder = Path(tempfile.mkdtemp(prefix="whole-file-"))
    try:
        (folder / "out").mkdir(mode=0o555)
        folder.chmod(0o777)
        (folder / "out").chmod(0o555)
        asked = folder / "out" / "grades.csv"

        def write() -> None:
            with pytest.raises(PermissionError) as refused:
                whole_file.write_text(asked, "student,score\n")
            assert refused.value.filename == str(asked)

        assert _as_ordinary_user(write) == 0
        assert not asked.exists()
    finally:
        shutil.rmtree(folder)


def test_a_sweep_removes_only_temporaries_of_processes_that_are_gone(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # its pid names no process now
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        names = {
            "dead": f"{whole_file.PREFIX}{gone.pid}-3.part",
            "running": f"{whole_file.PREFIX}{running.pid}-0.part",
            "ours": f"{whole_file.PREFIX}{os.getpid()}-7.part",
            "not ours": f"{whole_file.PREFIX}notes.txt",
            "page": "bruno.html",
        }
        for name in names.values():
            (tmp_path / name).write_text("x")
        assert whole_file.sweep(tmp_path) == [tmp_path / names["dead"]]
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            n for k, n in names.items() if k != "dead"
        )
    finally:
        running.kill()
        running.wait()
    assert whole_file.sweep(tmp_path / "missing") == []
