#!/usr/bin/env bash
# Install tipc with its test tools and run lint, type checks and the whole test suite (integration included),
# then the real-repo tier (tests/real_repos: the published repos of ../shared/real-repos, run under .venv-repos).
source "$(dirname "$0")/_venv.sh" "model,cpu,serve,test"
bash scripts/repos_env.sh
bash scripts/system_deps.sh
ruff check tipc tests bench
mypy
python -m pytest "$@"
