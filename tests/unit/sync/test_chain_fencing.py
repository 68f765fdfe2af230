"""Fencing at the commit point (issue 9 item 4, repro g_sigstop_fencing): a
takeover appends an epoch record for the lease to the log before any work
of the new holder; a holder frozen (SIGSTOP) between its lease check and
its commit can then never publish over the new holder, every peer ignores
by the same rule a commit made under a fenced holding, and a push whose
commit landed never reports that nothing was published."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from swamp.errors import LeaseLostError

HERE = Path(__file__).resolve()
SRC = HERE.parents[3] / "src"
LEASE = "model/acme/thing/123"
REL = "data/acme/thing/123/out/1/raw"


def _engine(root: Path, cache: str):
    from swamp.datastore.objectstore.local import LocalDirObjectStore
    from swamp.datastore.sync import SyncEngine
    from swamp.repo.datastores import path_rules

    return SyncEngine(LocalDirObjectStore(root / "remote"), root / cache, rules=path_rules(), peer=cache,
                      concurrency=2)


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 120
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def _role(who: str, root: Path) -> None:
    """A command allocating version 1 under the model's lease."""
    from swamp.util.atomic import atomic_write

    e = _engine(root, who)
    if who == "A":
        add_pending = e.state.add_pending

        def frozen_here(commit_id, seq):  # right after the lease check passed
            (root / "A.flag").touch()
            os.kill(os.getpid(), signal.SIGSTOP)
            return add_pending(commit_id, seq)

        e.state.add_pending = frozen_here
    out: dict = {}
    try:
        with e.lease(LEASE, ttl_ms=2000, timeout_ms=60_000):
            e.pull()
            e.mark_dirty(REL)
            atomic_write(e.root / REL, f"{who}'s version 1".encode())
            if who == "B":
                (root / "B.flag").touch()
                _wait_for(root / "A.done")
            out["head"] = e.push(command=who).head
    except LeaseLostError as err:
        out["error"] = err.message
    finally:
        (root / f"{who}.done").touch()
        e.close()
    print(json.dumps(out), flush=True)


def _spawn(*args: str) -> subprocess.Popen:
    env = {**os.environ, "SWAMP_FSYNC": "0", "PYTHONPATH": str(SRC)}
    return subprocess.Popen([sys.executable, str(HERE), *map(str, args)], env=env, stdout=subprocess.PIPE, text=True)


def test_a_holder_frozen_at_its_commit_point_never_publishes_over_the_new_holder(tmp_path):
    a = _spawn("A", tmp_path)
    _wait_for(tmp_path / "A.flag")
    b = _spawn("B", tmp_path)          # takes the lease over once A's has stayed unchanged for its ttl
    _wait_for(tmp_path / "B.flag")     # B fenced A in the log and wrote its version 1
    os.kill(a.pid, signal.SIGCONT)
    got_a = json.loads(a.communicate(timeout=120)[0])
    got_b = json.loads(b.communicate(timeout=120)[0])
    assert "nothing written under it was published" in got_a["error"]
    assert got_b == {"head": 2}

    from swamp.datastore.objectstore.local import LocalDirObjectStore

    store = LocalDirObjectStore(tmp_path / "remote")
    records = [json.loads(store.get(m.key)[0]) for m in store.list("default/log/")]
    assert records[0]["fence"]["lease"] == LEASE and records[0]["changes"] == []
    assert [c["path"] for c in records[1]["changes"]] == [REL] and records[1]["writer"]["peer"] == "B"
    fresh = _engine(tmp_path, "R")
    fresh.pull()
    assert (fresh.root / REL).read_bytes() == b"B's version 1"
    fresh.close()


def test_every_peer_ignores_a_commit_under_a_fenced_holding(make_peer, store):
    """Defence in depth: should a commit under a fenced holding ever land
    after the epoch record (here: written by hand), every peer ignores it
    the same way, one that starts from a later checkpoint included."""
    from swamp.datastore.sync.commitlog import Change, Commit, writer_info

    from .conftest import files, write

    a = make_peer("a", checkpoint_every=4)
    with a.lease(LEASE) as held:
        write(a, REL, b"a's version 1")
        a.push()
    old = held.nonce
    # b takes LEASE over from the holding ``old``: its epoch record is seq 2
    b = make_peer("b")
    b.pull()
    b.records.append_fence(LEASE, old, "new-holding")
    tip = json.loads(store.get("default/log/00000000000000000002.json")[0])["id"]
    late = Commit(3, 2, "f" * 32, writer_info("a"), "", "late", [Change("files/late", "put", "0" * 64, 0)],
                  parent_id=tip, leases={LEASE: old})
    store.put("default/log/00000000000000000003.json", late.encode(), if_none_match=True)
    write(b, "files/after", b"b's work")
    b.push()                                   # seq 4, and checkpoint 4
    fresh = make_peer("fresh")
    fresh.pull()
    a.pull()
    for peer in (a, b, fresh):
        assert "files/late" not in files(peer)
        assert files(peer)[REL] == b"a's version 1" and files(peer)["files/after"] == b"b's work"


def test_a_push_whose_commit_landed_never_says_nothing_was_published(make_peer, store):
    from .conftest import write

    a, b = make_peer("a"), make_peer("b")
    with pytest.raises(LeaseLostError) as err:
        with a.lease(LEASE, ttl_ms=200) as lease:
            write(a, REL, b"a's version 1")
            a.push()                           # landed: seq 1
            lease._stop.set()
            lease._thread.join()               # a stalls past its ttl...
            time.sleep(0.3)
            with b.lease(LEASE, ttl_ms=5000):  # ...and b takes over
                pass
    assert "nothing" not in err.value.message and "commit 1 made under it was published" in err.value.message
    b.pull()
    assert (b.root / REL).read_bytes() == b"a's version 1"


def test_a_lease_broken_by_force_fences_its_holder(make_peer, store):
    """`swamp datastore lock release NAME --force` on a holder that is only
    slow: its next commit under the lease is refused, nothing of it is
    published, and the next holder allocates version 1 itself."""
    from .conftest import files, write

    a, b = make_peer("a"), make_peer("b")
    with pytest.raises(LeaseLostError) as err:
        with a.lease(LEASE):
            a.pull()
            write(a, REL, b"a's version 1")
            assert b.force_release_lease(LEASE)
            a.push()
    assert "nothing written under it was published" in err.value.message
    with b.lease(LEASE):
        b.pull()
        assert not (b.root / REL).exists()
        write(b, REL, b"b's version 1")
        b.push()
    a.pull()
    assert files(a)[REL] == b"b's version 1"


if __name__ == "__main__":
    _role(sys.argv[1], Path(sys.argv[2]))
