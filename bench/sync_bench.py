"""The sync engine against raw object-store traffic, in the same run, on a
SeaweedFS server this script starts on 127.0.0.1.

    .venv/bin/python bench/sync_bench.py [--runs 3] [--tree 100000] [--quick]

- no-op sync: requests of a sync with nothing to do (target 1);
- transfers: push and pull of 1,000 x 4 KiB and of 20 x 8 MiB, against
  concurrent obstore PUTs and GETs of the same bytes with as many threads as
  the engine uses (target: engine throughput at least 0.8 of raw). Pulls are
  also set against raw GETs that write each file plainly (what creating the
  files costs on this disk, durable or not: on a slow disk that, not the
  network, is the floor) and that write each file atomically and durably one
  by one, and pushes against raw create-only PUTs, as the protocol must;
- inline contents: requests and time of a push and a pull of 1,000 x 4 KiB
  in one commit
  and of 50 commits of 6 small files (a workflow step's writes), with
  contents inline in the commit records against the baseline of blobs only
  (``inline_max=0``), in the same run (``--inline-only`` runs just this);
- incremental pull: a pull after a peer changed 10 files, in a datastore of
  100,000 files against one of 1,000 (target: within 1.5x). The big state is
  committed through the engine in one batch and copied to the second cache.

Medians of ``--runs`` runs. Everything timed runs with fsync as you have it
(``SWAMP_FSYNC``, on by default); the engine writes pulled files durably, raw
GETs write nothing, so that is in the engine's bill.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from swamp.datastore.objectstore.factory import open_store  # noqa: E402
from swamp.datastore.sync import SyncEngine  # noqa: E402
from swamp.repo.datastores import path_rules  # noqa: E402
from swamp.util.atomic import atomic_write  # noqa: E402
from tests.fixtures import servers  # noqa: E402

CONCURRENCY = 16


def raw_store(server: servers.S3Server, prefix: str):
    """An obstore S3Store configured like the product's (path style, no retries)."""
    from obstore.store import S3Store

    return S3Store(server.bucket, prefix=prefix, endpoint=server.endpoint_url, virtual_hosted_style_request=False,
                   region="us-east-1", client_options={"allow_http": True}, retry_config={"max_retries": 0})


def engine(server: servers.S3Server, prefix: str, cache: Path, peer: str, **kw) -> SyncEngine:
    return SyncEngine(open_store(server.config(prefix)), cache, rules=path_rules(), peer=peer,
                      concurrency=CONCURRENCY, **kw)


