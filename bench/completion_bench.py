"""What a TAB costs: the shell's call back into swamp for the names of
models, of a model's methods and of its data (bash's protocol, as
`swamp completions bash` sets it up), beside `python -c pass`, and beside
another checkout's code with ``--baseline OTHER/src``, interleaved in one
run. Target (issue 28): under 150 ms per TAB.

    .venv/bin/python bench/completion_bench.py [--runs 11] [--baseline /tmp/before/src]

Writes bench/results/completion-<time>.json."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = {"model names": ("swamp model get h", 3), "methods": ("swamp model method run hello ", 5),
         "data names": ("swamp data get hello ", 4)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--baseline", help="another checkout's src/")
    a = ap.parse_args()
    srcs = {"swamp": ROOT / "src"}
    if a.baseline:
        srcs["before"] = Path(a.baseline).resolve()
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # users have bytecode
    for src in srcs.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, capture_output=True)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        env = {**base_env, "PYTHONPATH": str(ROOT / "src")}
        run = lambda *args: subprocess.run([sys.executable, "-m", "swamp", *args, "--repo-dir", str(repo), "--json"],  # noqa: E731
                                           env=env, check=True, capture_output=True)
        subprocess.run([sys.executable, "-m", "swamp", "repo", "init", str(repo), "--json"], env=env, check=True,
                       capture_output=True)
        run("model", "create", "command/shell", "hello", "--global-arg", "run=echo hi")
        run("model", "method", "run", "hello", "execute")
        times: dict = {f"{label}: {case}": [] for label in srcs for case in CASES}
        times["python -c pass"] = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            times["python -c pass"].append(time.perf_counter() - t0)
            for label, src in srcs.items():
                for case, (words, cword) in CASES.items():
                    e = {**base_env, "PYTHONPATH": str(src), "_SWAMP_COMPLETE": "bash_complete",
                         "COMP_WORDS": words, "COMP_CWORD": str(cword)}
                    t0 = time.perf_counter()
                    out = subprocess.run([sys.executable, "-m", "swamp"], env=e, cwd=repo, capture_output=True,
                                         text=True)
                    times[f"{label}: {case}"].append(time.perf_counter() - t0)
                    if "plain," not in out.stdout:
                        raise SystemExit(f"{label} {words!r}: no names offered: {out.stdout!r} {out.stderr[-300:]}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; median of {a.runs} runs")
    medians = {k: round(statistics.median(v) * 1000, 1) for k, v in times.items()}
    for k, v in medians.items():
        print(f"{k:32}{v:>8.1f} ms")
    out = ROOT / "bench" / "results" / f"completion-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"medianMs": medians, "loadAverage": os.getloadavg()}, indent=2))
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
