"""A workflow's run history through the API (GET /workflows/NAME/runs) at
10,000 runs, beside the same history read the way the API read it before
(app.workflows.history: every run record read and validated), measured in
the same run.

Setup (not timed): bench/dashboard_bench.py's repository, one real
suspended run of a gated workflow and N copies of its record.

Timed: a real `swamp serve` process; the first history request after it
starts (its index is cold: every record read once), then pages of 50
(the newest, at offset 5,000, the failed runs only, and the newest again:
the first pages come within a second of the setup's writes, when the index
still looks at each record's stamp), each --requests times one at a time
(median and max); a restart of the server
(the rows it kept under .swamp/cache/serve/runs: one stat per record);
and in-process, the old way, three times.

Usage: .venv/bin/python bench/run_history_bench.py [--runs 10000] [--requests 15]
Prints a table and writes bench/results/run-history-<time>.json."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))


def get(conn: http.client.HTTPConnection, path: str) -> float:
    t0 = time.perf_counter()
    conn.request("GET", path)
    r = conn.getresponse()
    r.read()
    ms = (time.perf_counter() - t0) * 1000
    if r.status != 200:
        raise SystemExit(f"GET {path}: {r.status}")
    return ms


def serve(repo: Path, log: Path):
    from tests.fixtures.servers import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "swamp", "serve", "--port", str(port), "--repo-dir", str(repo)],
                            stdout=open(log, "a"), stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    started = time.perf_counter()
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            conn.request("GET", "/health")
            conn.getresponse().read()
            return proc, conn
        except OSError:
            if time.perf_counter() - started > 60:
                raise SystemExit("serve did not start")
            time.sleep(0.05)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--requests", type=int, default=15)
    args = ap.parse_args()
    from bench.dashboard_bench import build

    base = "/api/v1/workflows/gated/runs"
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        t0 = time.perf_counter()
        build(repo, args.runs)
        print(f"setup: {args.runs + 1} runs in {time.perf_counter() - t0:.1f} s")
        log = Path(tmp) / "serve.log"
        proc, conn = serve(repo, log)
        try:
            first = get(conn, f"{base}?limit=50")
            pages = {"newest 50": f"{base}?limit=50", "offset 5000, 50": f"{base}?offset=5000&limit=50",
                     "failed only, 50": f"{base}?status=failed&limit=50",
                     "newest 50, again": f"{base}?limit=50"}
            rows = {}
            for name, path in pages.items():
                times = [get(conn, path) for _ in range(args.requests)]
                rows[name] = {"medianMs": round(statistics.median(times), 1), "maxMs": round(max(times), 1)}
        finally:
            proc.terminate()
            proc.wait(60)
        proc, conn = serve(repo, log)
        try:
            restart = get(conn, f"{base}?limit=50")
        finally:
            proc.terminate()
            proc.wait(60)

        from swamp.app import workflows
        from swamp.repo.context import Repo

        r = Repo.open(repo)
        old = []
        for _ in range(3):
            t0 = time.perf_counter()
            workflows.history(r, "gated", 50)
            old.append((time.perf_counter() - t0) * 1000)
        baseline = {"medianMs": round(statistics.median(old), 1), "maxMs": round(max(old), 1)}

    print(f"\n{args.runs + 1} runs of one workflow; GET {base} over HTTP, one request at a time")
    print(f"{'':<44} {'median':>9} {'max':>9}")
    print(f"{'baseline: every record read (in-process, 3x)':<44} {baseline['medianMs']:>7.1f}ms {baseline['maxMs']:>7.1f}ms")
    for name, row in rows.items():
        print(f"{name + f' ({args.requests}x)':<44} {row['medianMs']:>7.1f}ms {row['maxMs']:>7.1f}ms")
    print(f"{'first request after a fresh start':<44} {first:>7.1f}ms")
    print(f"{'first request after a restart (kept rows)':<44} {restart:>7.1f}ms")
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"run-history-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps({"runs": args.runs + 1, "requests": args.requests, "baselineEveryRecord": baseline,
                                "pages": rows, "firstAfterStartMs": round(first, 1),
                                "firstAfterRestartMs": round(restart, 1), "python": platform.python_version(),
                                "machine": platform.machine()}, indent=2))
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
