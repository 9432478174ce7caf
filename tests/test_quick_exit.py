"""The `grader` command ends without the interpreter's teardown of every module it imported:
its exit status, its output and its exit handlers are as at any exit; only objects that
would have been collected at the very end are not. With another thread still running, or a
status that is not a number, it exits the usual way."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO

SCRIPT = """
import atexit, sys, threading
import grader.__main__ as command

class Collected:
    def __del__(self):
        print("torn down", flush=True)

kept = Collected()
atexit.register(lambda: print("exit handler", flush=True))
if "thread" in sys.argv[1:]:
    # alive until the main thread ends, however long the command takes on a busy machine
    main = threading.main_thread()
    threading.Thread(target=lambda: (main.join(), print("thread done"))).start()
if "message" in sys.argv[1:]:
    import grader.cli
    grader.cli.main = lambda: sys.exit("a message, not a status")
sys.argv = ["grader", *[a for a in sys.argv[1:] if a not in ("thread", "message")]]
print("buffered, not yet written")  # a pipe's buffer: written only if stdout is flushed
command.entry()
"""


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, cwd=REPO
    )


def test_the_status_output_and_exit_handlers_are_kept_and_the_teardown_skipped() -> None:
    done = run("--version")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert lines[0] == "buffered, not yet written" and lines[2] == "exit handler"
    assert "version" in lines[1] and len(lines) == 3
    usage = run("grade", "/no/such/folder")
    assert usage.returncode == 2 and "/no/such/folder" in usage.stderr
    assert "torn down" not in usage.stdout and "exit handler" in usage.stdout


def test_a_running_thread_or_a_message_means_the_usual_exit() -> None:
    threaded = run("--version", "thread")
    assert threaded.returncode == 0
    assert "thread done" in threaded.stdout and "torn down" in threaded.stdout
    message = run("message")
    assert message.returncode == 1 and "a message, not a status" in message.stderr
    assert "torn down" in message.stdout and "exit handler" in message.stdout


def test_ctrl_c_while_the_command_starts_is_one_line_and_exit_130() -> None:
    # A Ctrl-C in the first tenth of a second (the imports, before the command's own
    # handler) was a KeyboardInterrupt traceback.
    script = (
        "import sys\n"
        "import grader.__main__ as command\n"
        "from grader.run import head_start\n"
        "def interrupted(args):\n"
        "    raise KeyboardInterrupt\n"
        "head_start.start = interrupted\n"
        "sys.argv = ['grader', 'check', 'x.ipynb']\n"
        "command.entry()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO)
    assert (done.returncode, done.stderr, done.stdout) == (130, "interrupted\n", "")


def test_output_piped_into_a_reader_that_went_away_is_141_not_an_internal_error() -> None:
    # `grader grade … | head -1` said "internal error: BrokenPipeError", a traceback, exit 3.
    process = subprocess.Popen(
        [sys.executable, "-m", "grader", "check", "demo/submissions/ada.ipynb", "--course", "."],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # as `head` does once it has its lines
    said = process.stderr.read()
    assert process.wait(timeout=120) == 141, said
    assert "internal error" not in said and "Traceback" not in said