def bench_inline(server, tmp: Path, runs: int) -> dict:
    """Push and pull of small files, contents inline vs blobs only."""
    out = {}
    for mode, kw in (("blobs", {"inline_max": 0}), ("inline", {})):
        rows: dict[str, list[float]] = {k: [] for k in (
            "bulkPushS", "bulkPushRequests", "bulkPullS", "bulkPullRequests",
            "stepPushS", "stepPushRequests", "stepPullS", "stepPullRequests")}
        for run in range(runs):
            for shape, commits, per in (("bulk", 1, 1000), ("step", 50, 6)):
                prefix = server.new_prefix()
                d = tmp / f"inline-{mode}-{shape}-{run}"
                with engine(server, prefix, d / "a", "a", **kw) as a, engine(server, prefix, d / "b", "b", **kw) as b:
                    a.init_remote()
                    a.push("warm")
                    push_s = push_req = 0.0
                    for c in range(commits):
                        for i in range(per):
                            rel = f"files/{c:03d}/{i:04d}"
                            a.mark_dirty(rel)
                            atomic_write(a.root / rel, os.urandom(4096))
                        t = time.perf_counter()
                        counts = a.push(shape)
                        push_s += time.perf_counter() - t
                        push_req += counts.requests
                    t = time.perf_counter()
                    pulled = b.pull()
                    rows[f"{shape}PullS"].append(time.perf_counter() - t)
                    rows[f"{shape}PullRequests"].append(pulled.requests)
                    rows[f"{shape}PushS"].append(push_s)
                    rows[f"{shape}PushRequests"].append(push_req)
                    assert pulled.filesPulled == commits * per
                    assert b.push().requests == 0
        out[mode] = {k: statistics.median(v) for k, v in rows.items()}
    return out


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def bench_transfer(server, tmp: Path, n: int, size: int, runs: int) -> dict:
    """Files are deleted only at the end (by main): on ext4 a file created
    soon after many deletes costs far more (the allocator skips recently freed
    inodes), and each step would pay for the deletes of the one before."""
    import obstore

    rows = {"rawPut": [], "rawCreate": [], "push": [], "rawGet": [], "rawGetPlain": [], "rawGetWrite": [], "pull": []}
    for run in range(runs):
        payloads = [os.urandom(size) for _ in range(n)]
        raw = raw_store(server, server.new_prefix())
        keys = [f"objects/{i:06d}" for i in range(n)]
        with ThreadPoolExecutor(CONCURRENCY) as pool:
            rows["rawPut"].append(timed(lambda: list(pool.map(lambda kv: obstore.put(raw, *kv), zip(keys, payloads)))))
            # what the protocol asks of every blob: create-only (If-None-Match: *)
            fresh = raw_store(server, server.new_prefix())
            rows["rawCreate"].append(timed(lambda: list(pool.map(
                lambda kv: obstore.put(fresh, *kv, mode="create"), zip(keys, payloads)))))
            rows["rawGet"].append(timed(lambda: list(pool.map(lambda k: bytes(obstore.get(raw, k).bytes()), keys))))
            # what creating the files costs on this disk: GET, then a plain write (not durable, not atomic)
            plain = tmp / f"plain-{n}-{run}"
            (plain / "objects").mkdir(parents=True)
            rows["rawGetPlain"].append(timed(lambda: list(pool.map(
                lambda k: (plain / k).write_bytes(bytes(obstore.get(raw, k).bytes())), keys))))
            # a download that leaves durable files, one by one: GET, then an atomic write
            dest = tmp / f"raw-{n}-{run}"
            rows["rawGetWrite"].append(timed(lambda: list(pool.map(
                lambda k: atomic_write(dest / k, bytes(obstore.get(raw, k).bytes())), keys))))

        prefix = server.new_prefix()
        d = tmp / f"transfer-{n}-{run}"
        with engine(server, prefix, d / "a", "a") as a, engine(server, prefix, d / "b", "b") as b:
            for i, data in enumerate(payloads):
                a.mark_dirty(f"files/{i:06d}")
                atomic_write(a.root / f"files/{i:06d}", data)
            t = time.perf_counter()
            pushed = a.push("bench")
            rows["push"].append(time.perf_counter() - t)
            t = time.perf_counter()
            pulled = b.pull()
            rows["pull"].append(time.perf_counter() - t)
            assert pushed.filesPushed == n and pulled.filesPulled == n and pulled.bytesPulled == n * size
            after = b.push()
            assert (after.filesPushed, after.bytesPushed) == (0, 0)
    med = {k: statistics.median(v) for k, v in rows.items()}
    return {"files": n, "bytes": size, "seconds": med,
            "pushVsRaw": med["rawPut"] / med["push"], "pushVsRawCreate": med["rawCreate"] / med["push"],
            "pullVsRaw": med["rawGet"] / med["pull"],
            "pullVsRawWithPlainWrites": med["rawGetPlain"] / med["pull"],
            "pullVsRawWithWrites": med["rawGetWrite"] / med["pull"]}


