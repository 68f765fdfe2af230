"""Core benchmarks: start-up, method-run overhead, and reading the latest
data version with few and with many versions. Each figure is printed beside
the baseline it is judged against, measured in the same run.

    .venv/bin/python bench/core_bench.py [--runs 21] [--quick]

Prints a table and writes bench/results/core-<time>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))
# Building 10,000 versions is setup, not what is measured: skip fsync there.
# Everything timed runs with fsync as the user has it (on by default).
_USER_FSYNC = os.environ.get("SWAMP_FSYNC")
os.environ["SWAMP_FSYNC"] = "0"

PYTHON = sys.executable
SWAMP_SCRIPT = Path(PYTHON).parent / "swamp"

NOOP_TYPE = '''
from swamp import Context, ModelType

noop = ModelType("bench/noop", version="2026.01.01.1", description="Does nothing")


@noop.method(description="Nothing at all")
def run(args, ctx: Context) -> None:
    pass
'''


def swamp_cmd() -> list[str]:
    """The console script users run; `python -m swamp` if it is missing."""
    return [str(SWAMP_SCRIPT)] if SWAMP_SCRIPT.exists() else [PYTHON, "-m", "swamp"]


def child_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWAMP_")}
    if _USER_FSYNC is not None:
        env["SWAMP_FSYNC"] = _USER_FSYNC
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def fsync_as_the_user_has_it() -> None:
    from swamp.util import atomic

    atomic._FSYNC = (_USER_FSYNC or "1") != "0"


def time_commands(commands: dict[str, list[str]], runs: int, cwd: Path) -> dict[str, list[float]]:
    """Wall time of each command, interleaved round-robin so that drift in
    machine load hits every command alike. One warm-up run each."""
    env = child_env()
    times: dict[str, list[float]] = {k: [] for k in commands}
    for i in range(runs + 1):
        for key, argv in commands.items():
            t0 = time.perf_counter()
            p = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            dt = time.perf_counter() - t0
            if p.returncode != 0:
                raise SystemExit(f"{' '.join(argv)} failed: {p.stderr.decode()}")
            if i:
                times[key].append(dt)
    return times


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def import_profile(argv_tail: list[str], cwd: Path, top: int = 8) -> list[tuple[str, float]]:
    """The modules with the largest cumulative import time (ms)."""
    target = [str(SWAMP_SCRIPT)] if SWAMP_SCRIPT.exists() else ["-m", "swamp"]
    p = subprocess.run([PYTHON, "-X", "importtime", *target, *argv_tail], cwd=cwd, env=child_env(),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    tops = []
    for line in p.stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:"):].split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue  # the header line
        name = parts[2][1:]  # one separator space; more means a nested import
        if not name.startswith(" "):
            tops.append((name, int(parts[1]) / 1000))
    return sorted(tops, key=lambda r: r[1], reverse=True)[:top]


def make_repo(base: Path, name: str, versions: int) -> Path:
    """A repository with model `m` (command/shell) whose data `d` has
    `versions` versions, written in-process through DataRepository.write."""
    from swamp.data.repository import DataRepository
    from swamp.app.model_definitions import create_model
    from swamp.repo.context import Repo
    from swamp.repo.init import init_repo
    from swamp.util import clock
    from swamp.util.ids import new_id

    root = base / name
    init_repo(root)
    repo = Repo.open(root)
    (root / "extensions" / "models" / "noop.py").write_text(NOOP_TYPE)
    created = create_model(repo, "command/shell", "m", {"run": "true"})
    create_model(repo, "bench/noop", "n", {})
    data = DataRepository(repo.datastore)
    for v in range(versions):
        content = json.dumps({"exitCode": 0, "stdout": f"run {v}", "stderr": ""}).encode()
        data.write("command/shell", created["id"], {
            "id": new_id(), "name": "d", "specName": "result", "kind": "resource",
            "contentType": "application/json", "lifetime": "infinite", "garbageCollection": None,
            "tags": {}, "createdAt": clock.isoformat(),
            "owner": {"definitionId": created["id"], "definitionName": "m", "modelType": "command/shell"},
        }, content)
    return root


def in_process_rate(fn, min_seconds: float, min_iters: int) -> tuple[float, int]:
    """Calls per second of fn, run for at least min_seconds and min_iters."""
    fn()  # warm-up (imports, caches)
    n, t0 = 0, time.perf_counter()
    while n < min_iters or time.perf_counter() - t0 < min_seconds:
        fn()
        n += 1
    return n / (time.perf_counter() - t0), n


def in_process_median_ms(fn, iters: int) -> float:
    fn()
    samples = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return median_ms(samples)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=21, help="subprocess runs per command (median; at least 15)")
    ap.add_argument("--quick", action="store_true", help="fewer runs and 1,000 instead of 10,000 versions")
    ap.add_argument("--keep", action="store_true", help="keep the temporary repositories")
    opts = ap.parse_args()
    runs = max(opts.runs, 15) if not opts.quick else 5
    many = 10_000 if not opts.quick else 1_000

    from swamp.app.data import get as get_data
    from swamp.app.methods import run_method
    from swamp.models.runner import Runner
    from swamp.repo.context import Repo

    tmp = Path(tempfile.mkdtemp(prefix="swamp-core-bench-"))
    results: dict = {"python": sys.version.split()[0], "platform": platform.platform(),
                     "cpus": os.cpu_count(), "runs": runs, "swamp": swamp_cmd()}
    rows: list[tuple[str, str, str, str]] = []
    try:
        t0 = time.perf_counter()
        few_repo = make_repo(tmp, "few", 10)
        build_few = time.perf_counter() - t0
        t0 = time.perf_counter()
        many_repo = make_repo(tmp, "many", many)
        build_many = time.perf_counter() - t0
        results["setup"] = {"build10s": round(build_few, 3), f"build{many}s": round(build_many, 3)}
        fsync_as_the_user_has_it()
        results["fsync"] = (_USER_FSYNC or "1") != "0"

        # 1. Cold start ------------------------------------------------------
        sw = swamp_cmd()
        cmds = {
            "python": [PYTHON, "-c", "pass"],
            "help": [*sw, "--help"],
            "get10": [*sw, "data", "get", "m", "d", "--json"],
            "getmany": [*sw, "data", "get", "m", "d", "--json", "--repo-dir", str(many_repo)],
            "run": [*sw, "model", "method", "run", "n", "run", "--json"],
        }
        times = time_commands(cmds, runs, few_repo)
        med = {k: median_ms(v) for k, v in times.items()}
        base = med["python"]
        results["coldStartMs"] = {k: round(v, 2) for k, v in med.items()}
        results["coldStartRatio"] = {k: round(v / base, 2) for k, v in med.items()}
        rows += [
            ("bare python -c pass", f"{base:.1f} ms", "baseline", ""),
            ("swamp --help", f"{med['help']:.1f} ms", f"{med['help'] / base:.2f}x python",
             _verdict(med["help"] / base, 4.0)),
            ("swamp data get (10 versions)", f"{med['get10']:.1f} ms", f"{med['get10'] / base:.2f}x python",
             _verdict(med["get10"] / base, 8.0)),
        ]

        # 2. Method-run overhead ----------------------------------------------
        few = Repo.open(few_repo)
        runner = Runner(few)
        rate, n = in_process_rate(lambda: run_method(few, "n", "run", runner=runner), 2.0, 50)
        results["runsPerSecond"] = {"inProcess": round(rate, 1), "inProcessIterations": n,
                                    "cliPerCallMs": round(med["run"], 2),
                                    "cliPerSecond": round(1000 / med["run"], 2)}
        rows += [
            ("no-op method run, in-process (app.methods.run_method)", f"{rate:.0f} runs/s", f"{1000 / rate:.2f} ms/run", ""),
            ("no-op method run, one CLI call each", f"{1000 / med['run']:.1f} runs/s",
             f"{med['run']:.1f} ms/call = {med['run'] / base:.1f}x python", ""),
        ]

        # 3. Latest version with 10 and with N versions -------------------------
        few_r, many_r = Repo.open(few_repo), Repo.open(many_repo)
        ip10 = in_process_median_ms(lambda: get_data(few_r, "m", "d", None), 300)
        ipmany = in_process_median_ms(lambda: get_data(many_r, "m", "d", None), 300)
        assert get_data(many_r, "m", "d", None)["version"] == many
        results["latestRead"] = {
            "versions": many,
            "cliMs10": round(med["get10"], 2), f"cliMs{many}": round(med["getmany"], 2),
            "cliRatio": round(med["getmany"] / med["get10"], 3),
            "inProcessMs10": round(ip10, 3), f"inProcessMs{many}": round(ipmany, 3),
            "inProcessRatio": round(ipmany / ip10, 2),
        }
        rows += [
            (f"data get latest, CLI, {many:,} versions", f"{med['getmany']:.1f} ms",
             f"{med['getmany'] / med['get10']:.2f}x the 10-version case",
             _verdict(med["getmany"] / med["get10"], 1.5)),
            (f"data get latest, in-process, {many:,} versions", f"{ipmany:.2f} ms",
             f"{ipmany / ip10:.2f}x the 10-version case ({ip10:.2f} ms)",
             _verdict(ipmany / ip10, 1.5)),
        ]

        # Where start-up time goes, when a start-up target is missed.
        missed = [k for k, limit in (("help", 4.0), ("get10", 8.0)) if med[k] / base > limit]
        if missed:
            prof = {}
            for k in missed:
                tail = ["--help"] if k == "help" else ["data", "get", "m", "d", "--json"]
                prof[k] = import_profile(tail, few_repo)
            results["importProfile"] = {k: [[n, round(ms, 1)] for n, ms in v] for k, v in prof.items()}

        _print_table(rows)
        if results.get("importProfile"):
            print("\nslowest top-level imports (cumulative ms, -X importtime):")
            for k, v in results["importProfile"].items():
                print(f"  {k}: " + ", ".join(f"{n} {ms:.0f}" for n, ms in v))
        out_dir = HERE / "results"
        out_dir.mkdir(exist_ok=True)
        out = out_dir / f"core-{time.strftime('%Y%m%dT%H%M%S')}.json"
        out.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nwrote {out.relative_to(ROOT)}")
    finally:
        if opts.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _verdict(ratio: float, limit: float) -> str:
    return f"{'ok' if ratio <= limit else 'MISSED'} (target <= {limit}x)"


def _print_table(rows) -> None:
    headers = ("measure", "figure", "beside its baseline", "target")
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(4)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())


if __name__ == "__main__":
    raise SystemExit(main())
