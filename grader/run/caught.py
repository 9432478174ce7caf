"""What the child and its parent agree on for code that goes on catching the exception that
stops it at a time limit (a bare `except:` in a retry loop that escapes even the next-line
stop, child.py's `_unwind`): the child ends itself this share of the limit past it, writing
the mark last and exiting with the code; the parent's watchdog waits that long before it
calls a child silent, and reads the exit as a caught limit only after the mark."""

from __future__ import annotations

from grader.run.wire import encode_frame

CAUGHT_EXIT = 71
CAUGHT_SHARE = 0.6
# A notebook's own os._exit(71) writes no mark: it is told as the exit code it is.
CAUGHT_MARK = encode_frame({"kind": "gave_up"}, {})
