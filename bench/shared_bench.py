"""What a shared datastore adds to `model method run` and `data get`, beside
the same commands on the filesystem datastore, in the same run, against a
SeaweedFS server this script starts on 127.0.0.1.

    .venv/bin/python bench/shared_bench.py [--runs 15]

Counts every object-store request of each command (in-process, through a
counting wrapper) and times each command both in-process and as a CLI call.
Targets (issue "Shared datastores in every command"): a method run with
nothing to pull makes no requests beyond its lease, one pull, the uploads of
what it wrote and one commit, and adds at most 100 ms; a `data get` with
nothing to pull adds one request.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.fixtures import servers  # noqa: E402  (starts nothing at import)


class Counting:
    """Wraps an ObjectStore and counts calls by verb."""

    def __init__(self, inner):
        self._inner = inner
        self.name = inner.name
        self.calls = collections.Counter()

    def __getattr__(self, attr):
        target = getattr(self._inner, attr)
        if attr not in ("get", "put", "head", "list", "delete"):
            return target

        def call(*a, **k):
            verb = attr
            if attr == "put":
                key = a[0]
                verb = "put blob" if "/blobs/" in f"/{key}" else ("put commit" if "/log/" in f"/{key}" else
                                                                  "put lease" if "/leases/" in f"/{key}" else "put")
            self.calls[verb] += 1
            result = target(*a, **k)
            if attr == "list":
                result = list(result)
            return result

        return call


def swamp(repo: Path, *args) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "swamp"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # users have bytecode
    return subprocess.run([str(exe), *args, "--repo-dir", str(repo), "--json"], capture_output=True, text=True,
                          check=True, env=env)


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    opts = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="swamp-shared-bench-"))
    server = servers.start_seaweed_mini(tmp)
    try:
        results = run(server, tmp, opts.runs)
    finally:
        servers.stop_processes(server.processes)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / f"shared-{time.strftime('%Y%m%dT%H%M%S')}.json").write_text(json.dumps(results, indent=2))


def run(server, tmp: Path, runs: int) -> dict:
    from swamp.datastore.objectstore import factory
    from swamp.app.methods import run_method
    from swamp.models.runner import Runner
    from swamp.repo.context import Repo
    from swamp.repo.init import init_repo

    local = tmp / "local"
    shared = tmp / "shared"
    for repo in (local, shared):
        init_repo(repo)
        swamp(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=true")
        swamp(repo, "model", "method", "run", "hello", "execute")
    swamp(shared, "datastore", "setup", "s3", "--bucket", server.bucket, "--prefix", server.new_prefix(),
          "--endpoint-url", server.endpoint_url, "--region", "us-east-1")

    # In-process: requests per command, and time per command.
    counters: list[Counting] = []
    real_open = factory.open_store
    factory.open_store = lambda spec: counters.append(Counting(real_open(spec))) or counters[-1]
    timings: dict[str, list[float]] = collections.defaultdict(list)
    requests: dict[str, collections.Counter] = {}
    for label, path in (("filesystem", local), ("shared", shared)):
        repo = Repo.open(path)
        runner = Runner(repo)
        run_method(repo, "hello", "execute", runner=runner)  # warm: imports, first connection
        for _ in range(runs):
            before = collections.Counter(counters[-1].calls) if counters else collections.Counter()
            t0 = time.perf_counter()
            run_method(repo, "hello", "execute", runner=runner)
            timings[f"method run ({label})"].append(time.perf_counter() - t0)
            if label == "shared":
                requests["method run"] = counters[-1].calls - before
        from swamp.app.data import get as get_data

        for _ in range(runs):
            before = collections.Counter(counters[-1].calls) if counters else collections.Counter()
            t0 = time.perf_counter()
            get_data(repo, "hello", "result", None)
            timings[f"data get ({label})"].append(time.perf_counter() - t0)
            if label == "shared":
                requests["data get"] = counters[-1].calls - before
    factory.open_store = real_open

    # As a user calls it: one CLI process per command.
    for label, path in (("filesystem", local), ("shared", shared)):
        for _ in range(max(5, runs // 3)):
            t0 = time.perf_counter()
            swamp(path, "model", "method", "run", "hello", "execute")
            timings[f"CLI method run ({label})"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            swamp(path, "data", "get", "hello", "result")
            timings[f"CLI data get ({label})"].append(time.perf_counter() - t0)

    med = {k: median_ms(v) for k, v in timings.items()}
    print(f"{'measure':34} {'median ms':>10}")
    for k in sorted(med):
        print(f"{k:34} {med[k]:>10}")
    for what in ("method run", "data get", "CLI method run", "CLI data get"):
        print(f"added by the shared datastore, {what}: {med[f'{what} (shared)'] - med[f'{what} (filesystem)']:.1f} ms")
    print("requests per command on the shared datastore (nothing to pull):")
    for cmd, calls in requests.items():
        print(f"  {cmd}: {sum(calls.values())} = {dict(sorted(calls.items()))}")
    return {"medianMs": med, "requests": {k: dict(v) for k, v in requests.items()}, "runs": runs}


if __name__ == "__main__":
    main()
