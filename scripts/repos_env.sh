#!/usr/bin/env bash
# Create .venv-repos: the interpreter the real-repo test tier runs those repos' own code with (older numpy,
# scikit-learn... than tipc's own .venv). Idempotent: an up-to-date .venv-repos is kept.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
REQ=tests/real_repos/requirements.txt
STAMP=.venv-repos/.requirements.sha256
want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [ -x .venv-repos/bin/python ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
  exit 0
fi
[ -x .venv-repos/bin/python ] || "$PY" -m venv .venv-repos
.venv-repos/bin/python -m pip install -q --disable-pip-version-check -r "$REQ"
echo "$want" > "$STAMP"
