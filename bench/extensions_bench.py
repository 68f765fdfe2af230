"""Extensions: what 20 pinned extensions cost the commands that do not use
them, what a method run of one extension's type imports, and how fast
`extension install` restores 20 pins from a local index. Each figure beside
its baseline, measured in the same run:

- `swamp --help` and `swamp data get` in a repository with 20 extensions
  installed, beside the same in one with none (types load lazily, so they
  should cost the same);
- a method run of one extension's type: how many of the 20 extensions'
  modules it imported (should be 1);
- `swamp extension install` of 20 pinned extensions (fresh checkout, local
  pypiserver), beside `pip install --target` of the same wheels, and
  `uv pip install --target` when uv is installed.

    .venv/bin/python bench/extensions_bench.py [--runs 11]

Needs the `test` extra (pypiserver). Prints a table and writes
bench/results/extensions-<time>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))
PYTHON = sys.executable
SWAMP = Path(PYTHON).parent / "swamp"
N_EXT = 20


def swamp(*args: str) -> list[str]:
    return [str(SWAMP) if SWAMP.exists() else PYTHON, *([] if SWAMP.exists() else ["-m", "swamp"]), *args]


def env() -> dict:
    out = {k: v for k, v in os.environ.items() if not k.startswith("SWAMP_")}
    out.pop("PYTHONDONTWRITEBYTECODE", None)
    return out


def run(argv, cwd, check=True) -> subprocess.CompletedProcess:
    p = subprocess.run(argv, cwd=cwd, env=env(), capture_output=True, text=True)
    if check and p.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, argv))} failed: {p.stderr}")
    return p


def timed(commands: dict[str, tuple[list[str], Path]], runs: int) -> dict[str, list[float]]:
    """Wall time of each command, round-robin (one warm-up each)."""
    times = {k: [] for k in commands}
    for i in range(runs + 1):
        for key, (argv, cwd) in commands.items():
            t0 = time.perf_counter()
            run(argv, cwd)
            if i:
                times[key].append(time.perf_counter() - t0)
    return times


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_index(packages: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([PYTHON, "-m", "pypiserver", "run", "-i", "127.0.0.1", "-p", str(port), "-a", ".",
                             "-P", ".", "--disable-fallback", "--hash-algo", "sha256", str(packages)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/simple/"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return proc, url
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                raise SystemExit("pypiserver did not start")
            time.sleep(0.2)


def new_repo(path: Path) -> Path:
    run(swamp("repo", "init", str(path)), ROOT)
    run(swamp("model", "create", "command/shell", "hello", "--global-arg", "run=echo hi", "--repo-dir", str(path)),
        path)
    run(swamp("model", "method", "run", "hello", "execute", "--repo-dir", str(path)), path)
    return path


def med(xs) -> float:
    return statistics.median(xs) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    opts = ap.parse_args()
    from tests.extensions.wheels import make_wheel

    work = Path(tempfile.mkdtemp(prefix="swamp-ext-bench-"))
    packages = work / "packages"
    packages.mkdir()
    names = [f"bench-ext-{i:02d}" for i in range(N_EXT)]
    for n in names:
        make_wheel(packages, n, "1.0", types=(f"bench/t{n[-2:]}",))
    proc, index = start_index(packages)
    results: dict = {"runs": opts.runs}
    try:
        none = new_repo(work / "none")
        many = new_repo(work / "many")
        t0 = time.perf_counter()
        for n in names:
            run(swamp("extension", "pull", n, "--index", index, "--repo-dir", str(many)), many)
        results["pull_each_ms"] = (time.perf_counter() - t0) / N_EXT * 1000
        run(swamp("model", "create", "bench/t07", "seven", "--repo-dir", str(many)), many)

        # 1. start-up and data get, with 20 extensions beside none
        t = timed({
            "help, 0 ext": (swamp("--help"), none), "help, 20 ext": (swamp("--help"), many),
            "data get, 0 ext": (swamp("data", "get", "hello", "result", "--json"), none),
            "data get, 20 ext": (swamp("data", "get", "hello", "result", "--json"), many),
        }, opts.runs)
        results["startup_ms"] = {k: med(v) for k, v in t.items()}

        # 2. a method run of one extension's type: which extension modules it imports
        probe = ("import sys\nfrom swamp.cli.main import main\ntry:\n    main()\nexcept SystemExit as e:\n"
                 "    assert not e.code, e.code\n"
                 "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith('bench_ext_')}))")
        p = run([PYTHON, "-c", probe, "model", "method", "run", "seven", "hello", "--repo-dir", str(many)], many)
        imported = json.loads(p.stdout.strip().splitlines()[-1].replace("'", '"'))
        results["method_run_imported_extensions"] = imported

        # 3. install of 20 pins in a fresh checkout, beside pip (and uv) --target of the same wheels
        lock = (many / "extensions" / "lockfile.json").read_text()
        specs = [f"{n}==1.0" for n in names]
        pip_env = {**env(), "PIP_CONFIG_FILE": os.devnull}
        uv = shutil.which("uv") or (str(Path(PYTHON).parent / "uv") if (Path(PYTHON).parent / "uv").exists()
                                    else None)
        times = {"swamp extension install": [], "pip install --target": []}
        if uv:
            times["uv pip install --target"] = []
        for i in range(max(3, opts.runs // 2)):
            fresh = work / f"fresh-{i}"
            run(swamp("repo", "init", str(fresh)), ROOT)
            (fresh / "extensions" / "lockfile.json").write_text(lock)
            t0 = time.perf_counter()
            run(swamp("extension", "install", "--repo-dir", str(fresh)), fresh)
            times["swamp extension install"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            subprocess.run([PYTHON, "-m", "pip", "install", "-q", "--no-cache-dir", "--disable-pip-version-check",
                            "--no-deps", "--target", str(work / f"pip-{i}"), "--index-url", index, *specs],
                           env=pip_env, check=True, capture_output=True)
            times["pip install --target"].append(time.perf_counter() - t0)
            if uv:
                t0 = time.perf_counter()
                subprocess.run([uv, "pip", "install", "-q", "--no-cache", "--no-deps", "--target",
                                str(work / f"uv-{i}"), "--index-url", index, *specs],
                               env={**env(), "UV_NO_CONFIG": "1"}, check=True, capture_output=True)
                times["uv pip install --target"].append(time.perf_counter() - t0)
        results["install_20_ms"] = {k: med(v) for k, v in times.items()}
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(work, ignore_errors=True)

    print(f"{'what':<34}{'ms (median)':>12}")
    for k, v in results["startup_ms"].items():
        print(f"{k:<34}{v:>12.1f}")
    for k, v in results["install_20_ms"].items():
        print(f"{'install 20: ' + k:<34}{v:>12.1f}")
    print(f"{'pull, one extension (each)':<34}{results['pull_each_ms']:>12.1f}")
    print(f"method run of bench/t07 imported: {', '.join(results['method_run_imported_extensions']) or 'nothing'} "
          f"(of {N_EXT} extensions)")
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / f"extensions-{time.strftime('%Y%m%d-%H%M%S')}.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
