#!/usr/bin/env bash
# System packages the test suite uses from Debian: headless Chromium (reports and trend pages are checked in a
# real browser) and PostgreSQL (the history database's server tests). Installed only when missing and when we
# may (root with apt-get); otherwise the tests that need them skip with a reason.
set -euo pipefail
want=()
command -v chromium >/dev/null 2>&1 || want+=(chromium fonts-dejavu-core)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || want+=(postgresql)
[ ${#want[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "system_deps: not root or no apt-get; tests needing ${want[*]} will skip" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
apt-get install -y -qq "${want[@]}" >/dev/null 2>&1 || echo "system_deps: could not install ${want[*]}" >&2
