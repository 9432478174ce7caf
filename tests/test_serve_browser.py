"""`grader serve` in a real browser (Debian's chromium, as the report's test): a student signs
in with their link, uploads, and reads the feedback when it comes, without reloading by hand;
the instructor's class view updates itself too. Any CSP violation would be a console error."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from grader.serve.store import Store

import students
from conftest import write_notebook
from serving import free_port, issue, sign_in, start_server, stop

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.sandbox]


@pytest.fixture
def browser(chromium: Any) -> Any:
    return chromium


def until(check: Callable[[], bool], seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "the page did not change in time"
        time.sleep(0.1)


def test_a_student_uploads_and_reads_the_feedback_as_the_class_view_updates(
    tmp_path: Path, browser: Any
) -> None:
    from selenium.webdriver.common.by import By

    out, port = tmp_path / "out", free_port()
    store = Store(out)
    tokens = issue(store)
    store.close()
    base = f"http://127.0.0.1:{port}"
    cells = students.cells(softmax_cols=students.SOFTMAX_COLS_WRONG_AXIS)
    notebook = write_notebook(tmp_path / "my homework.ipynb", cells)
    server = start_server(out, port)
    try:
        teacher = httpx.Client(base_url=base)
        sign_in(teacher, tokens["ada"])
        browser.get(f"{base}/t/{tokens['alice']}")  # the link's page: its button signs in
        browser.find_element(By.ID, "sign-in").click()
        until(lambda: bool(browser.find_elements(By.ID, "notebook")))
        assert "Alice Liddell" in browser.find_element(By.TAG_NAME, "nav").text
        browser.find_element(By.ID, "notebook").send_keys(str(notebook))
        browser.find_element(By.ID, "submit").click()
        until(lambda: browser.current_url.startswith(f"{base}/submissions/"))
        until(lambda: bool(browser.find_elements(By.CSS_SELECTOR, "div.target")))
        heading = browser.find_element(By.TAG_NAME, "h1").text
        assert heading.startswith("self_attention:") and "/ 10 points" in heading

        def names(status: str) -> list[str]:
            found = browser.find_elements(By.CSS_SELECTOR, f"div.target.{status}")
            return [f.find_element(By.TAG_NAME, "code").text for f in found]

        assert names("failed")[0] == "softmax_cols" and "qkv_loop" in names("passed")
        assert "my homework.ipynb" in browser.page_source
        errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
        browser.find_element(By.LINK_TEXT, "← back").click()
        history = browser.find_element(By.ID, "history").text
        assert "graded" in history and "my homework.ipynb" in history
        # The instructor's view, open while a second upload is graded, shows it on its own.
        browser.find_element(By.ID, "logout").click()
        until(lambda: bool(browser.find_elements(By.ID, "sign-in")))  # signed out
        browser.get(f"{base}/t/{tokens['ada']}")
        browser.find_element(By.ID, "sign-in").click()
        until(lambda: browser.current_url == f"{base}/class")
        assert "alice" in browser.find_element(By.ID, "class").text
        form = sign_in(bob := httpx.Client(base_url=base), tokens["bob"])
        sent = {"notebook": ("bob.ipynb", notebook.read_bytes())}
        assert bob.post("/upload", data={"csrf": form}, files=sent).status_code == 303

        def bob_graded() -> bool:
            # Read in one script call: the page may reload itself between two element reads.
            script = "const t = document.getElementById('class'); return t ? t.innerText : '';"
            rows = str(browser.execute_script(script)).splitlines()
            return any(r.startswith("bob") and "graded" in r for r in rows)

        until(bob_graded)
        assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
        # The instructor overrides alice's softmax_cols with a reason; alice reads it.
        browser.find_element(By.LINK_TEXT, "alice").click()
        until(lambda: bool(browser.find_elements(By.ID, "adjust")))
        target = browser.find_element(By.ID, "adjust-target")
        target.find_element(By.CSS_SELECTOR, "option[value='softmax_cols']").click()
        browser.find_element(By.ID, "adjust-points").send_keys("0.5")
        browser.find_element(By.ID, "adjust-comment").send_keys("right idea, wrong axis")
        browser.find_element(By.ID, "adjust-save").click()
        sign_in(alice := httpx.Client(base_url=base), tokens["alice"])
        until(lambda: "right idea, wrong axis" in alice.get("/submissions/1").text)
        assert "softmax_cols set to 0.5 by ada" in alice.get("/submissions/1").text
        until(lambda: browser.current_url == f"{base}/class/students/alice")  # back on her page
        alice.close()
        teacher.close()
        bob.close()
    finally:
        stop(server, signal.SIGTERM)
