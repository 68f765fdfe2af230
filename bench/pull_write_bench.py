"""The local side of a pull of many small files, beside a baseline checkout's,
in the same run: 1,000 x 4 KiB written through ``LocalTree.write`` into a
``DurableBatch`` (what a pull does with contents it has in hand: inline or
fetched small blobs), 16 threads, then ``batch.sync()``.

    .venv/bin/python bench/pull_write_bench.py --baseline /tmp/perf-base/src [--runs 7]

Prints, for this checkout (``swamp``) and the baseline (``swamp-base``),
interleaved: the median wall time, the median CPU time of the process, and,
when ``strace`` is installed, the system calls per file (one run each,
single thread). On a machine whose disk is shared with other work, wall time
is noisy; CPU time and system calls are not. fsync as you have it
(``SWAMP_FSYNC``, on by default).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CHILD = r'''
import os, sys, tempfile, time, shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from swamp.util.atomic import DurableBatch
from swamp.datastore.sync.localtree import LocalTree
n, threads = int(sys.argv[1]), int(sys.argv[2])
data = os.urandom(4096)
root = Path(tempfile.mkdtemp(prefix="pull-write-"))
tree, batch = LocalTree(root, None), DurableBatch()
rels = [f"data/m/{i // 100:02d}/{i:06d}" for i in range(n)]
def check():
    pass  # the pull's re-check stats the path: the same on both sides
wall, cpu = time.perf_counter(), time.process_time()
with ThreadPoolExecutor(threads) as pool:
    list(pool.map(lambda rel: tree.write(rel, data, batch, check), rels))
batch.sync()
print(time.perf_counter() - wall, time.process_time() - cpu)
shutil.rmtree(root)
'''


def run(src: Path, n: int, threads: int, strace: str | None = None) -> str:
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, "-c", CHILD, str(n), str(threads)]
    if strace:
        argv = [strace, "-f", "-c", "-o", strace_out(src), *argv]
    return subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout


def strace_out(src: Path) -> str:
    return str(Path(tempfile.gettempdir()) / f"pull-write-strace-{abs(hash(str(src)))}.txt")


def syscalls(path: str) -> dict[str, int]:
    out = {}
    for line in Path(path).read_text().splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
            out[parts[-1]] = int(parts[3])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, required=True, help="another checkout's src/")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--files", type=int, default=1000)
    args = ap.parse_args()
    srcs = {"swamp": ROOT / "src", "swamp-base": args.baseline.resolve()}
    wall: dict[str, list[float]] = {k: [] for k in srcs}
    cpu: dict[str, list[float]] = {k: [] for k in srcs}
    for i in range(args.runs):
        for name in (list(srcs) if i % 2 == 0 else list(srcs)[::-1]):
            w, c = map(float, run(srcs[name], args.files, 16).split())
            wall[name].append(w)
            cpu[name].append(c)
    strace = shutil.which("strace")
    calls = {}
    if strace:
        # the run without work (n=0) is subtracted: imports and start-up
        for name, src in srcs.items():
            run(src, 0, 1, strace)
            empty = syscalls(strace_out(src))
            run(src, args.files, 1, strace)
            full = syscalls(strace_out(src))
            calls[name] = {k: (v - empty.get(k, 0)) / args.files for k, v in full.items()
                           if v - empty.get(k, 0) > 0}
    fsync = "on" if os.environ.get("SWAMP_FSYNC", "1") != "0" else "off"
    print(f"\nlocal side of a pull: {args.files:,} x 4 KiB into a DurableBatch, 16 threads, fsync {fsync}, "
          f"medians of {args.runs}")
    print(f"{'':<24}{'swamp':>12}{'swamp-base':>12}")
    print(f"{'wall ms':<24}" + "".join(f"{statistics.median(wall[n]) * 1000:>12.0f}" for n in srcs))
    print(f"{'CPU ms':<24}" + "".join(f"{statistics.median(cpu[n]) * 1000:>12.0f}" for n in srcs))
    if calls:
        names = sorted(set(calls["swamp"]) | set(calls["swamp-base"]),
                       key=lambda k: -calls["swamp-base"].get(k, 0))
        print(f"{'system calls per file':<24}" + "".join(f"{sum(calls[n].values()):>12.1f}" for n in srcs))
        for k in names:
            a, b = calls["swamp"].get(k, 0), calls["swamp-base"].get(k, 0)
            if max(a, b) >= 0.5:
                print(f"{'  ' + k:<24}{a:>12.1f}{b:>12.1f}")
    else:
        print("(strace not installed: no system-call counts)")


if __name__ == "__main__":
    main()
