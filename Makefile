# Two entry points: `make demo` and `make test`. Both set up .venv on first use.
# The demo class holds one unreadable notebook on purpose (zoe): --allow-ungraded keeps exit 0.
# `make test-fast`: lint and the tests not marked slow, sandbox, browser or postgres (pyproject.toml).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LINT_DIRS := $(wildcard grader tests bench)

.PHONY: demo test test-fast docs lint typecheck unit clean browser sandbox postgres

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,serve,cluster,postgres]'
	$(BIN)/python -m compileall -q grader  # as a wheel's install does: PYTHONDONTWRITEBYTECODE would recompile each start
	touch $(STAMP)

demo: $(STAMP) sandbox
	$(BIN)/grader grade demo/submissions --course . --assignment self_attention --out results/demo --allow-ungraded

# docs/config-reference.md is generated from grader/course/schema.py (tests/test_docs.py
# fails when it is stale).
docs: $(STAMP)
	$(BIN)/python -m grader.author.config_reference > docs/config-reference.md

lint: $(STAMP)
	$(BIN)/ruff check $(LINT_DIRS)
	$(BIN)/ruff format --check $(LINT_DIRS)

typecheck: $(STAMP)
	$(BIN)/mypy

# The report's browser test needs Debian's chromium and chromium-driver; install them when
# missing (as root, or through sudo without a password). If that is impossible the test
# fails and says so: it never skips.
browser:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo -n"; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver \
	    >/dev/null || echo "could not install chromium: the browser test will fail"; \
	fi

# Students' notebooks run inside bubblewrap (Debian's package `bubblewrap`); install it when
# missing, as for the browser. Without it the sandbox tests fail: they never skip.
sandbox:
	@if ! command -v bwrap >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo -n"; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq bubblewrap \
	    >/dev/null || echo "could not install bubblewrap: notebooks run without a sandbox"; \
	fi

# The PostgreSQL tests start their own server with initdb and pg_ctl (Debian's package
# `postgresql`, under /usr/lib/postgresql/*/bin); install it when missing, as for the
# browser. Without it those tests fail: they never skip.
postgres:
	@if ! command -v initdb >/dev/null && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo -n"; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql \
	    >/dev/null || echo "could not install postgresql: the PostgreSQL tests will fail"; \
	fi

unit: $(STAMP) browser sandbox postgres
	$(BIN)/pytest -q

test: lint typecheck unit

# On as many processes as there are cores (pytest-xdist): 24 s here on 2 cores, 33 s on one.
test-fast: lint
	$(BIN)/pytest -q -n auto -m "not slow and not sandbox and not browser and not postgres"

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
