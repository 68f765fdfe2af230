"""A 100-item forEach on one model, before and after (issue 25).

Each checkout (this one, and ``--baseline``, a checkout with its own
``.venv``, /work/main by default) runs the same workflow in a fresh
repository of its own: ITEMS items of a `command/shell` model that sleeps
SLEEP seconds, the step's `concurrency: CAP`, in one run, interleaved
rounds. Before, the items of one model queue on its lease whatever the
cap says; after, they run CAP at a time and only numbering their versions
takes the lease. With ``--sleep 0`` the figure is what each item costs
(sessions, lease, numbering) when the method does nothing.

Printed: wall time of `swamp workflow run`, the most items seen running
at once (from the run record's start and end times), and the check that
the versions are 1..ITEMS, each once. Raw numbers go to bench/results/.

    .venv/bin/python bench/foreach_one_model_bench.py --items 100 --sleep 0.2 --cap 10
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _swamp(python: Path, repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-m", "swamp", "--repo-dir", str(repo), *args], capture_output=True,
                          text=True, check=False)


def _repo(python: Path, where: Path, items: int, sleep: float, cap: int) -> Path:
    repo = where
    subprocess.run([str(python), "-m", "swamp", "repo", "init", str(repo)], capture_output=True, check=True)
    got = _swamp(python, repo, "model", "create", "command/shell", "pauser", "--global-arg",
                 f"run=sleep {sleep}; echo done")
    assert got.returncode == 0, got.stderr
    wf = repo / "workflows" / "workflow-each.yaml"
    wf.parent.mkdir(parents=True, exist_ok=True)
    numbers = ", ".join(str(k) for k in range(items))
    wf.write_text(f"""name: each
jobs:
  - name: main
    steps:
      - name: "item-${{{{ self.n }}}}"
        concurrency: {cap}
        forEach: {{item: n, in: "${{{{ [{numbers}] }}}}"}}
        task: {{type: model_method, modelIdOrName: pauser, methodName: execute}}
""")
    return repo


def _overlap(steps: list[dict]) -> int:
    events = []
    for s in steps:
        if s.get("startedAt") and s.get("completedAt"):
            events += [(datetime.fromisoformat(s["startedAt"].replace("Z", "+00:00")), 1),
                       (datetime.fromisoformat(s["completedAt"].replace("Z", "+00:00")), -1)]
    now = best = 0
    for _, d in sorted(events, key=lambda e: (e[0], e[1])):
        now += d
        best = max(best, now)
    return best


def _round(python: Path, scratch: Path, name: str, items: int, sleep: float, cap: int) -> dict:
    repo = _repo(python, scratch / name, items, sleep, cap)
    t0 = time.perf_counter()
    got = _swamp(python, repo, "workflow", "run", "each", "--json")
    wall = time.perf_counter() - t0
    assert got.returncode == 0, got.stderr[-2000:]
    run = json.loads(got.stdout)
    versions = _swamp(python, repo, "data", "versions", "pauser", "log", "--json")
    numbers = sorted(v["version"] for v in json.loads(versions.stdout))
    return {"wall_s": round(wall, 3), "overlap": _overlap(run["jobs"][0]["steps"]),
            "versions_ok": numbers == list(range(1, items + 1)), "status": run["status"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--sleep", type=float, default=0.2)
    ap.add_argument("--cap", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--baseline", type=Path, default=Path("/work/main"),
                    help="a checkout with its own .venv (the code before)")
    a = ap.parse_args()
    sides = {"after": ROOT / ".venv" / "bin" / "python", "before": a.baseline / ".venv" / "bin" / "python"}
    results: dict[str, list[dict]] = {k: [] for k in sides}
    with tempfile.TemporaryDirectory(prefix="swamp-foreach-bench-") as tmp:
        for r in range(a.rounds):
            for side, python in sides.items():  # interleaved: both see the same machine
                results[side].append(_round(python, Path(tmp), f"{side}-{r}", a.items, a.sleep, a.cap))
    best = {side: min(rs, key=lambda x: x["wall_s"]) for side, rs in results.items()}
    print(f"{a.items} items of 'sleep {a.sleep}' on one model, concurrency {a.cap}, best of {a.rounds}:")
    print(f"{'':8} {'wall':>9} {'at once':>8} {'versions 1..N once':>19}")
    for side in ("before", "after"):
        b = best[side]
        print(f"{side:8} {b['wall_s']:>8.2f}s {b['overlap']:>8} {str(b['versions_ok']):>19}")
    print(f"after / before: {best['after']['wall_s'] / best['before']['wall_s']:.2f} x")
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "foreach_one_model.json").write_text(json.dumps({"args": {k: str(v) for k, v in vars(a).items()},
                                                            "results": results}, indent=2))


if __name__ == "__main__":
    main()
