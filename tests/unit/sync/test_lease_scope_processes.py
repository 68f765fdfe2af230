"""What was written under a lease is known to every process on the cache
(``.sync/held/``, scopes.py), not only to the holder's: another process's
push names the holding (so the log's fence applies to it), takes back what
a lost lease wrote, and a pull there keeps a renumbered version under the
lease it was written under. The holders here are real processes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.repo.datastores import path_rules
from swamp.util.atomic import atomic_write

LEASE = "model/acme/thing/123"
VERSIONS = "data/acme/thing/123/out"

# Takes the lease, writes version 1 under it, says so, then waits to be
# killed (it never pushes).
HOLDER = '''
import sys, time
from pathlib import Path
from swamp.datastore.objectstore.local import LocalDirObjectStore
from swamp.datastore.sync import SyncEngine
from swamp.repo.datastores import path_rules
from swamp.util.atomic import atomic_write

remote, root, rel = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
e = SyncEngine(LocalDirObjectStore(remote), root, rules=path_rules(), peer="a", concurrency=2)
with e.lease(sys.argv[4]) as held:
    e.pull()
    e.mark_dirty(rel)
    atomic_write(root / rel, b"written under the lease")
    print(held.nonce, flush=True)
    time.sleep(120)
'''


def _env():
    from tests.helpers import _env

    return _env()


def _engine(remote: Path, root: Path, peer: str) -> SyncEngine:
    return SyncEngine(LocalDirObjectStore(remote), root, rules=path_rules(), peer=peer, concurrency=2)


def _write(e: SyncEngine, rel: str, data: bytes) -> None:
    e.mark_dirty(rel)
    atomic_write(e.root / rel, data)


def _records(remote: Path) -> list[dict]:
    store = LocalDirObjectStore(remote)
    return [json.loads(store.get(m.key)[0]) for m in store.list("default/log/")]


@pytest.fixture
def killed_holder(tmp_path):
    """A process of checkout ``a`` that wrote version 1 under the lease and
    was then killed (-9) before pushing; returns (remote, cache, nonce)."""
    remote, cache = tmp_path / "remote", tmp_path / "a"
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(remote), str(cache), f"{VERSIONS}/1/raw", LEASE],
                            stdout=subprocess.PIPE, text=True, env=_env())
    try:
        nonce = proc.stdout.readline().strip()
        assert nonce, "the holder did not start"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    return remote, cache, nonce


def test_a_killed_holders_work_is_published_by_another_process_naming_its_holding(tmp_path, killed_holder):
    remote, cache, nonce = killed_holder
    beside, fresh = _engine(remote, cache, "a"), _engine(remote, tmp_path / "fresh", "fresh")
    try:
        beside.push("sync")
        [record] = [r for r in _records(remote) if r.get("changes")]
        # named, so a fence of that holding earlier in the log would have applied to it
        assert record["leases"] == {LEASE: nonce}
        fresh.pull()
        assert (fresh.root / VERSIONS / "1" / "raw").read_bytes() == b"written under the lease"
        # the killed holder's record of its scope goes once nothing it names is unpublished
        _write(beside, "files/other", b"x")
        beside.push("sync")
        assert not list((cache / ".sync" / "held").glob("*.scope"))
    finally:
        beside.close()
        fresh.close()


def test_a_killed_holders_work_under_a_lease_taken_over_is_taken_back_not_published(tmp_path, killed_holder):
    remote, cache, _nonce = killed_holder
    beside, fresh = _engine(remote, cache, "a"), _engine(remote, tmp_path / "fresh", "fresh")
    try:
        # the next command on this checkout takes the lease over (its holder
        # is gone), which fences the holding in the log, then writes its own
        with beside.lease(LEASE):
            beside.pull()
            _write(beside, f"{VERSIONS}/2/raw", b"the new holder's")
            beside.push("run")
        fresh.pull()
        assert not (fresh.root / VERSIONS / "1" / "raw").exists(), "published under a holding taken over"
        assert (fresh.root / VERSIONS / "2" / "raw").read_bytes() == b"the new holder's"
        kept = list((cache / ".sync" / "lost-lease").rglob("raw"))
        assert [p.read_bytes() for p in kept] == [b"written under the lease"]
        assert not (cache / VERSIONS / "1" / "raw").exists()
    finally:
        beside.close()
        fresh.close()


def test_a_version_another_process_renumbers_stays_under_the_lost_lease(tmp_path):
    """Holder a (this process) wrote version 1 under the lease; peer b breaks
    the lease and publishes its own version 1; a `datastore sync` beside the
    holder, on the same checkout, pulls b's version (renumbering a's to 2)
    and must take a's back, never publish it under its new number."""
    remote = tmp_path / "remote"
    holder, beside = _engine(remote, tmp_path / "a", "a"), _engine(remote, tmp_path / "a", "a")
    b, fresh = _engine(remote, tmp_path / "b", "b"), _engine(remote, tmp_path / "fresh", "fresh")
    try:
        with pytest.raises(Exception) as err:
            with holder.lease(LEASE):
                holder.pull()
                _write(holder, f"{VERSIONS}/1/raw", b"a's version 1")
                assert b.force_release_lease(LEASE)
                with b.lease(LEASE):
                    b.pull()
                    _write(b, f"{VERSIONS}/1/raw", b"b's version 1")
                    b.push("run")
                beside.sync("sync")
                holder.push("run")
        assert getattr(err.value, "code", None) == "lease_lost"
        assert ".sync/lost-lease/" in (err.value.hint or "")  # the holder names where another process put it
        fresh.pull()
        assert sorted(p.relative_to(fresh.root).as_posix() for p in (fresh.root / VERSIONS).rglob("raw")) == \
            [f"{VERSIONS}/1/raw"]
        assert (fresh.root / VERSIONS / "1" / "raw").read_bytes() == b"b's version 1"
        kept = list((tmp_path / "a" / ".sync" / "lost-lease").rglob("raw"))
        assert [p.read_bytes() for p in kept] == [b"a's version 1"]
    finally:
        for e in (holder, beside, b, fresh):
            e.close()


def test_a_holder_whose_work_another_process_published_never_says_nothing_was_published(tmp_path):
    """A `datastore sync` beside the holder publishes version 1 under the
    holder's lease (naming its holding); the lease is then broken and the
    holder's version 2 is taken back. Its lease_lost error names the commit
    that landed, never "nothing written under it was published"."""
    remote = tmp_path / "remote"
    holder, beside = _engine(remote, tmp_path / "a", "a"), _engine(remote, tmp_path / "a", "a")
    b, fresh = _engine(remote, tmp_path / "b", "b"), _engine(remote, tmp_path / "fresh", "fresh")
    try:
        with pytest.raises(Exception) as err:
            with holder.lease(LEASE):
                holder.pull()
                _write(holder, f"{VERSIONS}/1/raw", b"a's version 1")
                beside.sync("sync")  # published, under the holding: the lease was still a's
                _write(holder, f"{VERSIONS}/2/raw", b"a's version 2")
                assert b.force_release_lease(LEASE)
                holder.push("run")
        assert getattr(err.value, "code", None) == "lease_lost"
        assert "nothing written under it was published" not in str(err.value)
        assert "commit 1 made under it was published" in str(err.value)
        fresh.pull()
        assert sorted(p.relative_to(fresh.root).as_posix() for p in (fresh.root / VERSIONS).rglob("raw")) == \
            [f"{VERSIONS}/1/raw"]
    finally:
        for e in (holder, beside, b, fresh):
            e.close()
