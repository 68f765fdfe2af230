"""CLI start-up: whole `swamp` processes against `python -c pass`, in the
same run, on a repository with 20 definitions and a custom model type.

    .venv/bin/python bench/startup_bench.py [--runs 21] [--baseline /tmp/perf-base/src]
        [--importtime] [--floor] [--through-click]

Commands (issue 17's targets, as multiples of `python -c pass`):

- `swamp --help` (<= 3x), `swamp --version`;
- `swamp data get m00 result` (<= 5x);
- `swamp model method run m00 execute`, a no-op run (shell `true`, <= 8x).

Each command runs `swamp.cli.main:main` as the console script does, with
``PYTHONPATH`` set to this checkout's ``src`` (``swamp``) and, with
``--baseline``, another checkout's (``swamp-base``): before and after in
one run. Commands are interleaved round-robin (load drift hits all alike),
after one warm-up each; medians. ``--importtime`` also prints the largest
imports of each command (``python -X importtime``). It also prints which of click, pydantic, ruamel.yaml, obstore,
dataclasses and logging each command loaded (the fast paths keep them off
`data get` and a plain method run). ``--floor`` also times, in the same
interleaved run, processes that only import those libraries (click;
click, ruamel.yaml and pathlib; these and pydantic with one model built and
validated): what these commands cost when they went through click,
ruamel.yaml and pydantic, before the fast paths. ``--through-click`` also
times this checkout's commands with ``SWAMP_NO_FAST_LANE=1`` (``swamp
--help`` and the fast lane's commands parsed by click, as every other
command is): what dropping the second parser and help renderer would cost.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PYTHON = sys.executable
LAUNCH = "import sys; sys.argv[0] = 'swamp'; from swamp.cli.main import main; main()"

CUSTOM_TYPE = '''
from pydantic import BaseModel

from swamp import Context, ModelType


class Args(BaseModel):
    greeting: str = "hi"


hello = ModelType("bench/hello", version="2026.01.01.1", description="Says hello",
                  global_arguments=Args)


@hello.method(description="Say it")
def say(args, ctx: Context) -> None:
    pass
'''

TARGETS = {"help": 3.0, "data get": 5.0, "method run": 8.0}

#: libraries alone, no swamp code (--floor)
_READS = "import click, pathlib, ruamel.yaml; ruamel.yaml.YAML(typ='safe').load('a: 1')"
FLOORS = {
    "click": "import click",
    "data get": _READS,
    "method run": _READS + "\nfrom pydantic import BaseModel\nclass A(BaseModel):\n    x: int = 1\nA(x=2)",
}


def env_for(src: Path | None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWAMP_") and k != "PYTHONPATH"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def swamp(src: Path, *args: str) -> list[str]:
    return [PYTHON, "-c", LAUNCH, *args]


def make_repo(root: Path, src: Path) -> None:
    env = env_for(src)

    def run(*args: str) -> None:
        subprocess.run(swamp(src, *args), cwd=root, env=env, check=True, stdout=subprocess.DEVNULL)

    root.mkdir(parents=True)
    run("repo", "init")
    (root / "extensions" / "models").mkdir(parents=True, exist_ok=True)
    (root / "extensions" / "models" / "hello.py").write_text(CUSTOM_TYPE)
    for i in range(19):
        run("model", "create", "command/shell", f"m{i:02d}", "--global-arg", "run=true")
    run("model", "create", "bench/hello", "h00")
    run("model", "method", "run", "m00", "execute")  # data m00/result exists for data get


def time_commands(commands: dict[str, tuple[list[str], dict]], runs: int, cwd: Path) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {k: [] for k in commands}
    for i in range(runs + 1):
        for key, (argv, env) in commands.items():
            t0 = time.perf_counter()
            p = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            dt = time.perf_counter() - t0
            if p.returncode != 0:
                raise SystemExit(f"{key}: {' '.join(argv)} failed: {p.stderr.decode()[-2000:]}")
            if i:
                times[key].append(dt)
    return times


#: the libraries whose import the fast paths keep off the hot commands
WATCHED = ("click", "pydantic", "ruamel.yaml", "obstore", "dataclasses", "logging")
_REPORT_LOADED = ("import atexit, sys; atexit.register(lambda: sys.stderr.write('LOADED ' + ' '.join("
                  f"m for m in {WATCHED!r} if m in sys.modules) + chr(10))); ")


def libraries_loaded(argv: list[str], env: dict, cwd: Path) -> list[str]:
    """Which of WATCHED a command imported by the time it exited."""
    p = subprocess.run([argv[0], "-c", _REPORT_LOADED + argv[2], *argv[3:]], cwd=cwd, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = next((ln for ln in p.stderr.splitlines() if ln.startswith("LOADED")), "LOADED")
    return line.split()[1:]


def import_profile(argv: list[str], env: dict, cwd: Path, top: int = 8) -> list[tuple[str, float]]:
    p = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], cwd=cwd, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    tops = []
    for line in p.stderr.splitlines():
        if not line.startswith("import time:"):
            continue
        parts = line[len("import time:"):].split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2][1:]
        if not name.startswith(" "):
            tops.append((name, int(parts[1]) / 1000))
    return sorted(tops, key=lambda r: r[1], reverse=True)[:top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--baseline", type=Path, help="another checkout's src/, run as swamp-base")
    ap.add_argument("--importtime", action="store_true")
    ap.add_argument("--floor", action="store_true", help="also time the libraries alone (click, ruamel.yaml, pydantic)")
    ap.add_argument("--through-click", action="store_true",
                    help="also time this checkout with SWAMP_NO_FAST_LANE=1 (no fast lane, no fast help)")
    args = ap.parse_args()
    srcs = {"swamp": ROOT / "src"}
    if args.baseline:
        srcs["swamp-base"] = args.baseline.resolve()
    if args.through_click:
        srcs["swamp-click"] = srcs["swamp"]
    tmp = Path(tempfile.mkdtemp(prefix="swamp-startup-bench-"))
    try:
        repo = tmp / "repo"
        make_repo(repo, srcs["swamp"])
        shapes = {"help": ["--help"], "version": ["--version"], "data get": ["data", "get", "m00", "result"],
                  "method run": ["model", "method", "run", "m00", "execute"]}
        commands: dict[str, tuple[list[str], dict]] = {"python": ([PYTHON, "-c", "pass"], env_for(None))}
        for name, src in srcs.items():
            env = env_for(src) if name != "swamp-click" else {**env_for(src), "SWAMP_NO_FAST_LANE": "1"}
            for shape, tail in shapes.items():
                commands[f"{name} {shape}"] = (swamp(src, *tail), env)
        if args.floor:
            for shape, code in FLOORS.items():
                commands[f"floor {shape}"] = ([PYTHON, "-c", code], env_for(None))
        times = time_commands(commands, args.runs, repo)
        loaded = {f"{name} {shape}": libraries_loaded(commands[f"{name} {shape}"][0], commands[f"{name} {shape}"][1],
                                                      repo) for name in srcs for shape in shapes}
        profiles = {}
        if args.importtime:
            for key, (argv, env) in commands.items():
                if key != "python" and not key.startswith("floor "):
                    profiles[key] = import_profile(argv, env, repo)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    base = med["python"]
    print(f"\nCLI start-up ({args.runs} runs, medians, interleaved; repository: 20 definitions, a custom type)")
    print(f"python -c pass: {base:.1f} ms")
    head = f"{'command':<14}" + "".join(f"{n + ' ms':>16}{'x':>7}" for n in srcs) + f"{'target':>9}"
    print(head)
    rows = {}
    for shape in shapes:
        line = f"{shape:<14}"
        for name in srcs:
            ms = med[f"{name} {shape}"]
            line += f"{ms:>16.1f}{ms / base:>7.2f}"
            rows[f"{name} {shape}"] = {"ms": ms, "x": ms / base}
        target = TARGETS.get(shape)
        line += f"{'<= ' + str(target) + 'x' if target else '-':>9}"
        print(line)
    print(f"\nwhich of {', '.join(WATCHED)} each command loads:")
    for key, names in loaded.items():
        print(f"  {key:<24}{', '.join(names) or 'none'}")
    if args.floor:
        print("\nthe libraries alone (no swamp code): the floor of each command when it went through them:")
        for shape in FLOORS:
            ms = med[f"floor {shape}"]
            rows[f"floor {shape}"] = {"ms": ms, "x": ms / base}
            print(f"{shape:<14}{ms:>16.1f}{ms / base:>7.2f}")
    for key, top in profiles.items():
        print(f"\nlargest imports, {key}: " + ", ".join(f"{n} {ms:.0f} ms" for n, ms in top))
    out = HERE / "results" / f"startup_bench-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"pythonMs": base, "rows": rows, "runs": args.runs, "profiles": profiles,
                               "loaded": loaded}, indent=2))
    print(f"\nwrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
