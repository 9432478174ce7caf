#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image, from /autograder/source
# (this zip, unpacked). It installs the grader from package/ into /autograder/venv.
# The grader needs Python 3.11 or newer: choose an Ubuntu 24.04 base image (or newer).
set -euo pipefail
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y python3 python3-pip python3-venv
fi
python3 -m venv /autograder/venv
/autograder/venv/bin/pip install --quiet "$SOURCE/package"
# Students' notebooks run inside bubblewrap. An image whose package lists are empty needs
# `apt-get update` first; where it still cannot be had, the grader says so in every result
# (under `sandbox: required`, each one 0 with the reason; see docs/ci.md).
if ! command -v bwrap >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y bubblewrap >/dev/null 2>&1 \
    || { apt-get update >/dev/null 2>&1 && apt-get install -y bubblewrap >/dev/null 2>&1; } \
    || echo "setup.sh: bubblewrap could not be installed: the grader cannot make its sandbox" >&2
fi
