"""Peak memory of a push and of a pull of one large file through the sync
engine, on S3 (a SeaweedFS server this script starts on 127.0.0.1): the
streaming engine beside the whole-bytes path it replaced (the engine with
``stream_large = False``), in the same run.

    .venv/bin/python bench/sync_large_bench.py [--sizes-mib 1024,2048] [--no-bytes]

Each push and each pull runs in a fresh child process through open_store
(retry layer included) and a SyncEngine on its own cache; the child reports
its peak RSS (VmHWM, reset once the engine is built, so the peak is the
process's at its largest during the transfer). Linux only. Issue 9's bar:
a push and a pull of a 2 GiB file under 150 MiB peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

MIB = 1 << 20
BAR_MIB = 150
REL = "data/bench/m/raw-file/1/raw"

CHILD = r'''
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from swamp.datastore.objectstore.factory import open_store
from swamp.datastore.sync import SyncEngine

def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024  # kB -> MiB

config, mode, cache, stream, rel = json.loads(sys.argv[2]), sys.argv[3], Path(sys.argv[4]), sys.argv[5] == "1", sys.argv[6]
engine = SyncEngine(open_store(config), cache, peer=cache.name, concurrency=16)
engine.stream_large = stream
engine.store.head("warm-up")  # the client and its libraries are loaded before the measure starts
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset VmHWM: from here on it is this process's own peak
start = status("VmRSS")
t0 = time.perf_counter()
if mode == "push":
    engine.mark_dirty(rel)
    counts = engine.push("bench")
    moved = counts.bytesPushed
else:
    counts = engine.pull()
    moved = counts.bytesPulled
seconds = time.perf_counter() - t0
engine.close()
print(json.dumps({"peakMiB": status("VmHWM"), "startMiB": start, "seconds": seconds, "bytes": moved,
                  "requests": counts.requests}))
'''


def make_file(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, 8 * MIB)
            f.write(os.urandom(n))
            left -= n


def same_file(a: Path, b: Path) -> bool:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(8 * MIB), fb.read(8 * MIB)
            if x != y:
                return False
            if not x:
                return True


def child(config: dict, mode: str, cache: Path, stream: bool) -> dict:
    env = {**os.environ, "SWAMP_FSYNC": os.environ.get("SWAMP_FSYNC", "1")}
    out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT / "src"), json.dumps(config), mode, str(cache),
                          "1" if stream else "0", REL], capture_output=True, text=True, check=False, env=env)
    if out.returncode != 0:
        if stream:
            raise SystemExit(f"{mode} failed:\n{out.stderr}")
        # The whole-bytes baseline may fail outright on a large file (one PUT
        # under a fixed timeout): that is a result too.
        last = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "?"
        return {"error": last[:300]}
    return json.loads(out.stdout)


def bench_size(server, tmp: Path, size_mib: int, with_bytes: bool) -> dict:
    out: dict = {}
    for kind in (["stream", "bytes"] if with_bytes else ["stream"]):
        config = server.config(f"sync-large-{kind}-{size_mib}")
        pusher, puller = tmp / f"push-{kind}", tmp / f"pull-{kind}"
        make_file(pusher / REL, size_mib * MIB)
        for mode, cache in (("push", pusher), ("pull", puller)):
            r = child(config, mode, cache, kind == "stream")
            out[f"{kind}-{mode}"] = r
            if "error" in r:
                print(f"  {size_mib:5} MiB {kind:<6} {mode:<4} FAILED: {r['error']}", flush=True)
                break  # nothing was pushed to pull
            if mode == "pull":
                r["intact"] = same_file(pusher / REL, puller / REL)
            print(f"  {size_mib:5} MiB {kind:<6} {mode:<4} peak {r['peakMiB']:7.0f} MiB "
                  f"(engine built {r['startMiB']:4.0f} MiB) {r['seconds']:6.1f}s {r['requests']:4} requests"
                  f"{'' if r.get('intact', True) else '  CORRUPT'}", flush=True)
        shutil.rmtree(pusher, ignore_errors=True)
        shutil.rmtree(puller, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes-mib", default="1024,2048")
    ap.add_argument("--no-bytes", action="store_true", help="skip the whole-bytes baseline")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes_mib.split(",")]
    from tests.fixtures import servers

    tmp = Path(tempfile.mkdtemp(prefix="swamp-sync-large-bench-"))
    server = servers.start_seaweed_mini(tmp / "seaweed")
    results: dict = {"sizesMiB": sizes, "runs": {}}
    try:
        for size in sizes:
            results["runs"][str(size)] = bench_size(server, tmp, size, not args.no_bytes)
    finally:
        servers.stop_processes(server.processes)
        shutil.rmtree(tmp, ignore_errors=True)

    print("\nsync large-file bench: peak RSS of the process pushing or pulling one file through the engine (S3)")
    print(f"{'size / direction':<18} {'streaming':>12} {'whole bytes':>12}   target (streaming) ok")
    for size, r in results["runs"].items():
        for way in ("push", "pull"):
            s = r[f"stream-{way}"]["peakMiB"]
            base = r.get(f"bytes-{way}")
            b = "" if base is None else "failed" if "error" in base else f"{base['peakMiB']:8.0f} MiB"
            ok = s < BAR_MIB and r[f"stream-{way}"].get("intact", True)
            print(f"{size + ' MiB ' + way:<18} {s:>8.0f} MiB {b:>12}   "
                  f"< {BAR_MIB} MiB   {'yes' if ok else 'NO'}")
    os.makedirs(HERE / "results", exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    (HERE / "results" / f"sync_large-{stamp}.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
