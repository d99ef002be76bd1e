#!/usr/bin/env bash
# Install tipc with its test tools and run lint, type checks and the whole test suite (integration included).
source "$(dirname "$0")/_venv.sh" "model,serve,test"
ruff check tipc tests bench
mypy
python -m pytest "$@"
