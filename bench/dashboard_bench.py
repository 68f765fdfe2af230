"""The dashboard's pages on a repository with 10,000 workflow runs, beside
the 300 ms bar and beside the API's workflow history (which reads every
run record), measured in the same run.

Setup (not timed): one real run of a gated workflow (it waits for an
approval), then N copies of its record written straight into the
datastore with new ids and start times (a few of them waiting too).

Each copy's file time is set to when its run ended, as a record's file
is last written then (the copies started a minute apart).

Timed: a real `swamp serve --dashboard` process, each page fetched over
HTTP one at a time (median and max of --requests); the first runs page and
the first workflows page a server renders after it starts (its run index
warms up in the background meanwhile), on a first start (nothing kept
under cache/dashboard/) and after a restart, and, with --baseline-src, the
same first start by the code at an older commit (its src/ directory, e.g.
a `git worktree add /tmp/dash-base COMMIT`), in the same run on the same
repository; and in-process, a page of runs with a cold index (every
record read), the newest page with nothing indexed (records read newest
file first), after a restart (the rows the server kept under cache/, one
stat per record), and warm (the directory unchanged: no stat at all).

Usage: .venv/bin/python bench/dashboard_bench.py [--runs 10000] [--requests 15] [--baseline-src DIR]
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
        path = runs_dir / f"workflow-run-{doc['id']}.yaml"
        path.write_text(json.dumps(doc, indent=2))
        ended = (start + timedelta(minutes=i)).timestamp() + (doc.get("durationMs") or 0) / 1000
        os.utime(path, (ended, ended))  # last written when the run ended
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


def start_serve(repo: Path, src: Path, log_path: Path) -> tuple[subprocess.Popen, http.client.HTTPConnection]:
    from tests.fixtures.servers import free_port  # the tests' helper: a free port

    port = free_port()
    log = open(log_path, "a")
    proc = subprocess.Popen([sys.executable, "-m", "swamp", "serve", "--dashboard", "--port", str(port),
                             "--repo-dir", str(repo)], stdout=log, stderr=log,
                            env={**os.environ, "PYTHONPATH": str(src)})
    started = time.perf_counter()
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request("GET", "/health")
            conn.getresponse().read()
            return proc, conn
        except OSError:
            if time.perf_counter() - started > 60:
                proc.terminate()
                raise SystemExit("serve did not start")
            time.sleep(0.05)


def first_pages(repo: Path, src: Path, log_path: Path, *, fresh: bool) -> dict:
    """The first runs page and the first workflows page of a server just
    started (on a first start: nothing kept under cache/dashboard/)."""
    import shutil

    if fresh:
        shutil.rmtree(repo / ".swamp" / "cache" / "dashboard", ignore_errors=True)
    proc, conn = start_serve(repo, src, log_path)
    try:
        runs = get(conn, "/ui/workflows/gated")
        conn2 = http.client.HTTPConnection(conn.host, conn.port, timeout=60)
        workflows = get(conn2, "/ui/workflows")
    finally:
        proc.terminate()
        proc.wait(60)
    return {"runsMs": round(runs, 1), "workflowsMs": round(workflows, 1)}


def in_process(repo: Path, requests: int) -> dict:
    from swamp.app.dashboard_queries import workflow_runs
    from swamp.workflows.run_index import RunIndex
    from swamp.repo.context import Repo

    r = Repo.open(repo)
    from swamp.workflows import records
    from swamp.workflows.files import find_workflow
    from swamp.workflows.schema import workflow_id

    wid = workflow_id(find_workflow(r, "gated")[1])
    t0 = time.perf_counter()
    RunIndex()._newest_by_file_time(r.datastore, wid, str(r.datastore.local_path(records.run_dir(wid))), 50)
    newest = (time.perf_counter() - t0) * 1000
    index = RunIndex()
    t0 = time.perf_counter()
    index.rows(r.datastore, wid)
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
    return {"coldMs": round(cold, 1), "newestByFileTimeMs": round(newest, 1), "restartMs": round(restart, 1), "warmMedianMs": round(statistics.median(warm), 1),
            "warmMaxMs": round(max(warm), 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--requests", type=int, default=15)
    ap.add_argument("--baseline-src", type=Path,
                    help="the src/ directory of an older commit: its first start is measured beside this one's")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        t0 = time.perf_counter()
        wid, rid = build(repo, args.runs)
        print(f"setup: {args.runs + 1} runs in {time.perf_counter() - t0:.1f} s")
        log_path = Path(tmp) / "serve.log"
        firsts = {}
        if args.baseline_src:
            firsts["baseline, first start"] = first_pages(repo, args.baseline_src, log_path, fresh=True)
            time.sleep(6)
            firsts["baseline, restart"] = first_pages(repo, args.baseline_src, log_path, fresh=False)
        firsts["first start"] = first_pages(repo, ROOT / "src", log_path, fresh=True)
        time.sleep(6)  # the index the first server kept (saved at most every 5 s) ...
        firsts["restart"] = first_pages(repo, ROOT / "src", log_path, fresh=False)  # ... used after a restart
        if args.baseline_src:
            firsts["baseline, first start (again)"] = first_pages(repo, args.baseline_src, log_path, fresh=True)
        firsts["first start (again)"] = first_pages(repo, ROOT / "src", log_path, fresh=True)

        proc, conn = start_serve(repo, ROOT / "src", log_path)
        try:
            time.sleep(3.0)  # the index warms up
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
    print(f"\nthe first page a server renders after it starts (bar {BAR_MS:.0f} ms):")
    for name, f in firsts.items():
        print(f"  {name:<34} runs page {f['runsMs']:>7.1f} ms   workflows page {f['workflowsMs']:>7.1f} ms")
    print(f"in-process page of runs: cold index {inproc['coldMs']} ms, newest 50 with nothing indexed "
          f"{inproc['newestByFileTimeMs']} ms, after a restart (kept rows) "
          f"{inproc['restartMs']} ms, warm {inproc['warmMedianMs']} ms (max {inproc['warmMaxMs']} ms)")
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"dashboard-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps({"runs": args.runs + 1, "requests": args.requests, "pages": rows,
                                "firstPages": firsts, "inProcess": inproc,
                                "python": platform.python_version(), "machine": platform.machine()}, indent=2))
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
