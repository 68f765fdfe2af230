"""The dashboard's pages on a repository with 10,000 workflow runs, beside
the 300 ms bar and beside the API's workflow history (which reads every
run record), measured in the same run.

Setup (not timed): one real run of a gated workflow (it waits for an
approval), then N copies of its record written straight into the
datastore with new ids and start times (a few of them waiting too).

Timed: a real `swamp serve --dashboard` process, each page fetched over
HTTP one at a time (median and max of --requests); the first page the
server renders after it starts (its run index warms up in the background
meanwhile); and in-process, a page of runs with a cold index (every
record read), after a restart (the rows the server kept under cache/, one
stat per record), and warm (the directory unchanged: no stat at all).

Usage: .venv/bin/python bench/dashboard_bench.py [--runs 10000] [--requests 15]
Prints a table and writes bench/results/dashboard-<time>.json."""

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
import textwrap
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
BAR_MS = 300.0

GATED = """
name: gated
jobs:
  - name: main
    steps:
      - name: first
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo first"}}
      - name: fan
        forEach: {item: r, in: ["eu", "us", "ap"]}
        dependsOn: [{step: first}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo ${{ self.r }}"}}
      - name: gate
        dependsOn: [{step: fan}]
        task: {type: manual_approval, prompt: "ship it?"}
      - name: last
        dependsOn: [{step: gate}]
        task: {type: model_method, modelIdOrName: hello, methodName: execute, inputs: {run: "echo shipped"}}
"""


def swamp(repo: Path, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "swamp", *args, "--repo-dir", str(repo), "--json"],
                         capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, text=True)
    return json.loads(out.stdout) if out.stdout.strip() else {}


def build(repo: Path, n: int) -> tuple[str, str]:
    """A repository with one real suspended run and n copies of it; returns
    (workflow id, the real run's id)."""
    subprocess.run([sys.executable, "-m", "swamp", "repo", "init", str(repo)], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    swamp(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=echo hello")
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-gated.yaml").write_text(textwrap.dedent(GATED).lstrip())
    real = swamp(repo, "workflow", "run", "gated")
    wid, rid = real["workflowId"], real["id"]
    runs_dir = repo / ".swamp" / "workflow-runs" / wid
    template = json.loads((runs_dir / f"workflow-run-{rid}.yaml").read_text())
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    statuses = ["succeeded"] * 8 + ["failed", "cancelled"]
    for i in range(n):
        doc = json.loads(json.dumps(template))
        doc["id"] = str(uuid.uuid4())
        doc["startedAt"] = (start + timedelta(minutes=i)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        doc["status"] = "suspended" if i % (n // 10 or 1) == 0 else statuses[i % len(statuses)]
        (runs_dir / f"workflow-run-{doc['id']}.yaml").write_text(json.dumps(doc, indent=2))
    return wid, rid


def get(conn: http.client.HTTPConnection, path: str) -> float:
    t0 = time.perf_counter()
    conn.request("GET", path)
    r = conn.getresponse()
    r.read()
    ms = (time.perf_counter() - t0) * 1000
    if r.status != 200:
        raise SystemExit(f"GET {path}: {r.status}")
    return ms


def in_process(repo: Path, requests: int) -> dict:
    from swamp.app.dashboard_queries import RunIndex, workflow_runs
    from swamp.repo.context import Repo

    r = Repo.open(repo)
    index = RunIndex()
    t0 = time.perf_counter()
    workflow_runs(r, index, "gated", offset=0, limit=50)
    cold = (time.perf_counter() - t0) * 1000
    # a restart: a new index with the rows the server kept under cache/
    kept = RunIndex(repo / ".swamp" / "cache" / "dashboard")
    t0 = time.perf_counter()
    workflow_runs(r, kept, "gated", offset=0, limit=50)
    restart = (time.perf_counter() - t0) * 1000
    warm = []
    for _ in range(requests):
        t0 = time.perf_counter()
        workflow_runs(r, index, "gated", offset=5000, limit=50)
        warm.append((time.perf_counter() - t0) * 1000)
    return {"coldMs": round(cold, 1), "restartMs": round(restart, 1), "warmMedianMs": round(statistics.median(warm), 1),
            "warmMaxMs": round(max(warm), 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--requests", type=int, default=15)
    args = ap.parse_args()
    from tests.fixtures.servers import free_port  # noqa: E402  (the tests' helper: a free port)

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        t0 = time.perf_counter()
        wid, rid = build(repo, args.runs)
        print(f"setup: {args.runs + 1} runs in {time.perf_counter() - t0:.1f} s")

        port = free_port()
        log = open(Path(tmp) / "serve.log", "w")
        proc = subprocess.Popen([sys.executable, "-m", "swamp", "serve", "--dashboard", "--port", str(port),
                                 "--repo-dir", str(repo)], stdout=log, stderr=log,
                                env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
        try:
            started = time.perf_counter()
            while True:
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                    conn.request("GET", "/health")
                    conn.getresponse().read()
                    break
                except OSError:
                    if time.perf_counter() - started > 60:
                        raise SystemExit("serve did not start")
                    time.sleep(0.05)
            first = get(conn, "/ui/workflows/gated")  # the index may still be warming up
            time.sleep(1.0)
            pages = {
                "workflows": "/ui/workflows",
                "runs, page 1": "/ui/workflows/gated",
                "runs, page 100": "/ui/workflows/gated?page=100",
                "runs, last page": f"/ui/workflows/gated?page={-(-(args.runs + 1) // 50)}",
                "runs, failed only": "/ui/workflows/gated?status=failed&page=3",
                "a run": f"/ui/workflows/gated/runs/{rid}",
                "approvals": "/ui/approvals",
                "models and data": "/ui/models",
                "data versions": "/ui/data/hello/result",
                "datastore": "/ui/datastore",
                "audit": "/ui/audit",
                "baseline: API history (limit 50)": "/api/v1/workflows/gated/runs?limit=50",
            }
            rows = {}
            for name, path in pages.items():
                times = [get(conn, path) for _ in range(args.requests if "baseline" not in name else 3)]
                rows[name] = {"medianMs": round(statistics.median(times), 1), "maxMs": round(max(times), 1)}
        finally:
            proc.terminate()
            proc.wait(60)
        inproc = in_process(repo, args.requests)

    print(f"\n{args.runs + 1} runs of one workflow; each page {args.requests} times over HTTP, one at a time")
    print(f"{'page':<36} {'median':>9} {'max':>9}   bar {BAR_MS:.0f} ms")
    for name, r in rows.items():
        ok = "" if "baseline" in name else ("ok" if r["maxMs"] < BAR_MS else "OVER")
        print(f"{name:<36} {r['medianMs']:>7.1f}ms {r['maxMs']:>7.1f}ms   {ok}")
    print(f"{'first runs page after start':<36} {first:>7.1f}ms")
    print(f"in-process page of runs: cold index {inproc['coldMs']} ms, after a restart (kept rows) "
          f"{inproc['restartMs']} ms, warm {inproc['warmMedianMs']} ms (max {inproc['warmMaxMs']} ms)")
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"dashboard-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps({"runs": args.runs + 1, "requests": args.requests, "pages": rows,
                                "firstAfterStartMs": round(first, 1), "inProcess": inproc,
                                "python": platform.python_version(), "machine": platform.machine()}, indent=2))
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
