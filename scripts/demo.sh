#!/usr/bin/env bash
# Set up a fresh machine and run the demo workflow on the filesystem datastore.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/python -m swamp.demo "${@}"
