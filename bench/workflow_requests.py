"""What a workflow costs on a shared datastore, counted on the wire: every
HTTP request that reaches a SeaweedFS server (this script starts one on
127.0.0.1, behind a counting proxy), for

- a 3-step sequential workflow (s1 -> s2 -> s3, each a command/shell `true`);
- a 100-step forEach of the same method.

The same workloads run, in the same run and against the same server, with
the swamp of a baseline commit (default b2ca11d, before the application
layer; checked out into a temporary git worktree) and with this checkout.

    .venv/bin/python bench/workflow_requests.py [--baseline b2ca11d] [--items 100]

Each repository runs the sequential workflow once first (its first commit
also writes the namespace's format record), so the figures are a steady
state. Reported per workload: requests in all, commits (create-only PUTs of
log/<seq>), lease round-trips (requests on leases/), blob uploads, listings,
and per step. Targets (issue "The application layer"): at most one commit
per step, and for the sequential run at most half of the baseline's
requests.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures import servers  # noqa: E402  (starts nothing at import)
from tests.fixtures.faultproxy import FaultProxy  # noqa: E402

SEQUENTIAL = textwrap.dedent("""\
    name: seq
    jobs:
      - name: j
        steps:
          - {name: s1, task: {type: model_method, modelIdOrName: hello, methodName: execute}}
          - name: s2
            dependsOn: [{step: s1}]
            task: {type: model_method, modelIdOrName: hello, methodName: execute}
          - name: s3
            dependsOn: [{step: s2}]
            task: {type: model_method, modelIdOrName: hello, methodName: execute}
    """)

FAN = textwrap.dedent("""\
    name: fan
    inputs:
      properties:
        items: {type: array}
    jobs:
      - name: j
        steps:
          - name: "s-${{ self.i }}"
            forEach: {item: i, in: "${{ inputs.items }}"}
            task: {type: model_method, modelIdOrName: hello, methodName: execute}
    """)


def swamp(src: Path, repo: Path, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "SWAMP_REPO_DIR": str(repo)}
    p = subprocess.run([sys.executable, "-m", "swamp", *args, "--json"], cwd=repo, env=env,
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise SystemExit(f"swamp {' '.join(args)} failed ({p.returncode}): {p.stderr[-2000:]}")
    return json.loads(p.stdout) if p.stdout.strip() else {}


def classify(method: str, path: str) -> str:
    if "/leases/" in path:
        return "lease"
    if "/log/" in path and method == "PUT":
        return "commit"
    if "/blobs/" in path and method == "PUT":
        return "blob upload"
    if method == "GET" and path.rstrip("/").count("/") <= 1:
        return "list"
    return f"other {method}"


def measure(src: Path, work: Path, server, proxy: FaultProxy, label: str, items: int, trace: bool = False) -> dict:
    repo = work / label
    repo.mkdir(parents=True)
    swamp(src, repo, "repo", "init", str(repo))
    swamp(src, repo, "model", "create", "command/shell", "hello", "--global-arg", "run=true")
    (repo / "workflows").mkdir(exist_ok=True)
    (repo / "workflows" / "workflow-seq.yaml").write_text(SEQUENTIAL)
    (repo / "workflows" / "workflow-fan.yaml").write_text(FAN)
    swamp(src, repo, "datastore", "setup", "s3", "--bucket", server.bucket, "--prefix", server.new_prefix(),
          "--endpoint-url", proxy.url, "--region", "us-east-1")
    # Steady state: the first commit in a fresh namespace also writes its
    # format record, which no later run pays for.
    swamp(src, repo, "workflow", "run", "seq")
    out = {}
    for name, steps, args in (("3-step sequential", 3, ["seq"]),
                              (f"{items}-step forEach", items,
                               ["fan", "--input", json.dumps({"items": list(range(items))})])):
        start = len(proxy.seen)
        run = swamp(src, repo, "workflow", "run", *args)
        assert run["status"] == "succeeded", run
        kinds = collections.Counter(classify(m, p) for m, p in proxy.seen[start:])
        if trace and steps == 3:
            for m, p in proxy.seen[start:]:
                print(f"  {label:<7} {m:<7} {p}", file=sys.stderr)
        total = sum(kinds.values())
        out[name] = {"steps": steps, "requests": total, "kinds": dict(sorted(kinds.items())),
                     "requestsPerStep": round(total / steps, 2),
                     "commitsPerStep": round(kinds["commit"] / steps, 2),
                     "leaseRoundTripsPerStep": round(kinds["lease"] / steps, 2)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", default="b2ca11d", help="the commit to compare with")
    ap.add_argument("--baseline-src", type=Path, default=None,
                    help="another checkout's src/ to compare with instead of --baseline (e.g. the main checkout's)")
    ap.add_argument("--trace", action="store_true", help="print each request of the 3-step run")
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    opts = ap.parse_args()
    servers._use_test_credentials()
    with tempfile.TemporaryDirectory(prefix="swamp-wfreq-") as tmp:
        work = Path(tmp)
        base_tree = work / "baseline"
        if opts.baseline_src is None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base_tree), opts.baseline],
                           check=True, capture_output=True)
            base_src, base_label = base_tree / "src", opts.baseline
        else:
            base_src, base_label = opts.baseline_src.resolve(), str(opts.baseline_src)
        server = servers.start_seaweed_mini(work / "seaweed")
        try:
            with FaultProxy(server.endpoint_url) as proxy:
                results = {
                    f"baseline {base_label}": measure(base_src, work, server, proxy, "before", opts.items,
                                                      opts.trace),
                    "this checkout": measure(ROOT / "src", work, server, proxy, "after", opts.items, opts.trace),
                }
        finally:
            servers.stop_processes(server.processes)
            if opts.baseline_src is None:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base_tree)],
                               capture_output=True)
    if opts.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{'':<28}{'workload':<22}{'requests':>9}{'per step':>9}{'commits/step':>13}{'lease/step':>11}  by kind")
    for who, rows in results.items():
        for name, r in rows.items():
            print(f"{who:<28}{name:<22}{r['requests']:>9}{r['requestsPerStep']:>9}{r['commitsPerStep']:>13}"
                  f"{r['leaseRoundTripsPerStep']:>11}  {r['kinds']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