def bench_tree(server, tmp: Path, files: int, changed: int, runs: int) -> dict:
    """Time of b's pull after a changed ``changed`` files of ``files``."""
    prefix = server.new_prefix()
    d = tmp / f"tree-{files}"
    build = time.perf_counter()
    with engine(server, prefix, d / "a", "a") as a:
        for i in range(files):
            p = a.root / f"files/{i // 1000:03d}/{i:06d}"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(f"file {i % 1000}\n".encode() * 8)  # 1,000 distinct blobs
        a.push("build", full_walk=True)
    shutil.copytree(d / "a", d / "b")  # b starts with the same state: cheap, and it is not what we time
    build = time.perf_counter() - build
    times, requests = [], []
    with engine(server, prefix, d / "a", "a") as a, engine(server, prefix, d / "b", "b") as b:
        noop = b.sync()
        for run in range(runs):
            for i in range(changed):
                rel = f"files/{(i * 97) % files // 1000:03d}/{(i * 97) % files:06d}"
                a.mark_dirty(rel)
                atomic_write(a.root / rel, f"run {run} change {i}\n".encode())
            a.push("change")
            t = time.perf_counter()
            counts = b.pull()
            times.append(time.perf_counter() - t)
            requests.append(counts.requests)
            assert counts.filesPulled == changed
    shutil.rmtree(d)
    return {"files": files, "changed": changed, "pullSeconds": statistics.median(times),
            "pullRequests": statistics.median(requests), "noopSyncRequests": noop.requests,
            "buildSeconds": build}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tree", type=int, default=100_000, help="files in the big datastore")
    ap.add_argument("--quick", action="store_true", help="smoke run: 1 run, 100 small files, 4 large, 10,000-file tree")
    ap.add_argument("--inline-only", action="store_true", help="only the inline-contents comparison")
    args = ap.parse_args()
    if args.inline_only:
        tmp = Path(tempfile.mkdtemp(prefix="swamp-sync-bench-"))
        server = servers.start_seaweed_mini(tmp)
        try:
            result = bench_inline(server, tmp, args.runs)
        finally:
            servers.stop_processes(server.processes)
            shutil.rmtree(tmp, ignore_errors=True)
        print_inline(result, args.runs)
        return
    small_n, large_n = 1000, 20
    if args.quick:
        args.runs, args.tree, small_n, large_n = 1, 10_000, 100, 4
    tmp = Path(tempfile.mkdtemp(prefix="swamp-sync-bench-"))
    server = servers.start_seaweed_mini(tmp)
    try:
        inline = bench_inline(server, tmp, args.runs)
        small = bench_transfer(server, tmp, small_n, 4096, args.runs)
        large = bench_transfer(server, tmp, large_n, 8 << 20, args.runs)
        tree_small = bench_tree(server, tmp, 1000, 10, max(args.runs, 5))
        tree_big = bench_tree(server, tmp, args.tree, 10, max(args.runs, 5))
    finally:
        servers.stop_processes(server.processes)
        shutil.rmtree(tmp, ignore_errors=True)

    ratio = tree_big["pullSeconds"] / tree_small["pullSeconds"]
    rows = [
        ("no-op sync requests", f"{tree_big['noopSyncRequests']}", "1", tree_big["noopSyncRequests"] <= 1),
    ]
    for t in (small, large):
        label = f"{t['files']} x {t['bytes'] // 1024} KiB" if t["bytes"] < 1 << 20 else \
            f"{t['files']} x {t['bytes'] >> 20} MiB"
        s = t["seconds"]
        rows.append((f"push {label} (raw PUTs)", f"{s['push']:.2f}s ({s['rawPut']:.2f}s) = {t['pushVsRaw']:.2f}x",
                     ">= 0.8x", t["pushVsRaw"] >= 0.8))
        rows.append((f"push {label} (raw create-only PUTs)",
                     f"{s['push']:.2f}s ({s['rawCreate']:.2f}s) = {t['pushVsRawCreate']:.2f}x",
                     ">= 0.8x", t["pushVsRawCreate"] >= 0.8))
        rows.append((f"pull {label} (raw GETs)", f"{s['pull']:.2f}s ({s['rawGet']:.2f}s) = {t['pullVsRaw']:.2f}x",
                     ">= 0.8x", t["pullVsRaw"] >= 0.8))
        rows.append((f"pull {label} (raw GETs + plain writes)",
                     f"{s['pull']:.2f}s ({s['rawGetPlain']:.2f}s) = {t['pullVsRawWithPlainWrites']:.2f}x",
                     ">= 0.8x", t["pullVsRawWithPlainWrites"] >= 0.8))
        rows.append((f"pull {label} (raw GETs + atomic writes)",
                     f"{s['pull']:.2f}s ({s['rawGetWrite']:.2f}s) = {t['pullVsRawWithWrites']:.2f}x",
                     ">= 0.8x", t["pullVsRawWithWrites"] >= 0.8))
    rows.append((f"pull 10 changed of {args.tree:,} vs of 1,000",
                 f"{tree_big['pullSeconds'] * 1000:.0f}ms vs {tree_small['pullSeconds'] * 1000:.0f}ms = {ratio:.2f}x",
                 "<= 1.5x", ratio <= 1.5))
    print_inline(inline, args.runs)
    width = max(len(r[0]) for r in rows)
    print(f"\nsync bench (SeaweedFS on 127.0.0.1, concurrency {CONCURRENCY}, "
          f"fsync {'on' if os.environ.get('SWAMP_FSYNC', '1') != '0' else 'off'}, {args.runs} run(s))")
    print(f"{'measure':<{width}}  {'result':<36} {'target':<8} ok")
    for name, result, target, ok in rows:
        print(f"{name:<{width}}  {result:<36} {target:<8} {'yes' if ok else 'NO'}")
    out = HERE / "results" / f"sync_bench-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"small": small, "large": large, "treeSmall": tree_small, "treeBig": tree_big,
                               "treeRatio": ratio, "inline": inline, "runs": args.runs}, indent=2))
    print(f"\nwrote {out.relative_to(ROOT)}")


def print_inline(r: dict, runs: int) -> None:
    b, i = r["blobs"], r["inline"]
    print(f"\ninline contents vs blobs only (SeaweedFS on 127.0.0.1, {runs} run(s), medians)")
    print(f"{'measure':<44} {'blobs only':>12} {'inline':>12}")
    for key, label in (("bulk", "1,000 x 4 KiB, one commit"), ("step", "50 commits x 6 x 4 KiB (steps)")):
        for op in ("Push", "Pull"):
            print(f"{op.lower() + ' ' + label + ' requests':<44} {b[key + op + 'Requests']:>12.0f} "
                  f"{i[key + op + 'Requests']:>12.0f}")
            print(f"{op.lower() + ' ' + label + ' seconds':<44} {b[key + op + 'S']:>12.2f} {i[key + op + 'S']:>12.2f}")


if __name__ == "__main__":
    main()
