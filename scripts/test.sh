#!/usr/bin/env bash
# Set up a fresh machine and run the whole test suite, integration tests
# against real servers included (the fixtures start SeaweedFS and
# fake-gcs-server on 127.0.0.1), and the Debian packages some tests use
# (scripts/system-packages.sh). Exits non-zero when no test ran.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh test || exit 1
bash scripts/system-packages.sh
# Three processes, each taking whole test files (--dist loadfile keeps a
# file's tests and their session servers together). SWAMP_TEST_PROCESSES=0
# runs everything in this one process.
.venv/bin/python -m pytest -n "${SWAMP_TEST_PROCESSES:-3}" --dist loadfile "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "error: pytest collected no tests" >&2
  exit 1
fi
exit "$rc"
