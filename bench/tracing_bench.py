"""What tracing costs when it is off, and when it is on.

- ``swamp --help`` wall time: the tree as it is, OTEL_* unset, beside the
  same command from the source of a base commit (default: the commit before
  tracing landed), extracted with ``git archive``; and the modules each imports.
- ``swamp model method run`` of a command/shell model: tracing off beside
  tracing on (the console exporter, written to /dev/null).

Median of N runs each, interleaved round-robin. Raw numbers go to
bench/results/tracing-<time>.json.

    .venv/bin/python bench/tracing_bench.py [--runs 21] [--base e212c4b]
"""

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
PY = str(ROOT / ".venv" / "bin" / "python")


def env(src: Path, **extra) -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "SWAMP_")) and k != "TRACEPARENT"}
    e["PYTHONPATH"] = str(src)
    e.update(extra)
    return e


def wall(argv, e, cwd) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=e, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t0) * 1000


def imports(src: Path) -> list[str]:
    p = subprocess.run([PY, "-X", "importtime", "-m", "swamp", "--help"], env=env(src), capture_output=True,
                       text=True, check=True)
    return [line.split("|")[-1].strip() for line in p.stderr.splitlines() if line.startswith("import time:")][1:]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--base", default="e212c4b")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base = tmp / "base"
        base.mkdir()
        archive = subprocess.run(["git", "archive", a.base, "src"], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        for src in (base / "src", ROOT / "src"):
            subprocess.run([PY, "-m", "compileall", "-q", str(src)], check=True,
                           env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
        repo = tmp / "repo"
        repo.mkdir()
        now = env(ROOT / "src", SWAMP_FSYNC="0")
        subprocess.run([PY, "-m", "swamp", "repo", "init", "-q"], env=now, cwd=repo, check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([PY, "-m", "swamp", "model", "create", "command/shell", "hello", "--global-arg", "run=true",
                        "--json"], env=now, cwd=repo, check=True, stdout=subprocess.DEVNULL)
        cases = {
            "help_base": ([PY, "-m", "swamp", "--help"], env(base / "src"), tmp),
            "help_now": ([PY, "-m", "swamp", "--help"], env(ROOT / "src"), tmp),
            "run_off": ([PY, "-m", "swamp", "model", "method", "run", "hello", "execute", "--json"], now, repo),
            "run_on": ([PY, "-m", "swamp", "model", "method", "run", "hello", "execute", "--json"],
                       {**now, "OTEL_TRACES_EXPORTER": "console"}, repo),
        }
        times: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(a.runs):
            for k, (argv, e, cwd) in cases.items():
                times[k].append(wall(argv, e, cwd))
        med = {k: statistics.median(v) for k, v in times.items()}
        mods_base, mods_now = imports(base / "src"), imports(ROOT / "src")
    print(f"swamp --help, median of {a.runs}: {med['help_now']:.1f} ms now (OTEL_* unset), "
          f"{med['help_base']:.1f} ms at {a.base} (baseline); ratio {med['help_now'] / med['help_base']:.3f}")
    print(f"modules imported by --help: {len(mods_now)} now, {len(mods_base)} at {a.base}; "
          f"new: {sorted(set(mods_now) - set(mods_base)) or 'none'}")
    print(f"model method run, median of {a.runs}: {med['run_on']:.1f} ms with tracing on (console exporter), "
          f"{med['run_off']:.1f} ms off (baseline); +{med['run_on'] - med['run_off']:.1f} ms")
    out = ROOT / "bench" / "results" / f"tracing-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"runs": a.runs, "base": a.base, "ms": times, "median_ms": med,
                               "modules": {"base": mods_base, "now": mods_now}}, indent=1))
    print(f"raw: {out.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
