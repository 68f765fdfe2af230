"""The commit point under load: commits per second and commit latency with
1, 4, 16 and 32 concurrent writers on one SeaweedFS (started here on
127.0.0.1), each writer a sync engine of its own (its own cache, its own
client), all committing to one log.

    .venv/bin/python bench/commit_point_bench.py [--seconds 3] [--writers 1,4,16,32] [--latency-ms 0,20]

Each writer runs what a `model method run` session does, as fast as it
can: take the model's lease, pull, write one small file, push (the LIST
the head-is-current rule asks for, the create of ``log/<head+1>``; on a
lost race, the pull and the create again), release the lease. Two modes:

- ``models``: every writer has a model of its own (a lease each): only the
  log is shared, so the writers race for ``log/<head+1>``;
- ``one``: every writer runs the same model: they take turns on its lease
  (a waiting writer polls it with backoff, 20 ms doubling up to 1 s).

Every request goes through a delaying proxy (tests/fixtures/faultproxy.py,
one connection per request) that adds ``--latency-ms`` before forwarding:
0 ms is this machine's loopback, 20 ms is a bucket in another region.
Reported per cell: commits/s over the run, p50 and p99 of the commit
latency (the push, from its start until its commit landed, lost races
included), p99 of the whole session, and how many creates lost the race
per commit. The writers are threads of one Python process: on this 2-core
machine shared with SeaweedFS the CPU, not the log, may be what tops out
first at 16 and 32 writers (the load average is printed)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.fixtures import servers  # noqa: E402  (sets the test credentials)
from tests.fixtures.faultproxy import Fault, FaultProxy  # noqa: E402


def _engine(server, prefix: str, url: str, cache: Path, peer: str):
    from swamp.datastore.objectstore.factory import open_store
    from swamp.datastore.sync.engine import SyncEngine
    from swamp.repo.datastores import path_rules

    config = {**server.config(prefix), "endpoint_url": url}
    return SyncEngine(open_store(config), cache, rules=path_rules(), peer=peer, concurrency=2)


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def cell(server, proxy: FaultProxy, tmp: Path, writers: int, mode: str, seconds: float) -> dict:
    from swamp.errors import LockTimeoutError

    prefix = server.new_prefix()
    engines = [_engine(server, prefix, proxy.url, tmp / f"{prefix}-w{i}", f"w{i}") for i in range(writers)]
    try:
        first = engines[0]  # untimed: the namespace's format record and first commit
        (first.root / "files").mkdir(parents=True, exist_ok=True)
        (first.root / "files" / "start").write_bytes(b"start")
        first.mark_dirty("files/start")
        first.push(command="bench start")
        for e in engines:
            e.pull()
        push_s: list[float] = []
        session_s: list[float] = []
        errors: list[str] = []
        lock = threading.Lock()
        deadline = time.monotonic() + seconds
        start = threading.Barrier(writers)

        def work(i: int, engine) -> None:
            lease = "model/bench/one" if mode == "one" else f"model/bench/m{i}"
            own = engine.root / "files" / f"w{i}"
            own.mkdir(parents=True, exist_ok=True)
            start.wait()
            n = 0
            while (left := deadline - time.monotonic()) > 0:
                t0 = time.perf_counter()
                try:
                    # a writer still waiting for the lease at the end of the cell stops there
                    with engine.lease(lease, timeout_ms=max(1, int(left * 1000))):
                        engine.pull()
                        rel = f"files/w{i}/{n}"
                        (engine.root / rel).write_bytes(f"writer {i} commit {n}".encode())
                        engine.mark_dirty(rel)
                        tp = time.perf_counter()
                        engine.push(command="bench")
                        t1 = time.perf_counter()
                except LockTimeoutError:
                    continue  # the cell ended while it waited
                except Exception as e:  # counted and shown: a bench that hides failures lies
                    with lock:
                        errors.append(f"{type(e).__name__}: {e}"[:200])
                    continue
                t2 = time.perf_counter()
                n += 1
                with lock:
                    push_s.append(t1 - tp)
                    session_s.append(t2 - t0)

        threads = [threading.Thread(target=work, args=(i, e), daemon=True) for i, e in enumerate(engines)]
        seen_before = len(proxy.seen)
        t_start = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - t_start
        # every request in the window is this cell's (its LISTs name the prefix in the query, which
        # the proxy does not keep)
        seen = proxy.seen[seen_before:]
    finally:
        for e in engines:
            e.close()
    commits = len(push_s)
    creates = sum(1 for m, p in seen if m == "PUT" and "/log/" in p)  # a lost race is a create refused (412)
    return {"writers": writers, "mode": mode, "commits": commits, "seconds": round(elapsed, 2),
            "commitsPerSecond": round(commits / elapsed, 1) if elapsed else 0.0,
            "commitP50Ms": round(1000 * _pct(push_s, 0.50), 1), "commitP99Ms": round(1000 * _pct(push_s, 0.99), 1),
            "sessionP99Ms": round(1000 * _pct(session_s, 0.99), 1),
            "lostRacesPerCommit": round((creates - commits) / commits, 2) if commits else None,
            "requestsPerCommit": round(len(seen) / commits, 1) if commits else None,
            "errors": sorted(set(errors))[:3], "errorCount": len(errors)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="how long each cell runs")
    ap.add_argument("--writers", default="1,4,16,32")
    ap.add_argument("--latency-ms", default="0,20", help="added before each request, comma-separated")
    ap.add_argument("--modes", default="models,one")
    ap.add_argument("--json", action="store_true")
    opts = ap.parse_args()
    writers = [int(w) for w in opts.writers.split(",")]
    latencies = [float(x) for x in opts.latency_ms.split(",")]
    modes = opts.modes.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="swamp-commit-point-"))
    server = servers.start_seaweed_mini(tmp / "seaweed")
    rows = []
    loads = []
    try:
        for ms in latencies:
            with FaultProxy(server.endpoint_url) as proxy:
                if ms:
                    proxy.fail_fraction(1.0, Fault("delay", seconds=ms / 1000))
                for mode in modes:
                    for n in writers:
                        row = cell(server, proxy, tmp, n, mode, opts.seconds)
                        row["latencyMs"] = ms
                        loads.append(os.getloadavg()[0])
                        rows.append(row)
                        if not opts.json:
                            print(f"  {ms:>4.0f} ms  {mode:<7}{n:>3} writers: {row['commitsPerSecond']:>6} commits/s, "
                                  f"p99 {row['commitP99Ms']} ms", file=sys.stderr, flush=True)
    finally:
        servers.stop_processes(server.processes)
        shutil.rmtree(tmp, ignore_errors=True)
    if opts.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"\ncommit point on SeaweedFS (127.0.0.1, through a delaying proxy), {opts.seconds:g} s a cell, "
          f"load {min(loads):.1f}-{max(loads):.1f}")
    print(f"{'added':>6} {'mode':<7}{'writers':>8}{'commits/s':>11}{'commit p50':>12}{'commit p99':>12}"
          f"{'session p99':>13}{'lost/commit':>13}{'requests/commit':>17}{'errors':>8}")
    for r in rows:
        print(f"{r['latencyMs']:>4.0f}ms {r['mode']:<7}{r['writers']:>8}{r['commitsPerSecond']:>11}"
              f"{r['commitP50Ms']:>10}ms{r['commitP99Ms']:>10}ms{r['sessionP99Ms']:>11}ms"
              f"{r['lostRacesPerCommit'] if r['lostRacesPerCommit'] is not None else '-':>13}"
              f"{r['requestsPerCommit'] if r['requestsPerCommit'] is not None else '-':>17}{r['errorCount']:>8}")
    for r in rows:
        for e in r["errors"]:
            print(f"  error ({r['latencyMs']:.0f} ms, {r['mode']}, {r['writers']}): {e}")
    out = HERE / "results" / f"commit_point_bench-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "seconds": opts.seconds}, indent=2))
    print(f"\nwrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
