"""The swamp side of bench/transfer_peers_bench.py: one engine operation in
a fresh process, as a CLI command runs it.

    python bench/transfer_worker.py OP SRC CONFIG_JSON CACHE

OP is push, pull or sync; SRC the ``src`` directory of the checkout to
import swamp from; CONFIG_JSON an ``open_store`` mapping; CACHE the cache
directory. Prints one line of JSON: the in-engine seconds, the imports and
opening, the close, the requests and the files moved.

A file of its own so that the process imports what swamp needs and nothing
of the bench's own (argparse, subprocess, statistics, ...): the time a
whole process takes is swamp's, not the harness's.
"""

import json
import sys
import time


def main(argv: list[str]) -> None:
    op, src, config, cache = argv
    # As an installed swamp runs: from bytecode. With PYTHONDONTWRITEBYTECODE
    # set (as in this project's dev shells) a checkout whose __pycache__ is
    # stale or missing (a fresh worktree for --baseline, a file just edited)
    # would compile those modules again in every run (~7 ms for s3.py alone).
    sys.dont_write_bytecode = False
    sys.path.insert(0, src)
    t0 = time.perf_counter()
    from pathlib import Path

    from swamp.datastore.objectstore.factory import open_store
    from swamp.datastore.sync import SyncEngine
    from swamp.repo.datastores import path_rules

    cache_path = Path(cache)
    with SyncEngine(open_store(json.loads(config)), cache_path, rules=path_rules(), peer="bench",
                    concurrency=16) as engine:
        t1 = time.perf_counter()
        if op == "push":
            rels = sorted(str(p.relative_to(cache_path)) for p in (cache_path / "files").rglob("*") if p.is_file())
            for rel in rels:
                engine.mark_dirty(rel)
            counts = engine.push("bench")
            assert counts.filesPushed == len(rels), (counts, len(rels))
        elif op == "pull":
            counts = engine.pull()
        elif op == "sync":
            counts = engine.sync()
        else:
            raise SystemExit(f"unknown op {op}")
        t2 = time.perf_counter()
    t3 = time.perf_counter()  # the engine closed (its threads joined, its state closed)
    print(json.dumps({"engine": t2 - t1, "importsAndOpen": t1 - t0, "close": t3 - t2, "requests": counts.requests,
                      "files": counts.filesPulled + counts.filesPushed}))


if __name__ == "__main__":
    main(sys.argv[1:])
