#!/usr/bin/env bash
# Install tipc and run the main job: `tipc check` on the bundled demo repo (runs the real chain on the CPU).
source "$(dirname "$0")/_venv.sh" "model,serve"
tipc check examples/lenet_digits --device cpu "$@"
