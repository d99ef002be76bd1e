#!/usr/bin/env bash
# Install tipc and run the main job on the bundled demo repo: `tipc run` (the real chain on the CPU), then
# `tipc check` on that run (every rule of tipc-basic and competition, serving included). Extra arguments go to both.
source "$(dirname "$0")/_venv.sh" "model,cpu,serve"
# A failed run still goes on to the check, which reports why; the script's exit code is the check's.
tipc run examples/lenet_digits "$@" || echo "tipc run exited $?; the check below says why"
tipc check examples/lenet_digits --reuse-run "$@"
