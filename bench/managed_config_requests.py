"""What managed config costs on the wire: every HTTP request that reaches a
SeaweedFS server (started here on 127.0.0.1, behind a counting proxy), per
command, for two repositories on the same server in the same run:

- baseline: a shared datastore with definitions and workflows in the
  repository (git);
- managed: the same after `swamp datastore config migrate` (they are read
  from and written to the datastore).

Commands: `model search`, `model get`, `model method run hello execute`, a
3-step `workflow run`, and `model create` of a new definition. Each command
runs once first (steady state), then --runs times; the table shows the
median requests per command, by kind, and the median wall time.

    .venv/bin/python bench/managed_config_requests.py [--runs 5]
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures import servers  # noqa: E402  (starts nothing at import)
from tests.fixtures.faultproxy import FaultProxy  # noqa: E402

import workflow_requests  # noqa: E402  (bench/ is on sys.path when run as a script)

# the same 3-step workflow, and the same request classes, as workflow_requests.py
from workflow_requests import SEQUENTIAL, classify  # noqa: E402


def swamp(repo: Path, *args: str) -> dict:
    return workflow_requests.swamp(ROOT / "src", repo, *args)


def setup(work: Path, server, proxy: FaultProxy, label: str, managed: bool) -> Path:
    repo = work / label
    repo.mkdir(parents=True)
    swamp(repo, "repo", "init", str(repo))
    swamp(repo, "model", "create", "command/shell", "hello", "--global-arg", "run=true")
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-seq.yaml").write_text(SEQUENTIAL)
    swamp(repo, "datastore", "setup", "s3", "--bucket", server.bucket, "--prefix", server.new_prefix(),
          "--endpoint-url", proxy.url, "--region", "us-east-1")
    if managed:
        swamp(repo, "datastore", "config", "migrate")
    return repo


def measure(repo: Path, proxy: FaultProxy, runs: int) -> dict:
    counter = iter(range(10**6))
    commands = {
        "model search": lambda: ["model", "search"],
        "model get": lambda: ["model", "get", "hello"],
        "model method run": lambda: ["model", "method", "run", "hello", "execute"],
        "workflow run (3 steps)": lambda: ["workflow", "run", "seq"],
        "model create": lambda: ["model", "create", "command/shell", f"m{next(counter)}", "--global-arg", "run=true"],
    }
    out = {}
    for name, argv in commands.items():
        swamp(repo, *argv())  # steady state
        totals, times, kinds_seen = [], [], []
        for _ in range(runs):
            start = len(proxy.seen)
            t0 = time.perf_counter()
            swamp(repo, *argv())
            times.append((time.perf_counter() - t0) * 1000)
            kinds = collections.Counter(classify(m, p) for m, p in proxy.seen[start:])
            totals.append(sum(kinds.values()))
            kinds_seen.append(dict(sorted(kinds.items())))
        median = statistics.median(totals)
        out[name] = {"requests": median, "kinds": kinds_seen[totals.index(sorted(totals)[len(totals) // 2])],
                     "ms": round(statistics.median(times), 1)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    opts = ap.parse_args()
    servers._use_test_credentials()
    with tempfile.TemporaryDirectory(prefix="swamp-mcreq-") as tmp:
        work = Path(tmp)
        server = servers.start_seaweed_mini(work / "seaweed")
        try:
            with FaultProxy(server.endpoint_url) as proxy:
                base = setup(work, server, proxy, "git", managed=False)
                managed = setup(work, server, proxy, "managed", managed=True)
                results = {"config in git (baseline)": measure(base, proxy, opts.runs),
                           "managed config": measure(managed, proxy, opts.runs)}
        finally:
            servers.stop_processes(server.processes)
    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    (out_dir / f"managed-config-{time.strftime('%Y%m%d-%H%M%S')}.json").write_text(json.dumps(results, indent=2))
    if opts.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{'':<26}{'command':<24}{'requests':>9}{'median ms':>11}  by kind")
    for who, rows in results.items():
        for name, r in rows.items():
            print(f"{who:<26}{name:<24}{r['requests']:>9}{r['ms']:>11}  {r['kinds']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
