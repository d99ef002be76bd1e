#!/usr/bin/env bash
# Install tipc with its test tools and run lint, type checks, the layer contracts, the dead-code and stray-file
# guards and the whole test suite (integration included),
# then the real-repo tier (tests/real_repos: the published repos of ../shared/real-repos, run under .venv-repos).
source "$(dirname "$0")/_venv.sh" "model,cpu,serve,test"
bash scripts/repos_env.sh
bash scripts/system_deps.sh
ruff check tipc tests bench
mypy
# The layers of docs/architecture.md (.importlinter), dead code (vulture: pyproject.toml, with its whitelist),
# and no large or packaged file committed: the same checks as the project's .pre-commit-config.yaml.
lint-imports
vulture
python scripts/stray_files.py
# Three workers by default on CI's 2 cores: at -n 2 the main tier used 61 % of the two cores (it waits on
# child processes, servers and timeouts), and -n 3 took 256 s against 300 s. One file stays on one worker, so
# module fixtures run once.
WORKERS=(-n "${TIPC_TEST_WORKERS:-3}" --dist loadfile)
if [ "$#" -gt 0 ]; then
  exec python -m pytest "${WORKERS[@]}" "$@"
fi
# Three tiers, each timed: the main suite (unit + integration), the real-repo tier, and the timing tier
# (baseline verdicts on wall time and throughput), which runs alone so no other test shares the cores.
status=0
tier() {
  local name="$1"
  shift
  local start=$SECONDS
  python -m pytest "$@" || status=1
  echo "tier ${name}: $((SECONDS - start)) s"
}
tier main "${WORKERS[@]}" -m "not real_repos and not timing and not silent"
tier silent "${WORKERS[@]}" -m "silent and not real_repos and not timing"
tier real_repos "${WORKERS[@]}" -m "real_repos and not timing"
tier timing -p no:xdist -m timing
exit "$status"
