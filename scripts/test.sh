#!/usr/bin/env bash
# Install tipc with its test tools and run lint, type checks and the whole test suite (integration included),
# then the real-repo tier (tests/real_repos: the published repos of ../shared/real-repos, run under .venv-repos).
source "$(dirname "$0")/_venv.sh" "model,cpu,serve,test"
bash scripts/repos_env.sh
bash scripts/system_deps.sh
ruff check tipc tests bench
mypy
# Two workers by default (CI has 2 cores); one file stays on one worker, so module fixtures run once.
python -m pytest -n "${TIPC_TEST_WORKERS:-2}" --dist loadfile "$@"
