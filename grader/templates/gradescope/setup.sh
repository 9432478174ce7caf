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
# Students' notebooks run inside bubblewrap where it can be made (Docker often refuses it;
# the grader then says so in every result and keeps its process limits).
if ! command -v bwrap >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y bubblewrap >/dev/null 2>&1 || true
fi
