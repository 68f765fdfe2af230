#!/usr/bin/env bash
# Debian packages the test suite uses beyond Python's: faketime (two peers
# whose clocks differ, for the lease tests) and chromium (the dashboard's
# browser tests drive Debian's /usr/bin/chromium through Playwright; never
# `playwright install`, which downloads a browser of its own). Installed only
# when missing, and only where we may (root with apt-get, as on CI);
# elsewhere the tests that need them skip and say why (on CI, where CI is
# set, a missing browser fails the browser tests instead).
set -uo pipefail
wanted=(faketime chromium)
missing=()
for pkg in "${wanted[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "note: not installing ${missing[*]} (needs root and apt-get); the tests that use them will skip" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
  || echo "note: could not install ${missing[*]}; the tests that use them will skip" >&2
exit 0
